"""List labels and the numbering of a text's parts, as pt-BR readers say them (ptbr-norm-3, ``list_labels``).

- A list item opened by a Roman numeral and a dash ("I -", "XXI –") or by a lower-case letter and a
  parenthesis ("a)"), at the start of an item (the first word, or after a word ending in ".", ":"
  or ";"), is read as the item's number or letter: "I -" primeiro, "XXI -" vinte e um, "a)" a. An
  inciso cited by its Roman numeral after an article or paragraph number ("arts. 150, II, e 153,
  § 2º, I"; "art. 38, I, IV e V") is read the same way.
- After a word of ``labels.tsv`` that numbers a part ("artigo", "parágrafo", "inciso", ...), the
  number, written or said, takes the legal convention of LC 95/1998, art. 10: ordinal up to nine,
  cardinal from ten. "Art. 5º", "§ 5.", "artigo cinco" and "artigo quinto" all read "artigo
  quinto"; "Art. 10.", "artigo décimo" and "artigo dez" read "artigo dez"; so a reader's choice of
  ordinal or cardinal is never an error, in either direction. Lists go on after "e", "a", "ou" and
  "até" ("incisos I, II e III"). A number followed by "por cento", a currency, centavos, hours or a
  decimal is no label.
- After a word that letters a part ("alínea", "letra"), a letter's name is the letter ("alínea bê"
  is "alínea b", whatever a recognizer made of "cê").
- From ptbr-norm-4 on (``paired_labels``), a list item opened by one of the single-letter numerals L, C, D
  and M ("L - às presidiárias", the fiftieth inciso) is a Roman label too, and no single letter is one where
  it goes on a list lettered in capitals (the item before it, on this line or an earlier one, opened with
  the letter before it: "K -", "L -"; "H -", "I -").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

from toolkit.scorer.normalize.context import roman_value
from toolkit.scorer.normalize.digits import cardinal, ordinal
from toolkit.scorer.normalize.lexicon import Abbreviation
from toolkit.scorer.normalize.numbers import label_number
from toolkit.scorer.normalize.stream import Stream

ROMAN_ITEM = "roman"
LETTER_ITEM = "letter"
DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_ITEM_END = ".:;"
_LETTER = re.compile(r"[a-z]\)")
_LIST_WORDS = frozenset({"e", "a", "ou", "ate"})
_ROMAN_STARTS = frozenset("IVXLCDM")
LAST_ORDINAL = 9
LETTER_NUMERALS = {"L": 50, "C": 100, "D": 500, "M": 1000}  # numerals roman_value refuses alone
LETTER_NAMES = {
    "á": "a",
    "bê": "b",
    "cê": "c",
    "dê": "d",
    "é": "e",
    "efe": "f",
    "gê": "g",
    "agá": "h",
    "jota": "j",
    "cá": "k",
    "ele": "l",
    "eme": "m",
    "ene": "n",
    "ó": "o",
    "pê": "p",
    "quê": "q",
    "erre": "r",
    "esse": "s",
    "tê": "t",
    "vê": "v",
    "dáblio": "w",
    "xis": "x",
    "ípsilon": "y",
    "zê": "z",
}


def legal_reading(value: int, feminine: bool = False) -> tuple[str, ...]:
    """A part's number as the legal convention reads it: ordinal up to nine, cardinal from ten."""
    return ordinal(value, feminine) if value <= LAST_ORDINAL else cardinal(value)


def _item_start(words: Sequence[str], index: int) -> bool:
    if index == 0:
        return True
    return words[index - 1].rstrip(")\"'”’»").endswith(tuple(_ITEM_END))


def _dashed(words: Sequence[str], index: int) -> bool:
    """Whether ``words[index]`` ends with a dash or the next word is only dashes ("XIV -", "XIV–")."""
    following = words[index + 1].strip() if index + 1 < len(words) else ""
    return words[index].strip()[-1:] in DASHES or (following != "" and all(char in DASHES for char in following))


