"""Reading the versioned lexicon files (equivalences, negations, fillers, and from ptbr-norm-2 on
abbreviations, homophones and Roman-numeral contexts) and hashing them.

The shipped files live in ``toolkit/scorer/normalize/lexicons/`` (package data, so an installed wheel
scores like a checkout; they were in ``annotations/lexicons/`` before); their sha256 goes into
every scoring signature so a changed table can never pass unnoticed. A corpus may add its own
equivalences, names and negations in a user lexicon (:func:`load_user_lexicon`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.scorer.normalize.policy import FIRST_VERSION, POLICY_VERSION, at_least

LEXICON_DIR = Path(__file__).resolve().parent / "lexicons"
EQUIVALENCES = "equivalences.tsv"
NEGATIONS = "negations.txt"
FILLERS = "fillers.txt"
ABBREVIATIONS = "abbreviations.tsv"
HOMOPHONES = "homophones.tsv"
ROMAN = "roman.tsv"
# Each table and the normalizer version that first reads it; a version hashes only the tables it reads.
FILES_SINCE = {
    EQUIVALENCES: FIRST_VERSION,
    NEGATIONS: FIRST_VERSION,
    FILLERS: FIRST_VERSION,
    ABBREVIATIONS: "ptbr-norm-2",
    HOMOPHONES: "ptbr-norm-2",
    ROMAN: "ptbr-norm-2",
}
BEFORE_NUMBER = "before-number"
ROMAN_KINDS = ("noun", "name")
GENDERS = ("m", "f")
USER_KINDS = ("equivalence", "name", "negation")


def lexicon_files(version: str) -> tuple[str, ...]:
    """The files a policy version reads (and hashes into its signature)."""
    return tuple(name for name, since in FILES_SINCE.items() if at_least(version, since))


@dataclass(frozen=True)
class Abbreviation:
    """The words an abbreviation is read as; ``before_number``: only when a numeral follows."""

    words: tuple[str, ...]
    before_number: bool = False


@dataclass(frozen=True)
class Lexicons:
    """The lexicons of one policy version as loaded (NFC, lower case), with each file's sha256."""

    equivalences: dict[str, tuple[str, ...]]
    negations: tuple[str, ...]
    fillers: tuple[str, ...]
    hashes: dict[str, str]
    abbreviations: dict[str, Abbreviation] = field(default_factory=dict)
    homophones: dict[str, tuple[str, ...]] = field(default_factory=dict)
    roman: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class UserLexicon:
    """A corpus's own additions: equivalences (form -> words), names and negations, and its sha256."""

    path: Path
    equivalences: dict[str, tuple[str, ...]]
    names: tuple[str, ...]
    negations: tuple[str, ...]
    sha256: str


def _lines(path: Path, lower: bool = True) -> list[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "lexicon file is missing") from None
    except IsADirectoryError:
        raise InputError(path, "lexicon file is a folder") from None
    except UnicodeDecodeError:
        raise InputError(path, "lexicon file is not valid UTF-8") from None
    out = []
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        line = unicodedata.normalize("NFC", raw.strip())
        if line and not line.startswith("#"):
            out.append((number, line.lower() if lower else line))
    return out


def _fields(path: Path, number: int, line: str, counts: tuple[int, ...], expected: str) -> list[str]:
    parts = [part.strip() for part in line.split("\t")]
    if len(parts) not in counts or not all(parts):
        raise InputError(path, f"line {number}: expected '{expected}' (fields separated by a TAB), got {line!r}")
    return parts


def _read_table(path: Path) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for number, line in _lines(path):
        form, words = _fields(path, number, line, (2,), "form<TAB>canonical")
        if form in table:
            raise InputError(path, f"line {number}: {form!r} is listed twice")
        table[form] = tuple(words.split())
    return table


