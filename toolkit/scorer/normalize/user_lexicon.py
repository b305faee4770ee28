"""A corpus's own lexicon: its equivalences, names, negations and reading conventions, declared once.

One entry a line, fields separated by a TAB, ``#`` comments::

    equivalence	bora	vamos embora      a form and the words it stands for
    name	Tiradentes                       a name for the name audit
    negation	nadinha                      a negation for the negation audit
    optional	éh                            words a reference may have and a reader may leave out
    optional	inciso	before roman item     words a reader says before a list item "I -", "XXI -"
    optional	alínea	before letter item    ... before a list item "a)"
    optional	dois pontos	for :           ... for a written mark

Optional words (normalizer ptbr-norm-3 and later) follow sclite's "(word)" convention: the
hypothesis may leave them out at no cost, and they match when present. Placed ones are added to
the reference where their place is; the others mark the reference's own words.

Lexicon safety: an entry that makes a negation or a number equal to another word ("equivalence
não sim", "equivalence dois dez", "optional não") would silently remove negation or number
errors, so it is refused unless the line ends with the field ``allow-critical``; every entry so
allowed is listed in the scorer signature. Placed optional words only absorb what a reader adds,
and the number audit counts the reference's numbers, so there only a negation is refused
("optional dois pontos for :" is fine, "optional não for :" is not). A malformed line, or an
equivalence the shipped tables already have, is refused with the file and line number.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.scorer.normalize.chars import fold_accents, split_punctuation
from toolkit.scorer.normalize.lexicon import LEXICON_DIR, load_lexicons, read_lines, split_fields
from toolkit.scorer.normalize.numbers import find_numbers
from toolkit.scorer.normalize.policy import POLICY_VERSION

USER_KINDS = ("equivalence", "name", "negation", "optional")
ALLOW_CRITICAL = "allow-critical"
BEFORE_ROMAN_ITEM = "before roman item"
BEFORE_LETTER_ITEM = "before letter item"
FOR_MARK = "for "
_MARKS = frozenset(":;-–—/")


@dataclass(frozen=True)
class OptionalRule:
    """Words a reference may have, or a reader may add, that the hypothesis may leave out at no cost.

    ``place``: None (the reference's own words), ``before roman item``, ``before letter item`` or
    ``for <mark>`` (the words a reader says for a mark the text writes, such as ":").
    """

    words: tuple[str, ...]
    place: str | None
    line: int


@dataclass(frozen=True)
class UserLexicon:
    """A corpus's own additions and its sha256; ``critical`` lists the entries allowed by ``allow-critical``."""

    path: Path
    equivalences: dict[str, tuple[str, ...]]
    names: tuple[str, ...]
    negations: tuple[str, ...]
    sha256: str
    optional: tuple[OptionalRule, ...] = ()
    critical: tuple[str, ...] = ()


def load_user_lexicon(path: Path | str) -> UserLexicon:
    """Read a user lexicon (see the module's docstring); cached until the file changes."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        raise InputError(path, "lexicon file is missing") from None
    return _load_user_lexicon(path, stat.st_mtime_ns, stat.st_size)


def _key(word: str) -> str:
    parts = split_punctuation(unicodedata.normalize("NFC", word).lower(), split_hyphens=True)
    return fold_accents(parts[0]) if len(parts) == 1 else word.lower()


def critical_words(words: Sequence[str], negations: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The negations and the number values in ``words`` (accent-folded keys; digits count as numbers)."""
    keys = [_key(word) for word in words]
    found_negations = tuple(sorted(key for key in keys if key in negations))
    values = [span.value for span in find_numbers(keys)] + [key for key in keys if any(c.isdigit() for c in key)]
    return found_negations, tuple(sorted(values))


def _parse_optional(path: Path, number: int, parts: list[str]) -> OptionalRule:
    words = tuple(parts[1].lower().split())
    place = " ".join(parts[2].lower().split()) if len(parts) == 3 else None
    if place is not None and place not in (BEFORE_ROMAN_ITEM, BEFORE_LETTER_ITEM):
        mark = place[len(FOR_MARK) :] if place.startswith(FOR_MARK) else ""
        if mark not in _MARKS:
            raise InputError(
                path,
                f"line {number}: the place of optional words is '{BEFORE_ROMAN_ITEM}', '{BEFORE_LETTER_ITEM}' "
                f"or 'for' and one of {' '.join(sorted(_MARKS))}, not {parts[2]!r}",
            )
    return OptionalRule(words, place, number)


@lru_cache(maxsize=8)
def _load_user_lexicon(path: Path, mtime_ns: int, size: int) -> UserLexicon:
    shipped = load_lexicons(LEXICON_DIR, POLICY_VERSION)
    equivalences: dict[str, tuple[str, ...]] = {}
    names: list[str] = []
    negations: list[str] = []
    optional: list[OptionalRule] = []
    unsafe: list[tuple[int, str, bool]] = []  # line, what, allowed
    for number, line in read_lines(path, lower=False):
        kind = line.split("\t", 1)[0].strip()
        parts = [part.strip() for part in line.split("\t")]
        allowed = len(parts) > 2 and parts[-1].lower() == ALLOW_CRITICAL
        if allowed:
            line = "\t".join(parts[:-1])
        if kind == "equivalence":
            _, form, words = split_fields(path, number, line, (3,), "equivalence<TAB>form<TAB>canonical words")
            form = form.lower()
            if len(form.split()) != 1:
                raise InputError(path, f"line {number}: an equivalence form is one word, not {form!r}")
            if form in equivalences:
                raise InputError(path, f"line {number}: {form!r} is listed twice")
            if any(form in table for table in (shipped.equivalences, shipped.homophones, shipped.spoken_units)):
                raise InputError(
                    path, f"line {number}: {form!r} is already in the shipped tables; a user lexicon only adds forms"
                )
            equivalences[form] = tuple(words.lower().split())
            unsafe.append((number, f"equivalence {form} -> {' '.join(equivalences[form])}", allowed))
        elif kind == "name":
            names.append(split_fields(path, number, line, (2,), "name<TAB>the name as written")[1])
        elif kind == "negation":
            word = split_fields(path, number, line, (2,), "negation<TAB>word")[1].lower()
            if len(word.split()) != 1:
                raise InputError(path, f"line {number}: a negation is one word, not {word!r}")
            negations.append(word)
        elif kind == "optional":
            parts = split_fields(path, number, line, (2, 3), "optional<TAB>words[<TAB>place]")
            optional.append(_parse_optional(path, number, parts))
            unsafe.append((number, f"optional {' '.join(optional[-1].words)}", allowed))
        else:
            raise InputError(
                path, f"line {number}: unknown entry {kind!r}; a line starts with {', '.join(USER_KINDS)} and a TAB"
            )
    known_negations = frozenset(_key(word) for word in (*shipped.negations, *negations))
    critical = _checked(path, unsafe, equivalences, optional, known_negations)
    return UserLexicon(
        path,
        equivalences,
        tuple(dict.fromkeys(names)),
        tuple(dict.fromkeys(negations)),
        sha256_file(path),
        tuple(optional),
        critical,
    )


def _checked(
    path: Path,
    entries: list[tuple[int, str, bool]],
    equivalences: dict[str, tuple[str, ...]],
    optional: list[OptionalRule],
    negations: frozenset[str],
) -> tuple[str, ...]:
    """The allowed critical entries; an unallowed one is refused naming its line."""
    rules = {rule.line: rule for rule in optional}
    forms = {f"equivalence {form} -> {' '.join(words)}": (form, words) for form, words in equivalences.items()}
    critical = []
    for number, what, allowed in entries:
        if number in rules:
            before: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
            after = critical_words(rules[number].words, negations)
            if rules[number].place is not None:  # added words absorb an insertion: only a negation is audited there
                after = (after[0], ())
        else:
            form, words = forms[what]
            before, after = critical_words([form], negations), critical_words(words, negations)
        if before == after:
            continue
        if not allowed:
            raise InputError(
                path,
                f"line {number}: '{what}' makes a negation or a number equal to another word, which hides "
                f"negation and number errors; end the line with a TAB and {ALLOW_CRITICAL} to allow it "
                "(the scorer signature then lists it)",
            )
        critical.append(f"line {number}: {what}")
    return tuple(critical)
