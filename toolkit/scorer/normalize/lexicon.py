"""Reading the versioned lexicon files (equivalences, negations, fillers, and from ptbr-norm-2 on
abbreviations, homophones and Roman-numeral contexts) and hashing them.

The shipped files live in ``toolkit/scorer/normalize/lexicons/`` (package data, so an installed wheel
scores like a checkout; they were in ``annotations/lexicons/`` before); their sha256 goes into
every scoring signature so a changed table can never pass unnoticed. A corpus may add its own
entries in a user lexicon (``toolkit.scorer.normalize.user_lexicon``).
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
LABELS = "labels.tsv"
COLLOQUIAL = "colloquial.tsv"
ORTHOGRAPHY = "orthography.tsv"
UNITS = "units.tsv"
# Each table and the normalizer version that first reads it; a version hashes only the tables it reads.
FILES_SINCE = {
    EQUIVALENCES: FIRST_VERSION,
    NEGATIONS: FIRST_VERSION,
    FILLERS: FIRST_VERSION,
    ABBREVIATIONS: "ptbr-norm-2",
    HOMOPHONES: "ptbr-norm-2",
    ROMAN: "ptbr-norm-2",
    LABELS: "ptbr-norm-3",
    COLLOQUIAL: "ptbr-norm-3",
    ORTHOGRAPHY: "ptbr-norm-3",
    UNITS: "ptbr-norm-3",
}
BEFORE_NUMBER = "before-number"
ROMAN_KINDS = ("noun", "name")
LABEL_KINDS = ("numbered", "lettered")
COLLOQUIAL_KINDS = ("negation", "em-um")
GENDERS = ("m", "f")


def lexicon_files(version: str) -> tuple[str, ...]:
    """The files a policy version reads (and hashes into its signature)."""
    return tuple(name for name, since in FILES_SINCE.items() if at_least(version, since))


@dataclass(frozen=True)
class Abbreviation:
    """The words an abbreviation is read as; ``before_number``: only when a numeral follows."""

    words: tuple[str, ...]
    before_number: bool = False


@dataclass(frozen=True)
class Unit:
    """How a unit written after a numeral is read: for exactly one, for any other amount, and its gender."""

    singular: tuple[str, ...]
    plural: tuple[str, ...]
    feminine: bool = False


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
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)
    colloquial: dict[str, str] = field(default_factory=dict)
    orthography: dict[str, str] = field(default_factory=dict)
    units: dict[str, Unit] = field(default_factory=dict)
    spoken_units: dict[str, tuple[str, ...]] = field(default_factory=dict)


def read_lines(path: Path, lower: bool = True) -> list[tuple[int, str]]:
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


def split_fields(path: Path, number: int, line: str, counts: tuple[int, ...], expected: str) -> list[str]:
    parts = [part.strip() for part in line.split("\t")]
    if len(parts) not in counts or not all(parts):
        raise InputError(path, f"line {number}: expected '{expected}' (fields separated by a TAB), got {line!r}")
    return parts


def _read_table(path: Path) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for number, line in read_lines(path):
        form, words = split_fields(path, number, line, (2,), "form<TAB>canonical")
        if form in table:
            raise InputError(path, f"line {number}: {form!r} is listed twice")
        table[form] = tuple(words.split())
    return table


def _read_abbreviations(path: Path) -> dict[str, Abbreviation]:
    table: dict[str, Abbreviation] = {}
    for number, line in read_lines(path):
        parts = split_fields(path, number, line, (2, 3), f"form<TAB>words[<TAB>{BEFORE_NUMBER}]")
        if len(parts) == 3 and parts[2] != BEFORE_NUMBER:
            raise InputError(path, f"line {number}: the third field may only be {BEFORE_NUMBER!r}, not {parts[2]!r}")
        if parts[0] in table:
            raise InputError(path, f"line {number}: {parts[0]!r} is listed twice")
        table[parts[0]] = Abbreviation(tuple(parts[1].split()), len(parts) == 3)
    return table


def _read_roman(path: Path) -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    for number, line in read_lines(path):
        word, kind, gender = split_fields(path, number, line, (3,), "word<TAB>noun|name<TAB>m|f")
        if kind not in ROMAN_KINDS or gender not in GENDERS or len(word.split()) != 1:
            raise InputError(path, f"line {number}: expected one word, 'noun' or 'name', and 'm' or 'f', got {line!r}")
        if word in table:
            raise InputError(path, f"line {number}: {word!r} is listed twice")
        table[word] = (kind, gender)
    return table


def _read_labels(path: Path) -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    for number, line in read_lines(path):
        word, kind, gender = split_fields(path, number, line, (3,), "word<TAB>numbered|lettered<TAB>m|f")
        if kind not in LABEL_KINDS or gender not in GENDERS or len(word.split()) != 1:
            raise InputError(
                path, f"line {number}: expected one word, 'numbered' or 'lettered', and 'm' or 'f', got {line!r}"
            )
        if word in table:
            raise InputError(path, f"line {number}: {word!r} is listed twice")
        table[word] = (kind, gender)
    return table


def _read_cues(path: Path) -> dict[str, str]:
    table: dict[str, str] = {}
    for number, line in read_lines(path):
        word, kind = split_fields(path, number, line, (2,), "word<TAB>negation|em-um")
        if kind not in COLLOQUIAL_KINDS or len(word.split()) != 1:
            raise InputError(path, f"line {number}: expected one word and 'negation' or 'em-um', got {line!r}")
        if word in table:
            raise InputError(path, f"line {number}: {word!r} is listed twice")
        table[word] = kind
    return table


def _read_spellings(path: Path) -> dict[str, str]:
    table = _read_table(path)
    for form, words in table.items():
        if len(words) != 1:
            raise InputError(
                path, f"{form!r} must map to one word (a spelling of the same word), not {' '.join(words)!r}"
            )
    return {form: words[0] for form, words in table.items()}


def _read_units(path: Path) -> tuple[dict[str, Unit], dict[str, tuple[str, ...]]]:
    units: dict[str, Unit] = {}
    spoken: dict[str, tuple[str, ...]] = {}
    for number, line in read_lines(path, lower=False):  # symbols keep their case: "mg" is no "Mg"
        kind = line.split("\t", 1)[0]
        if kind == "unit":
            _, symbol, singular, plural, gender = split_fields(
                path, number, line, (5,), "unit<TAB>symbol<TAB>singular<TAB>plural<TAB>m|f"
            )
            if gender not in GENDERS or symbol in units:
                raise InputError(path, f"line {number}: expected a new symbol and 'm' or 'f', got {line!r}")
            units[symbol] = Unit(tuple(singular.lower().split()), tuple(plural.lower().split()), gender == "f")
        elif kind == "spoken":
            _, form, said = split_fields(path, number, line, (3,), "spoken<TAB>form<TAB>form said")
            spoken[form.lower()] = tuple(said.lower().split())
        else:
            raise InputError(path, f"line {number}: a line starts with 'unit' or 'spoken' and a TAB, got {line!r}")
    return units, spoken


def _read_words(path: Path) -> tuple[str, ...]:
    return tuple(dict.fromkeys(line for _, line in read_lines(path)))


@lru_cache(maxsize=8)
def load_lexicons(directory: Path = LEXICON_DIR, version: str = POLICY_VERSION) -> Lexicons:
    """Load and hash the lexicons ``version`` uses from ``directory`` (cached: frozen per run)."""
    files = lexicon_files(version)
    later = ABBREVIATIONS in files
    units, spoken_units = _read_units(directory / UNITS) if UNITS in files else ({}, {})
    return Lexicons(
        units=units,
        spoken_units=spoken_units,
        labels=_read_labels(directory / LABELS) if LABELS in files else {},
        colloquial=_read_cues(directory / COLLOQUIAL) if COLLOQUIAL in files else {},
        orthography=_read_spellings(directory / ORTHOGRAPHY) if ORTHOGRAPHY in files else {},
        equivalences=_read_table(directory / EQUIVALENCES),
        negations=_read_words(directory / NEGATIONS),
        fillers=_read_words(directory / FILLERS),
        hashes={name: sha256_file(directory / name) for name in files},
        abbreviations=_read_abbreviations(directory / ABBREVIATIONS) if later else {},
        homophones=_read_table(directory / HOMOPHONES) if later else {},
        roman=_read_roman(directory / ROMAN) if later else {},
    )