def _opens_dashed_item(words: Sequence[str], index: int) -> bool:
    """Whether ``words[index]`` opens a list item with a capital and a dash ("K -", "XIV –", "K-")."""
    return words[index].strip()[:1].isupper() and _dashed(words, index) and _item_start(words, index)


def last_opener(words: Sequence[str], before: str | None = None) -> str | None:
    """The word opening the last item of ``words`` with its dash off ("K") when that item opens with a capital
    and a dash, else None; ``before`` where no item starts in ``words`` (the last opener of the text before
    them: a list goes on across lines, and anything else that starts an item ends it)."""
    for index in range(len(words) - 1, -1, -1):
        if _item_start(words, index):
            return words[index].strip().rstrip(DASHES) if _opens_dashed_item(words, index) else None
    return before


def group_openers(words: Sequence[str], groups: Sequence[tuple[int, int]]) -> list[str | None]:
    """For each ``[begin, end)`` group of ``words`` in order, :func:`last_opener` of the group just before it:
    the item a group's first label may go on from (the turns of a text are read apart, its lists are not; a
    line that is no item ends a list)."""
    return [None, *(last_opener(words[begin:end]) for begin, end in groups[:-1])] if groups else []


def _lettered_list(words: Sequence[str], index: int, letter: str, before: str | None) -> bool:
    """Whether the list item before ``index`` (in ``words``, else ``before``: the last opener before them)
    opened with the capital letter before ``letter`` ("K -" before "L -", "H -" before "I -"): a list lettered
    in capitals, not numbered."""
    return last_opener(words[:index], before) == chr(ord(letter) - 1)


def _label_value(core: str, words: Sequence[str], index: int, letter_numerals: bool, before: str | None) -> int | None:
    """The value of the Roman numeral ``core`` opening the item at ``index``; with ``letter_numerals``, a
    single L, C, D or M counts too, and no single letter counts where it goes on a list lettered in capitals."""
    value = roman_value(core)
    if not letter_numerals:
        return value
    if len(core) == 1 and _lettered_list(words, index, core, before):
        return None
    return value if value is not None else LETTER_NUMERALS.get(core)


def item_label(
    words: Sequence[str], index: int, letter_numerals: bool = False, before: str | None = None
) -> tuple[str, tuple[str, ...]] | None:
    """(kind, reading) when ``words[index]`` opens a list item ("I -", "XXI –", "a)"), else None;
    ``letter_numerals`` (ptbr-norm-4, ``paired_labels``): a single L, C, D or M may open one, and no single
    letter that goes on a list lettered in capitals does (``before``: :func:`group_openers`)."""
    word = words[index]
    letter = len(word) == 2 and word[1] == ")"
    if not (letter or word[:1] in _ROMAN_STARTS) or not _item_start(words, index):
        return None
    word = unicodedata.normalize("NFC", word).strip()
    if _LETTER.fullmatch(word):
        return LETTER_ITEM, (word[0],)
    if _dashed(words, index):
        core = word[:-1] if word[-1] in DASHES else word
        value = _label_value(core, words, index, letter_numerals, before)
        if value is not None:
            return ROMAN_ITEM, legal_reading(value)
    return None


_CITING = frozenset({"art.", "arts.", "artigo", "artigos", "§", "§§", "parágrafo", "parágrafos"})
_CITATION_REACH = 12


def _citing(words: Sequence[str], index: int) -> bool:
    """Whether an article or a paragraph is cited in the words just before ``index``, in one sentence."""
    for back in range(index - 1, max(-1, index - 1 - _CITATION_REACH), -1):
        word = words[back].strip().lower()
        if word in _CITING:
            return True
        if word.endswith((".", ";", ":")) and word not in _CITING:
            return False
    return False


