"""Readings that depend on the neighbouring words (policy ptbr-norm-2 on).

A Roman numeral in capitals is read only after a word of ``roman.tsv`` ("século XXI" ->
século vinte e um, "Dom Pedro II" -> dom pedro segundo): up to X as an ordinal in that word's
gender, above X as a cardinal. A list keeps the context ("séculos XV, XVI e XVII", "incisos I a
III"). An abbreviation marked ``before-number`` is expanded only before a numeral ("p. 12",
"inc. IV"), and "D." before a name of ``roman.tsv`` becomes dom or dona by the name's gender.
Everything else, including a lone "I", "V", "X", "C", "D" or "M", stays as written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

from toolkit.scorer.normalize.digits import cardinal, ordinal
from toolkit.scorer.normalize.lexicon import Abbreviation, Lexicons

_ROMAN = re.compile(r"M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})")
_ROMAN_VALUES = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}
_SINGLE_LETTER_NUMERALS = frozenset("IVX")  # "C", "D", "L", "M" alone are letters (classe C, tamanho M)
_OPENING = "\"'“”‘’«»([{¿¡"
_CLOSING = "\"'“”‘’«»)]}.,;:!?…"
_LIST_WORDS = frozenset({"e", "a", "ou", "até"})
_LAST_ORDINAL = 10


class WordContext(NamedTuple):
    """What the context pass needs to know about one source word (computed once per spelling)."""

    core: str  # NFC, edge punctuation off, case kept
    key: str  # lower-case core, an unconditional abbreviation replaced by its last word
    roman: int | None  # value when the core is a Roman numeral that may be read in context
    comma_only: bool  # the word ends in a comma and no other punctuation (a list may go on)
    open_end: bool  # nothing follows the word (a context word must touch its numeral)
    cue: bool  # with abbreviations read, the word may be read by the next one ("p." before a numeral, "D.")


def roman_value(text: str) -> int | None:
    """The value of a canonical Roman numeral in capitals (I..MMMCMXCIX), else None.

    A single letter counts only for I, V and X.
    """
    if not text or not text.isascii() or not text.isupper() or not _ROMAN.fullmatch(text):
        return None
    if len(text) == 1 and text not in _SINGLE_LETTER_NUMERALS:
        return None
    values = [_ROMAN_VALUES[char] for char in text]
    return sum(-value if value < following else value for value, following in zip(values, values[1:] + [0]))


def roman_reading(value: int, gender: str) -> tuple[str, ...]:
    """How a Brazilian reader says a Roman numeral in context: ordinal up to ten, then cardinal."""
    return ordinal(value, feminine=gender == "f") if value <= _LAST_ORDINAL else cardinal(value)


def _trim(text: str) -> tuple[str, str]:
    """``text`` (NFC) without opening punctuation, split into its core and its closing punctuation."""
    start, end = 0, len(text)
    while start < end and text[start] in _OPENING:
        start += 1
    while end > start and text[end - 1] in _CLOSING:
        end -= 1
    return text[start:end], text[end:]


def _lookup(core: str, tail: str, lexicons: Lexicons) -> tuple[str, Abbreviation | None]:
    """The table form of a word and its abbreviation entry; an abbreviation keeps its own dot."""
    lower = core.lower()
    if tail.startswith(".") and lower + "." in lexicons.abbreviations:
        return lower + ".", lexicons.abbreviations[lower + "."]
    return lower, lexicons.abbreviations.get(lower)


def abbreviation_words(piece: str, lexicons: Lexicons) -> tuple[str, ...] | None:
    """The words of an abbreviation that needs no context ("art." -> artigo), else None."""
    _, entry = _lookup(*_trim(piece), lexicons)
    return entry.words if entry is not None and not entry.before_number else None


def word_context(word: str, lexicons: Lexicons) -> WordContext:
    """Classify one source word for :func:`context_readings`."""
    core, tail = _trim(unicodedata.normalize("NFC", word.strip()))
    form, entry = _lookup(core, tail, lexicons)
    if form.endswith(".") and entry is not None:
        tail = tail[1:]
    key = entry.words[-1] if entry is not None and not entry.before_number else form
    read_before = lexicons.abbreviations.get(key)
    cue = key == "d" or (read_before is not None and read_before.before_number)
    return WordContext(core, key, roman_value(core), tail == ",", tail == "", cue)


def needs_context(contexts: Sequence[WordContext], roman_numerals: bool, abbreviations: bool) -> bool:
    """Whether some word may be read by its neighbours: a Roman numeral, or an abbreviation read before a
    numeral or a name (:func:`context_readings` reads nothing in words without one)."""
    return any((roman_numerals and c.roman is not None) or (abbreviations and c.cue) for c in contexts)


def _is_numeral(context: WordContext) -> bool:
    return context.roman is not None or context.core[:1].isdigit()


def context_readings(
    words: Sequence[str], lexicons: Lexicons, roman_numerals: bool, abbreviations: bool, cache: dict[str, WordContext]
) -> dict[int, tuple[str, ...]]:
    """Source-word index -> the words it is read as, for the words whose reading needs context."""
    contexts = []
    for word in words:
        context = cache.get(word)
        if context is None:
            context = cache[word] = word_context(word, lexicons)
        contexts.append(context)
    out: dict[int, tuple[str, ...]] = {}
    # A reading needs a Roman numeral, or an abbreviation read before a numeral or a name: most groups have none.
    if not needs_context(contexts, roman_numerals, abbreviations):
        return out
    gender: str | None = None  # the gender a Roman numeral here would take; None: not in context
    listed: str | None = None  # gender of the Roman numeral just read, for "XV e XVI"
    for index, context in enumerate(contexts):
        following = contexts[index + 1] if index + 1 < len(contexts) else None
        if roman_numerals and gender is not None and context.roman is not None:
            out[index] = roman_reading(context.roman, gender)
            listed = gender if context.open_end or context.comma_only else None
            gender = listed if context.comma_only else None
            continue
        key = context.key if abbreviations else context.core.lower()
        entry = lexicons.abbreviations.get(key)
        if (
            abbreviations
            and entry is not None
            and entry.before_number
            and following is not None
            and _is_numeral(following)
        ):
            out[index] = entry.words
            key = entry.words[-1]
        elif abbreviations and key == "d" and following is not None:
            name = lexicons.roman.get(following.core.lower())
            if name is not None and name[0] == "name":
                out[index] = ("dom",) if name[1] == "m" else ("dona",)
        kind_gender = lexicons.roman.get(key)
        if not context.open_end:
            gender = None
        elif kind_gender is not None:
            gender = kind_gender[1]
        elif key in _LIST_WORDS and listed is not None:
            gender = listed
        else:
            gender = None
        listed = None
    return out
