"""The scores of the scorer: one recording's (:class:`RecordingScore`) and their sum (:class:`CorpusScore`).

Every part of a score (WER counts, audits, timing, VAD, seams, ...) is listed once in ``PARTS``:
the JSON object, the table row and the pooled corpus row are all read from it, and a corpus
score is the part-by-part sum of recording scores (micro-averaging).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.audits import NegationAudit, OccurrenceAudit, ShortWordAudit
from toolkit.scorer.metrics.figures import Figure, Figures
from toolkit.scorer.metrics.nonspeech import NOTHING_PLACED, NonspeechScore
from toolkit.scorer.metrics.optional import OptionalWords
from toolkit.scorer.metrics.seam_errors import SeamScore
from toolkit.scorer.metrics.timing import TimingScore
from toolkit.scorer.metrics.turns import LostTurns
from toolkit.scorer.metrics.vad import VadScore
from toolkit.scorer.metrics.wer import ErrorCounts
from toolkit.scorer.signature import Signature

if TYPE_CHECKING:  # pandas is imported by the table functions only, so scoring one pair stays quick
    pass


@dataclass(frozen=True)
class Exclusions(Figures):
    """What unresolved spans took out of scoring: their merged duration and the words inside them."""

    FIGURES = (Figure("unresolved_s", "excluded_s", digits=3), Figure("ref_words", None), Figure("hyp_words", None))

    unresolved_s: float = 0.0
    ref_words: int = 0
    hyp_words: int = 0


@dataclass(frozen=True)
class Part:
    """A metric record of a score: its attribute, its JSON object's path and its table columns' prefix."""

    attr: str
    path: tuple[str, ...] = ()
    prefix: str = ""
    columns: bool = True


# The one list of a score's parts, in JSON and column order: RecordingScore.to_json and .flat and
# the pooled CorpusScore row are all read from it and from each record's FIGURES.
PARTS = (
    Part("counts"),
    Part("verbatim", ("verbatim",), "verbatim_"),
    Part("accent_folded", ("accent_folded",), "accent_folded_"),
    Part("optional_words", ("optional_words",), "optional_"),
    Part("negation", ("audits", "negation"), "negation_"),
    Part("names", ("audits", "names"), "names_"),
    Part("numbers", ("audits", "numbers"), "numbers_"),
    Part("short_words", ("audits", "short_words"), "short_"),
    Part("nonspeech", ("nonspeech",), "nonspeech_"),
    Part("timing", ("timing",)),
    Part("excluded", ("excluded",)),
    Part("vad", ("vad",), "vad_"),
    Part("seams", ("seams",)),
    Part("lost_turns", ("lost_turns",)),
    Part("time_constrained", ("time_constrained",), columns=False),  # JSON only
)


class _Parts:
    """What a recording's score and a corpus's sum share: JSON and table row read from ``PARTS``."""

    signature: Signature | None
    unplaced_word_times: int
    counts: ErrorCounts

    @property
    def wer(self) -> float | None:
        return self.counts.wer

    @property
    def cer(self) -> float | None:
        return self.counts.cer

    def _parts_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for part in PARTS:
            record = getattr(self, part.attr)
            if record is None:
                continue
            target = data
            for key in part.path:
                target = target.setdefault(key, {})
            target.update(record.to_json())
        data["reference_word_times_unplaced"] = self.unplaced_word_times
        if "time_constrained" in data and self.signature is not None:
            data["time_constrained"] = {"collar_s": self.signature.fields["collar_s"], **data["time_constrained"]}
        return data

    def _parts_row(self, pooled: bool) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for part in PARTS:
            record = getattr(self, part.attr)
            if record is not None and part.columns:
                row.update(record.columns(part.prefix, pooled))
        row["signature"] = self.signature.text if self.signature is not None else ""
        return row


@dataclass(frozen=True, eq=False)
class RecordingScore(_Parts):
    """Every figure for one recording and arm; ``counts`` follow the primary policy.

    Frozen: a figure added later (lost turns need the baseline) makes a new record with
    ``dataclasses.replace``. ``aligned`` keeps the audit policy's tokens and alignment for
    reports and the review app. Adding records gives a :class:`CorpusScore`, their sum.
    """

    recording_id: str
    arm: str
    policy: str
    counts: ErrorCounts
    verbatim: ErrorCounts
    accent_folded: ErrorCounts
    negation: NegationAudit
    names: OccurrenceAudit
    numbers: OccurrenceAudit
    short_words: ShortWordAudit
    nonspeech: NonspeechScore
    timing: TimingScore
    signature: Signature
    vad: VadScore | None = None
    seams: SeamScore | None = None
    time_constrained: ErrorCounts | None = None
    optional_words: OptionalWords = OptionalWords()
    excluded: Exclusions = Exclusions()
    unplaced_word_times: int = 0
    lost_turns: LostTurns | None = None
    aligned: AlignedTokens | None = field(default=None, repr=False)
    utterance_of_word: np.ndarray | None = field(default=None, repr=False)
    # The primary policy's tokens and alignment, which ``counts`` come from (the same object as
    # ``aligned`` when the primary policy is the audit policy): what ΔWER decomposes into.
    primary_aligned: AlignedTokens | None = field(default=None, repr=False)

    def __add__(self, other: RecordingScore | CorpusScore) -> CorpusScore:
        return CorpusScore() + self + other

    def __radd__(self, other: int | CorpusScore) -> CorpusScore:
        return CorpusScore() + self if other == 0 else other + self

    @property
    def audit_tokens(self) -> AlignedTokens:
        """``aligned``, which every score made by ``score_recording`` keeps (a score read back from JSON does not)."""
        if self.aligned is None:
            raise ValueError(f"{self.recording_id}: the score keeps no alignment")
        return self.aligned

    @property
    def word_utterances(self) -> np.ndarray:
        """``utterance_of_word`` (reference source word -> its utterance), kept with ``aligned``."""
        if self.utterance_of_word is None:
            raise ValueError(f"{self.recording_id}: the score keeps no utterance of each reference word")
        return self.utterance_of_word

    def to_json(self) -> dict[str, Any]:
        """The ``ablate score --format json`` object: every figure of the score, its signature and its context."""
        return {
            "signature": self.signature.text,
            "signature_fields": self.signature.to_json(),
            "recording_id": self.recording_id,
            "arm": self.arm,
            "policy": self.policy,
            **self._parts_json(),
        }

    def flat(self) -> dict[str, Any]:
        """One table row: the figures of every part (rates are recomputed from counts when pooled)."""
        return self._parts_row(pooled=False)


@dataclass(frozen=True, eq=False)
class CorpusScore(_Parts):
    """Recordings scored alike, summed part by part (micro-averaging): ``sum(scores)`` or ``a + b``.

    Every figure is the sum of the recordings' records (see each record's ``+``); rates are
    recomputed from the sums. Results made with different scorer signatures are refused, since
    their counts do not mean the same thing. Optional parts (VAD, seams, lost turns) sum over the
    recordings that have them.
    """

    recordings: tuple[RecordingScore, ...] = ()
    counts: ErrorCounts = ErrorCounts()
    verbatim: ErrorCounts = ErrorCounts()
    accent_folded: ErrorCounts = ErrorCounts()
    optional_words: OptionalWords = OptionalWords()
    negation: NegationAudit = NegationAudit()
    names: OccurrenceAudit = OccurrenceAudit()
    numbers: OccurrenceAudit = OccurrenceAudit()
    short_words: ShortWordAudit = ShortWordAudit()
    nonspeech: NonspeechScore = NOTHING_PLACED
    timing: TimingScore = TimingScore(recordings=0)
    excluded: Exclusions = Exclusions()
    unplaced_word_times: int = 0
    vad: VadScore | None = None
    seams: SeamScore | None = None
    lost_turns: LostTurns | None = None
    time_constrained: ErrorCounts | None = None

    @classmethod
    def of(cls, scores: Iterable[RecordingScore]) -> CorpusScore:
        return sum(scores, cls())  # type: ignore[return-value]

    @property
    def signature(self) -> Signature | None:  # type: ignore[override]
        return self.recordings[0].signature if self.recordings else None

    def __add__(self, other: CorpusScore | RecordingScore) -> CorpusScore:
        if not isinstance(other, (CorpusScore, RecordingScore)):
            return NotImplemented
        if self.signature is not None and other.signature is not None and self.signature.hash != other.signature.hash:
            raise ValueError(
                f"cannot add scores of different scorer signatures ({self.signature.hash} and {other.signature.hash})"
            )
        added = {part.attr: _add(getattr(self, part.attr), getattr(other, part.attr)) for part in PARTS}
        theirs = other.recordings if isinstance(other, CorpusScore) else (other,)
        return CorpusScore(
            self.recordings + theirs, unplaced_word_times=self.unplaced_word_times + other.unplaced_word_times, **added
        )

    def __radd__(self, other: int) -> CorpusScore:
        return self if other == 0 else NotImplemented

    def to_json(self) -> dict[str, Any]:
        """The pooled figures, in the JSON layout of one recording's."""
        return {
            "signature": self.signature.text if self.signature is not None else None,
            "recordings": len(self.recordings),
            **self._parts_json(),
        }

    def flat(self) -> dict[str, Any]:
        """The aggregate table row: the recording row's columns, pooled (per-recording-only figures left out)."""
        return {"recordings": len(self.recordings), **self._parts_row(pooled=True)}


def _add(a: Any, b: Any) -> Any:
    """Sum of two optional records (a part a recording lacks adds nothing)."""
    return b if a is None else a if b is None else a + b