def _cited(words: Sequence[str], index: int, found: dict[int, tuple[str, tuple[str, ...]]]) -> int | None:
    """The value of a Roman numeral cited after an article or paragraph number ("art. 150, II", "§ 2º, I",
    "art. 38, I, IV e V": an inciso of it), else None."""
    value = roman_value(unicodedata.normalize("NFC", words[index]).strip().rstrip(",;.:"))
    if value is None or index == 0 or not _citing(words, index):
        return None
    previous = words[index - 1].strip()
    if previous.endswith(",") and (previous[0].isdigit() or previous.lower() == "caput," or index - 1 in found):
        return value
    if previous in ("e", "ou") and index - 2 in found and found[index - 2][0] == ROMAN_ITEM:
        return value
    return None


def label_candidates(words: Sequence[str]) -> list[int]:
    """The indices of the words that may be a list label or a cited inciso: opening with a Roman digit, or a
    letter and ")" (:func:`item_label`'s first test)."""
    return [k for k, word in enumerate(words) if word[:1] in _ROMAN_STARTS or word[1:] == ")"]


def may_label(word: str) -> bool:
    """Whether :func:`item_labels` may find a label or a cited inciso in ``word``, whatever its neighbours: a
    letter and ")", or a Roman numeral once a dash or a comma after it is off ("Maria" and "Clara" cannot be)."""
    if not label_candidates((word,)):
        return False
    plain = unicodedata.normalize("NFC", word).strip()
    core = plain[:-1] if plain[-1:] in DASHES else plain
    cited = roman_value(plain.rstrip(",;.:"))
    return any((_LETTER.fullmatch(plain), roman_value(core), cited, core in LETTER_NUMERALS))


def item_labels(
    words: Sequence[str],
    candidates: Sequence[int] | None = None,
    letter_numerals: bool = False,
    before: str | None = None,
) -> dict[int, tuple[str, tuple[str, ...]]]:
    """Every list label of ``words``, and every inciso cited by its Roman numeral after an article or
    paragraph number: index -> (kind, reading). ``candidates``: indices in order that hold every word
    :func:`may_label` (default: :func:`label_candidates`), so that a long text is not read again word by word;
    ``letter_numerals`` and ``before``: as for :func:`item_label`."""
    found: dict[int, tuple[str, tuple[str, ...]]] = {}
    for index in label_candidates(words) if candidates is None else candidates:
        label = item_label(words, index, letter_numerals, before)
        if label is None and words[index][:1] in _ROMAN_STARTS:
            value = _cited(words, index, found)
            label = (ROMAN_ITEM, legal_reading(value)) if value is not None else None
        if label is not None:
            found[index] = label
    return found


def label_form(word: str) -> str:
    """A word as :func:`label_readings` looks it up: NFC, edge punctuation off, lower case."""
    return unicodedata.normalize("NFC", word).strip(".,;:!?\"'“”()").lower()


def part_names(
    forms: Sequence[str], table: dict[str, tuple[str, str]], abbreviations: dict[str, Abbreviation]
) -> list[int]:
    """The indices of the words (their :func:`label_form`) that number or letter a part, or may abbreviate such a
    word: the word after one may be read as the part's number or letter."""
    return [k for k, form in enumerate(forms) if form in table or form in abbreviations or form + "." in abbreviations]


