"""Why a word changed: exactly one cause per change, by a fixed precedence, from what the run recorded.

The side that erred is the arm for a regression and the baseline for a fix; the first cause that
applies is the change's:

1. **vad cut**: a VAD decided it: a reference word the erring side lost lies mostly (more than half
   its time) outside that side's speech regions (a VAD stage, or batched decoding of VAD chunks), or
   a word the erring side inserted lies mostly outside the other side's speech regions (that side
   never decoded the audio it was invented in);
2. **seam**: the word lies within the seam margin of a window seam of either system (one of the two
   texts there was reconciled from two windows);
3. **non-speech**: an inserted word inside human-confirmed non-speech;
4. **fallback**: one side decoded the word's time in a segment above the first temperature and
   the other did not;
5. **formatting**: the erring side wrote the reference word in another form only (accents, case,
   hyphens, spaces): a probable normalizer gap, not a recognition difference;
6. a **stage's cause**: the arm has a stage that changes its whole signal and the baseline has not
   (``enhancement``, ``loudness``: the cause each such stage names in the stage registry,
   toolkit/pipeline/stage_registry.py, the first in pipeline order), and nothing above applies;
7. **recognition**: the rest: the recognizer heard differently.

A word is located in time as the scorer locates a seam omission (its own time, else its partner's,
else its matched neighbours' span cut to its utterance); a word that cannot be located cannot be a
VAD, seam, non-speech or fallback change.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from toolkit.explain.changes import ARM, Change
from toolkit.pipeline.stage_registry import all_presence_causes, presence_causes
from toolkit.runs.arm_output_file import ArmOutputFile
from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.intervals import merge, overlap
from toolkit.scorer.metrics.seam_errors import locate_reference_token

VAD_CUT, SEAM, NONSPEECH, FALLBACK, FORMATTING, RECOGNITION = (
    "vad cut",
    "seam",
    "non-speech",
    "fallback",
    "formatting",
    "recognition",
)
CAUSES = (VAD_CUT, SEAM, NONSPEECH, FALLBACK, FORMATTING, *all_presence_causes(), RECOGNITION)
FIRST_TEMPERATURE = "first temperature"


@dataclass(frozen=True)
class SideRecord:
    """What a run recorded for one system on one recording, in original time."""

    speech: np.ndarray | None  # merged regions that reached the recognizer (None: all audio did)
    seams: np.ndarray  # shared window intervals (k, 2)
    hot: np.ndarray  # merged spans of segments decoded above the first temperature
    stage_causes: tuple[str, ...]  # the causes of its stages that change the whole signal, in pipeline order

    @classmethod
    def of(cls, output: ArmOutputFile | None, stages: list[str]) -> SideRecord:
        """From an arm's full output (``outputs/<arm>/<recording>.json``; None for a failed arm) and the names
        of its stages (from the run record)."""
        if output is None:
            return cls(speech=None, seams=np.zeros((0, 2)), hot=merge([]), stage_causes=())
        speech = output.mapped_speech()
        hot = [
            (s["start"], s["end"])
            for s in output.segments
            if s.get("outcome") not in (FIRST_TEMPERATURE, "no fallback (batched)")
            and s.get("start") is not None
            and s.get("end") is not None
        ]
        seams = [(s["start"], s["end"]) for s in output.seams]
        return cls(
            speech=None if speech is None else merge(speech),
            seams=np.array(sorted(set(seams)), dtype=float).reshape(-1, 2),
            hot=merge(hot),
            stage_causes=presence_causes(stages),
        )


@dataclass(frozen=True)
class RecordingContext:
    """Both sides' records, the reference's confirmed non-speech and the seam margin of one recording."""

    arm: SideRecord
    baseline: SideRecord
    nonspeech: np.ndarray
    seam_margin_s: float


def located(change: Change, at: AlignedTokens) -> tuple[float, float] | None:
    """Where a change lies: the inserted word's own time, or the reference word located by the scorer's rule."""
    if change.error == "insertion":
        source = int(at.hyp.source[change.hyp_token])
        start, end = at.hyp.words.start[source], at.hyp.words.end[source]
        return None if np.isnan(start) else (float(start), float(end))
    span = locate_reference_token(at, change.ref_token)
    if span is None or not (np.isfinite(span[0]) and np.isfinite(span[1])):
        return None
    return span


def _inside(regions: np.ndarray, span: tuple[float, float]) -> float:
    """Fraction of ``span`` covered by merged ``regions`` (a point: 1 inside, 0 outside)."""
    lo, hi = span
    if hi - lo <= 0:
        return float(np.any((regions[:, 0] <= lo) & (regions[:, 1] >= lo))) if len(regions) else 0.0
    return float(overlap(regions, np.array([lo]), np.array([hi]))[0]) / (hi - lo)


def _near(intervals: np.ndarray, span: tuple[float, float], margin: float) -> bool:
    return bool(len(intervals)) and bool(
        np.any((intervals[:, 0] - margin <= span[1]) & (intervals[:, 1] + margin >= span[0]))
    )


def _loose(text: str) -> str:
    """A word with accents, case and every non-alphanumeric character folded away."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if ch.isalnum())


def _only_form(change: Change, erred: AlignedTokens) -> bool:
    """A substitution whose written word equals the reference word but for accents, case, hyphens or spaces."""
    if change.error != "substitution":
        return False
    partner = int(erred.ref_partner[change.ref_token])
    return partner >= 0 and _loose(erred.hyp.texts[partner]) == _loose(erred.ref.texts[change.ref_token])


def cause_of(change: Change, arm: AlignedTokens, base: AlignedTokens, context: RecordingContext) -> str:
    """The one cause of ``change`` (the precedence above)."""
    erring, other = (context.arm, context.baseline) if change.erred == ARM else (context.baseline, context.arm)
    at = arm if change.erred == ARM else base
    span = located(change, at)
    if span is not None:
        cut_by = other if change.error == "insertion" else erring  # whose VAD kept the audio out
        if cut_by.speech is not None and _inside(cut_by.speech, span) < 0.5:
            return VAD_CUT
        if _near(erring.seams, span, context.seam_margin_s) or _near(other.seams, span, context.seam_margin_s):
            return SEAM
        if change.error == "insertion" and _inside(context.nonspeech, span) > 0.5:
            return NONSPEECH
        middle = ((span[0] + span[1]) / 2,) * 2
        if (_inside(erring.hot, middle) > 0) != (_inside(other.hot, middle) > 0):
            return FALLBACK
    if _only_form(change, at):
        return FORMATTING
    for cause in context.arm.stage_causes:
        if cause not in context.baseline.stage_causes:
            return cause
    return RECOGNITION