def _read_abbreviations(path: Path) -> dict[str, Abbreviation]:
    table: dict[str, Abbreviation] = {}
    for number, line in _lines(path):
        parts = _fields(path, number, line, (2, 3), f"form<TAB>words[<TAB>{BEFORE_NUMBER}]")
        if len(parts) == 3 and parts[2] != BEFORE_NUMBER:
            raise InputError(path, f"line {number}: the third field may only be {BEFORE_NUMBER!r}, not {parts[2]!r}")
        if parts[0] in table:
            raise InputError(path, f"line {number}: {parts[0]!r} is listed twice")
        table[parts[0]] = Abbreviation(tuple(parts[1].split()), len(parts) == 3)
    return table


def _read_roman(path: Path) -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    for number, line in _lines(path):
        word, kind, gender = _fields(path, number, line, (3,), "word<TAB>noun|name<TAB>m|f")
        if kind not in ROMAN_KINDS or gender not in GENDERS or len(word.split()) != 1:
            raise InputError(path, f"line {number}: expected one word, 'noun' or 'name', and 'm' or 'f', got {line!r}")
        if word in table:
            raise InputError(path, f"line {number}: {word!r} is listed twice")
        table[word] = (kind, gender)
    return table


def _read_words(path: Path) -> tuple[str, ...]:
    return tuple(dict.fromkeys(line for _, line in _lines(path)))


@lru_cache(maxsize=8)
def load_lexicons(directory: Path = LEXICON_DIR, version: str = POLICY_VERSION) -> Lexicons:
    """Load and hash the lexicons ``version`` uses from ``directory`` (cached: frozen per run)."""
    files = lexicon_files(version)
    later = ABBREVIATIONS in files
    return Lexicons(
        equivalences=_read_table(directory / EQUIVALENCES),
        negations=_read_words(directory / NEGATIONS),
        fillers=_read_words(directory / FILLERS),
        hashes={name: sha256_file(directory / name) for name in files},
        abbreviations=_read_abbreviations(directory / ABBREVIATIONS) if later else {},
        homophones=_read_table(directory / HOMOPHONES) if later else {},
        roman=_read_roman(directory / ROMAN) if later else {},
    )


def load_user_lexicon(path: Path | str) -> UserLexicon:
    """Read a user lexicon: ``equivalence<TAB>form<TAB>words``, ``name<TAB>Name`` or
    ``negation<TAB>word`` per line, ``#`` comments; any other line, or an equivalence the shipped
    tables already have, is refused with its line number. Cached until the file changes."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        raise InputError(path, "lexicon file is missing") from None
    return _load_user_lexicon(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _load_user_lexicon(path: Path, mtime_ns: int, size: int) -> UserLexicon:
    shipped = load_lexicons(LEXICON_DIR, POLICY_VERSION)
    equivalences: dict[str, tuple[str, ...]] = {}
    names: list[str] = []
    negations: list[str] = []
    for number, line in _lines(path, lower=False):
        kind = line.split("\t", 1)[0].strip()
        if kind == "equivalence":
            _, form, words = _fields(path, number, line, (3,), "equivalence<TAB>form<TAB>canonical words")
            form = form.lower()
            if len(form.split()) != 1:
                raise InputError(path, f"line {number}: an equivalence form is one word, not {form!r}")
            if form in equivalences:
                raise InputError(path, f"line {number}: {form!r} is listed twice")
            if form in shipped.equivalences or form in shipped.homophones:
                raise InputError(
                    path, f"line {number}: {form!r} is already in the shipped tables; a user lexicon only adds forms"
                )
            equivalences[form] = tuple(words.lower().split())
        elif kind == "name":
            names.append(_fields(path, number, line, (2,), "name<TAB>the name as written")[1])
        elif kind == "negation":
            word = _fields(path, number, line, (2,), "negation<TAB>word")[1].lower()
            if len(word.split()) != 1:
                raise InputError(path, f"line {number}: a negation is one word, not {word!r}")
            negations.append(word)
        else:
            raise InputError(
                path, f"line {number}: unknown entry {kind!r}; a line starts with {', '.join(USER_KINDS)} and a TAB"
            )
    return UserLexicon(
        path, equivalences, tuple(dict.fromkeys(names)), tuple(dict.fromkeys(negations)), sha256_file(path)
    )