def label_readings(
    words: Sequence[str],
    labels: dict[int, tuple[str, tuple[str, ...]]],
    table: dict[str, tuple[str, str]],
    abbreviations: dict[str, Abbreviation],
    plain_words: dict[str, str],
    named: Sequence[int],
) -> dict[int, tuple[str, ...]]:
    """Source-word index -> words read, for list labels, Roman numerals after a numbering word
    ("Parágrafo IV") and letters named after a lettering word ("alínea bê"); ``plain_words`` caches each
    written word's plain form across calls; ``named``: indices in order that hold every word :func:`part_names`
    finds (only their forms are looked up)."""
    out = {index: reading for index, (_, reading) in labels.items()}

    def plain(index: int) -> str:
        word = words[index]
        return plain_words[word] if word in plain_words else plain_words.setdefault(word, label_form(word))

    before_last = [k for k in named if k < len(words) - 1]
    after_numbering = [before_last[k] + 1 for k in part_names([plain(k) for k in before_last], table, abbreviations)]
    for index in after_numbering:
        previous = plain(index - 1)
        expanded = abbreviations.get(previous) or abbreviations.get(previous + ".")
        entry = table.get(expanded.words[-1] if expanded is not None else previous)
        if entry is None or index in out:
            continue
        if entry[0] == "lettered":
            letter = LETTER_NAMES.get(plain(index))
            if letter is not None:
                out[index] = (letter,)
            continue
        value = roman_value(unicodedata.normalize("NFC", words[index]).strip(".,;:!?\"'“”()"))
        if value is not None:
            out[index] = legal_reading(value, feminine=entry[1] == "f")
    return out


def numbering_words(labels: dict[str, tuple[str, str]], key: Callable[[str], str]) -> dict[str, tuple[str, str]]:
    """The words of ``labels.tsv`` that number a part, by their lookup ``key``, for :func:`legal_numbering`."""
    return {key(word): entry for word, entry in labels.items() if entry[0] == "numbered"}


def _closes_list(words: Sequence[str], last: int, following: int) -> bool:
    """Whether a list of numbers after a numbering word ends after source word ``last`` (the next token's word
    is ``following``): the word ends with a dash, ":", ";" or ".", or a word of punctuation alone lies between
    ("Inciso VIII - décimo terceiro salário": the item's text starts after the dash, it numbers nothing)."""
    if words[last].rstrip()[-1:] in DASHES + ":;.":
        return True
    return any(not any(char.isalnum() for char in words[k]) for k in range(last + 1, min(following, len(words))))


def legal_numbering(
    stream: Stream,
    key: Callable[[str], str],
    folded: dict[str, tuple[str, str]],
    items: frozenset[int] = frozenset(),
    words: Sequence[str] | None = None,
) -> Stream:
    """``stream`` with every number after a numbering word (``folded``: :func:`numbering_words`), and every
    Roman list label (source words ``items``), read in the legal convention as a rule-made number. With the
    source ``words`` (ptbr-norm-4, ``paired_labels``), a dash or a full stop after a number ends the list, and
    after a word naming one part ("inciso", not "incisos") only "e", "ou", "a" or "até" goes on with it."""
    sources = stream.sources
    keys = stream.keys(key)
    if not items and folded.keys().isdisjoint(keys):
        return stream
    out = stream.successor(stream)
    pos = 0
    feminine: bool | None = None  # the gender of the numbering word in force, None: none in force
    plural = False  # whether it names several parts ("incisos"): a list of numbers may follow it
    while pos < len(keys):
        entry = folded.get(keys[pos])
        label = (feminine is not None or sources[pos] in items) and stream.fixed[pos] is None
        found = label_number(keys, pos) if label else None
        if found is not None:
            end, value = found
            mark = "ª" if feminine else "º"
            out.add_group(
                legal_reading(value, feminine=bool(feminine)),
                sources[pos:end],
                f"{value}{mark}" if value <= LAST_ORDINAL else str(value),
            )
            pos = end
            if words is not None:  # one part numbered goes on only after "e", "ou": "inciso VIII, décimo terceiro"
                joined = plural or (pos < len(keys) and keys[pos] in _LIST_WORDS)
                if not joined or _closes_list(words, sources[end - 1], sources[pos] if pos < len(keys) else -1):
                    feminine = None
            continue  # a list may go on: "incisos primeiro segundo e terceiro"
        out.copy_from(stream, pos)
        if entry is not None:
            feminine, plural = entry[1] == "f", keys[pos].endswith("s")
        elif keys[pos] not in _LIST_WORDS or feminine is None:
            feminine = None
        pos += 1
    return out
