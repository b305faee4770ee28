"""Reading the versioned lexicon files (equivalences, negations, fillers) and hashing them.

The files live in annotations/lexicons/ of the project; their sha256 goes into every scoring
signature so a changed table can never pass unnoticed.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from toolkit.errors import InputError
from toolkit.store import sha256_file

LEXICON_DIR = Path(__file__).resolve().parents[2] / "annotations" / "lexicons"
EQUIVALENCES = "equivalences.tsv"
NEGATIONS = "negations.txt"
FILLERS = "fillers.txt"
LEXICON_FILES = (EQUIVALENCES, NEGATIONS, FILLERS)


@dataclass(frozen=True)
class Lexicons:
    """The three lexicons as loaded (NFC, lower case), with the sha256 of each file."""

    equivalences: dict[str, tuple[str, ...]]
    negations: tuple[str, ...]
    fillers: tuple[str, ...]
    hashes: dict[str, str]


def _lines(path: Path) -> list[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "lexicon file is missing") from None
    except UnicodeDecodeError:
        raise InputError(path, "lexicon file is not valid UTF-8") from None
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = unicodedata.normalize("NFC", raw.strip())
        if line and not line.startswith("#"):
            out.append((number, line.lower()))
    return out


def _read_equivalences(path: Path) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for number, line in _lines(path):
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].split():
            raise InputError(path, f"line {number}: expected 'form<TAB>canonical'")
        form = parts[0].strip()
        if form in table:
            raise InputError(path, f"line {number}: {form!r} is listed twice")
        table[form] = tuple(parts[1].split())
    return table


def _read_words(path: Path) -> tuple[str, ...]:
    return tuple(dict.fromkeys(line for _, line in _lines(path)))


@lru_cache(maxsize=8)
def load_lexicons(directory: Path = LEXICON_DIR) -> Lexicons:
    """Load and hash the lexicons in ``directory`` (cached: the files are frozen per run)."""
    return Lexicons(
        equivalences=_read_equivalences(directory / EQUIVALENCES),
        negations=_read_words(directory / NEGATIONS),
        fillers=_read_words(directory / FILLERS),
        hashes={name: sha256_file(directory / name) for name in LEXICON_FILES},
    )
