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
    said = ref_text
    if skipped:
        left_out = set(alignment.ref_index[alignment.ops == SKIP].tolist())
        said = " ".join(word for k, word in enumerate(ref) if k not in left_out)
    # The word alignment read character by character costs at least the character distance: with it as the
    # cutoff, rapidfuzz searches only a band that wide, and the result stays exact.
    bound = _character_cost(ref, hyp, alignment)
    return ErrorCounts(
        ref_words=len(ref),
        hits=hits,
        substitutions=alignment.count(SUBSTITUTE),
        deletions=alignment.count(DELETE),
        insertions=alignment.count(INSERT),
        ref_chars=len(ref_text),
        char_errors=Levenshtein.distance(said, hyp_text, score_cutoff=bound, score_hint=bound),
    )


def _character_cost(ref: Sequence[str], hyp: Sequence[str], alignment: Alignment) -> int:
    """The character edits the word alignment makes: each substituted pair's distance, each deleted or
    inserted word with its space (a skipped optional word is not in the text compared)."""
    ops, ref_index, hyp_index = alignment.ops, alignment.ref_index, alignment.hyp_index
    substituted = zip(ref_index[ops == SUBSTITUTE].tolist(), hyp_index[ops == SUBSTITUTE].tolist())
    return (
        sum(Levenshtein.distance(ref[i], hyp[j]) for i, j in substituted)
        + sum(len(ref[i]) + 1 for i in ref_index[ops == DELETE].tolist())
        + sum(len(hyp[j]) + 1 for j in hyp_index[ops == INSERT].tolist())
    )
