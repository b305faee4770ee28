"""One definition of "the same word" for words as written, before (or instead of) scoring normalization.

Two written words are the same when their keys are equal: Unicode NFC, case folded, Unicode
punctuation removed (symbols such as "%", "$" and "+" stay: they change what is said; "§" is
punctuation to Unicode), accents kept ("é" and "e" are different words). Used wherever
recognized or transcribed words are matched as written: combining two recognizers, disagreement
spans, seam reconciliation, the reference's timed-word tier against its utterances, and the
audits (which also fold accents, to find lexicon words typed without them).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache


@lru_cache(maxsize=65536)
def word_key(text: str) -> str:
    """The comparison key of a written word ("Não," -> "não"; "R$" stays "r$"); "" for punctuation only."""
    folded = unicodedata.normalize("NFC", text).casefold()
    return "".join(ch for ch in folded if not unicodedata.category(ch).startswith("P")).strip()
