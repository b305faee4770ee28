"""Word and character error counts; rates are derived from summed counts (micro-averaging).

WER = (S + D + I) / N over reference tokens. CER is the character edit distance (S = D = I = 1)
between the space-joined token strings, over the reference string's length (spaces count as
characters, as in jiwer.cer). An optional reference word the alignment skipped is a hit, as
``sclite -D`` scores it: it stays in N, and its characters count as correct (the distance is taken
against the reference without it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from toolkit.scorer.align import DELETE, EQUAL, INSERT, SKIP, SUBSTITUTE, Alignment
from toolkit.scorer.metrics.figures import Figure, Figures


@dataclass(frozen=True)
class ErrorCounts(Figures):
    """S/D/I/N and hits for words plus character errors and length; add two to pool recordings."""

    FIGURES = tuple(
        Figure(key)
        for key in (
            "wer",
            "cer",
            "errors",
            "ref_words",
            "hits",
            "substitutions",
            "deletions",
            "insertions",
            "ref_chars",
            "char_errors",
        )
    )

    ref_words: int = 0
    hits: int = 0
    substitutions: int = 0
    deletions: int = 0
    insertions: int = 0
    ref_chars: int = 0
    char_errors: int = 0

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def wer(self) -> float | None:
        """None when there is no reference word to divide by."""
        return self.errors / self.ref_words if self.ref_words else None

    @property
    def cer(self) -> float | None:
        return self.char_errors / self.ref_chars if self.ref_chars else None


def error_counts(ref: Sequence[str], hyp: Sequence[str], alignment: Alignment) -> ErrorCounts:
    """Counts from a word alignment of ``ref``/``hyp`` plus the character distance of the joined strings."""
    ref_text, hyp_text = " ".join(ref), " ".join(hyp)
    skipped = alignment.count(SKIP)
    hits = alignment.count(EQUAL) + skipped
    word_errors = len(alignment.ops) - hits
    # A guess of the character distance lets rapidfuzz use a banded search; the result stays exact.
    hint = max(32, word_errors * (len(ref_text) // max(len(ref), 1) + 1))
    said = ref_text
    if skipped:
        left_out = set(alignment.ref_index[alignment.ops == SKIP].tolist())
        said = " ".join(word for k, word in enumerate(ref) if k not in left_out)
    return ErrorCounts(
        ref_words=len(ref),
        hits=hits,
        substitutions=alignment.count(SUBSTITUTE),
        deletions=alignment.count(DELETE),
        insertions=alignment.count(INSERT),
        ref_chars=len(ref_text),
        char_errors=Levenshtein.distance(said, hyp_text, score_hint=hint),
    )
