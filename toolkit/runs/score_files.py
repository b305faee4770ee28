"""The JSON files under a run's ``scores/`` as typed records: what every reader of them may rely on.

``<arm>/<recording>.json`` (:class:`RecordingScoreFile`), ``paired.json`` (:data:`PairedFile`),
``explain/<arm>.json`` (:class:`ExplanationFile`), ``gates.json`` (:class:`GateVerdict`) and
``stability.json`` (:class:`Stability`, which ``ablate explain --stability`` builds). Each is written
by one ``RunFolder.write_*`` method and read back by one ``RunFolder.read_*`` method
(toolkit.runs.folder), strictly (toolkit.core.json_records):
a record read from a file writes the same bytes back, and a damaged or missing file is one line
naming it. Figures only tables and the app show are kept, unnamed, in ``figures``.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from toolkit.core.json_records import ABSENT, Absent, optional_key, other_keys

REGRESSION, FIX = "regression", "fix"  # an explained change's kind: the arm got the word wrong, or right
Instance = TypeVar("Instance")


@dataclass(frozen=True)
class WordInstance:
    """An audited word (negation, name, number, short word) or a seam error: where, and what each side wrote."""

    time: float | None
    end: float | None
    reference: str
    hypothesis: str
    kind: str
    figures: dict[str, Any] = other_keys()  # a seam's "located"


@dataclass(frozen=True)
class Listed(Generic[Instance]):
    """An audit's, the seams' or the non-speech figures: counts in ``figures``, and the instances behind them."""

    instances: tuple[Instance, ...]
    figures: dict[str, Any] = other_keys()


@dataclass(frozen=True)
class Audits:
    """The critical-word audits of a recording score (toolkit.scorer.metrics.audits)."""

    negation: Listed[WordInstance]
    names: Listed[WordInstance]
    numbers: Listed[WordInstance]
    short_words: Listed[WordInstance]


@dataclass(frozen=True)
class NonspeechText:
    """Words an arm wrote where the reference marks non-speech."""

    start: float
    end: float
    text: str
    words: int


@dataclass(frozen=True)
class RecordingScoreFile:
    """``scores/<arm>/<recording>.json``: one arm's score of one recording (toolkit.scorer.results.RecordingScore).

    ``figures`` holds the counts, verbatim and accent-folded WER, timing, VAD, lost turns and the rest,
    as ``RecordingScore.to_json`` wrote them; ``seams`` only windowed arms have."""

    signature: str
    signature_fields: dict[str, Any]
    recording_id: str
    arm: str
    policy: str
    wer: float | None
    cer: float | None
    audits: Audits
    nonspeech: Listed[NonspeechText]
    seams: Listed[WordInstance] | Absent = optional_key()
    figures: dict[str, Any] = other_keys()


@dataclass(frozen=True)
class PairedRecording:
    """One recording of a paired comparison: both systems' errors and WERs on its reference words."""

    recording_id: str
    ref_words: int
    baseline_errors: int
    challenger_errors: int
    baseline_wer: float | None
    challenger_wer: float | None
    delta: float | None


@dataclass(frozen=True)
class PairedComparisonFile:
    """One arm against the baseline (toolkit.scorer.stats.PairedComparison.to_json)."""

    recordings: int
    baseline_wer: float
    challenger_wer: float
    delta: float
    ci: tuple[float, ...]
    reduction_ci: tuple[float, ...]
    confidence: float
    bootstrap: dict[str, int]  # samples and seed
    wilcoxon_p: float | None
    sign_test_p: float | None
    warning: str | None
    per_recording: tuple[PairedRecording, ...]


PairedFile = dict[str, PairedComparisonFile]  # ``scores/paired.json``: every arm against the baseline, by arm


@dataclass(frozen=True)
class CauseCounts:
    """Changed words of one cause: the arm's new errors, its fixes, their difference."""

    regressions: int
    fixes: int
    net: int
    points: float | None | Absent = optional_key()  # corpus-wide only: ΔWER points of this cause


@dataclass(frozen=True)
class RecordingCauses:
    """One recording's ΔWER against the baseline and its split by cause."""

    recording: str
    ref_words: int
    baseline_errors: int
    arm_errors: int
    delta_wer_points: float | None
    causes: dict[str, CauseCounts]
    same_position_other_error: int | Absent = optional_key()  # files written before it was counted lack it


@dataclass(frozen=True)
class ExplainedChange:
    """One changed word: regression or fix, its error, its cause, where, and what each side wrote there."""

    recording: str
    kind: str
    error: str
    cause: str
    time: float | None
    end: float | None
    reference: str
    baseline: str
    arm: str
    turn: int  # the reference turn (utterance) it lies in: the unit a recording's interval resamples

    @property
    def delta(self) -> int:
        return 1 if self.kind == REGRESSION else -1

    def line(self) -> str:
        """One line for the terminal; "-" where a side wrote nothing there."""
        time = "-" if self.time is None else f"{self.time:.2f}"
        sides = " | ".join(text or "-" for text in (self.reference, self.baseline, self.arm))
        return f"{self.recording} {time:>8} {self.cause:<12} {self.kind} {self.error}: {sides}"

    def overlaps(self, start: float | None, end: float | None) -> bool:
        """Whether the change lies within ``[start, end]`` (a point when ``end`` is None), to the millisecond."""
        if self.time is None or start is None:
            return False
        last = start if end is None else end
        return self.time <= last + 1e-3 and (self.end if self.end is not None else self.time) >= start - 1e-3


@dataclass(frozen=True)
class ExplanationFile:
    """``scores/explain/<arm>.json``: the arm's ΔWER against ``against`` by cause, with every changed word."""

    arm: str
    against: str
    run: str
    ref_words: int
    delta_errors: int
    delta_wer_points: float | None
    causes: dict[str, CauseCounts]
    recordings: tuple[RecordingCauses, ...]
    instances: tuple[ExplainedChange, ...]
    same_position_other_error: int | Absent = optional_key()  # files written before it was counted lack it


@dataclass(frozen=True)
class GateInstance:
    """One instance behind a gate's value; which keys it has depends on the gate (the others: ``ABSENT``)."""

    recording: str | None | Absent = optional_key()
    time: float | None | Absent = optional_key()
    end: float | None | Absent = optional_key()
    kind: str | None | Absent = optional_key()
    reference: str | None | Absent = optional_key()
    baseline: str | None | Absent = optional_key()
    challenger: str | None | Absent = optional_key()
    cause: str | None | Absent = optional_key()
    detail: str | None | Absent = optional_key()
    figures: dict[str, Any] = other_keys()


@dataclass(frozen=True)
class GateOutcome:
    """One pre-registered gate on the run (toolkit.protocol.gates.GateResult)."""

    name: str
    passed: bool | None
    value: float | None
    threshold: float | None
    applicable: bool
    comparison: str
    measures: str
    opportunities: int | None
    note: str
    reason: str
    instances: tuple[GateInstance, ...]

    @property
    def rule(self) -> str:
        """ "<= 0", ">= 0.5", "|value| <= 0.1": what the gate's value must satisfy (the threshold as written)."""
        return self.comparison.replace("x", "value")


@dataclass(frozen=True)
class SplitSize:
    """How much the verdict rests on: recordings, minutes and reference words of the split."""

    recordings: int
    minutes: float
    reference_words: int


@dataclass(frozen=True)
class GateVerdict:
    """``scores/gates.json``: the verdict of ``ablate gate`` on one split (toolkit.protocol.gates.GateReport);
    the holdout's holds ``challenge``, the challenge split's verdict (None when there is none)."""

    verdict: str
    gates: tuple[GateOutcome, ...]
    caveat: str
    holdout: SplitSize
    signature: str
    split: str
    baseline: str
    challenger: str
    challenge: GateVerdict | None | Absent = optional_key()
    openings: str | Absent = optional_key()  # how many openings of this test content are known, and where
    # the freeze's power plan and calibration (toolkit.protocol.planning), quoted from the audit log
    planning: dict[str, Any] | Absent = optional_key()
    minimum_detectable_effect_points: float | None | Absent = optional_key()


@dataclass(frozen=True)
class DitherSetting:
    """The dither of the reruns: its kind, level and one seed per rerun."""

    kind: str
    level_dbfs: float
    seeds: tuple[int, ...]


@dataclass(frozen=True)
class ArmStability:
    """One arm over the undithered run and its dithered reruns (rates as fractions): ``delta`` is None for
    the baseline, ``directions`` the undithered run's first; spreads, SDs and ``flips`` follow (:meth:`measured`)."""

    arm: str
    wer: float
    rerun_wers: tuple[float, ...]
    wer_spread: float
    wer_sd: float | None
    delta: float | None
    rerun_deltas: tuple[float, ...]
    delta_spread: float | None
    delta_sd: float | None
    ci_low: float | None  # the undithered run's paired bootstrap interval of ΔWER
    ci_high: float | None
    directions: tuple[str, ...]
    flips: bool  # the direction against the baseline changed in a rerun

    @classmethod
    def measured(
        cls,
        arm: str,
        wer: float,
        rerun_wers: tuple[float, ...],
        delta: float | None = None,
        rerun_deltas: tuple[float, ...] = (),
        interval: tuple[float | None, float | None] = (None, None),
        directions: tuple[str, ...] = (),
    ) -> ArmStability:
        wer_spread, wer_sd = _spread(wer, rerun_wers), _sd(rerun_wers)
        delta_spread = None if delta is None else _spread(delta, rerun_deltas)
        delta_figures = (delta, rerun_deltas, delta_spread, _sd(rerun_deltas), *interval)
        return cls(arm, wer, rerun_wers, wer_spread, wer_sd, *delta_figures, directions, len(set(directions)) > 1)


@dataclass(frozen=True)
class StabilityCheck:
    """The check's own figures: when it ran, its wall time (runs made, scoring), and the run folders it had
    to make or finish (each one's ``run.json`` describes that run); every other run was only read."""

    started: str
    finished: str
    wall_s: float
    made: tuple[str, ...]

    def describe(self) -> str:
        """One sentence: when the check ran, what it cost, and which runs it had to make."""
        made = f"runs it made: {', '.join(self.made)}" if self.made else "it made no run, every one had finished before"
        return f"measured {self.finished} in {self.wall_s:.1f} s; {made}"


@dataclass(frozen=True)
class Stability:
    """``scores/stability.json``: every arm of a split under seeded dithers, against its undithered run
    (``run``; ``reruns`` in seed order) and, on a test split, the frozen gates' verdict on each; ``check``
    is the invocation that measured it (absent from files written before it was recorded)."""

    split: str
    baseline: str
    dither: DitherSetting
    run: str
    reruns: tuple[str, ...]
    scorer_signature: str
    arms: tuple[ArmStability, ...]
    flipped: tuple[str, ...]
    verdicts: tuple[str, ...]
    verdict_flips: bool
    check: StabilityCheck | Absent = optional_key()

    @classmethod
    def measured(
        cls,
        split: str,
        baseline: str,
        dither: DitherSetting,
        run: str,
        reruns: tuple[str, ...],
        scorer_signature: str,
        arms: tuple[ArmStability, ...],
        verdicts: tuple[str, ...] = (),
        check: StabilityCheck | Absent = ABSENT,
    ) -> Stability:
        flipped = tuple(a.arm for a in arms if a.flips)
        verdict_flips = len(set(verdicts)) > 1
        figures = (arms, flipped, verdicts, verdict_flips, check)
        return cls(split, baseline, dither, run, reruns, scorer_signature, *figures)


def _spread(value: float, reruns: tuple[float, ...]) -> float:
    """max - min over the undithered value and the reruns."""
    every = (value, *reruns)
    return max(every) - min(every)


def _sd(values: tuple[float, ...]) -> float | None:
    return statistics.stdev(values) if len(values) > 1 else None


@dataclass(frozen=True)
class PlantedGain:
    """Challengers made from re-decoded baseline hypotheses with a known share of their errors corrected: how
    often the gates PROMOTE them, alone and with one new negation error planted too (None: not plantable here,
    e.g. a gain larger than the baseline's WER)."""

    effect_points: float
    probability: float | None
    with_negation_flip: float | None
    trials: int


@dataclass(frozen=True)
class CalibrationCost:
    """What the calibration cost; ``reruns_decoded`` names the dithered baseline runs it decoded (the others
    were finished runs, read back)."""

    wall_s: float
    cpu_s: float
    reruns_decoded: tuple[str, ...]


@dataclass(frozen=True)
class Calibration:
    """``scores/calibration.json`` of a tuning run: the frozen-to-be gates' false-PROMOTE rate on A/A pairs (the
    baseline against itself re-decoded under inaudible dither) and their power on planted gains, over
    recording-level resamples of the tuning split at the holdout's size (toolkit.protocol.calibration); the
    baseline decoded under another CTranslate2 instruction set joins the A/A pairs when one was asked for."""

    challenger: str
    baseline: str
    gates_sha256: str
    tuning_run: str
    scorer_signature: str
    holdout_recordings: int
    resamples: int
    seed: int
    dither_reruns: tuple[str, ...]
    isa_runs: dict[str, str]  # instruction set -> the baseline's tuning run with CTranslate2 forced to it
    resampling: str  # "without replacement", or "with replacement" when the split holds no more than the holdout
    aa_pairs: tuple[str, ...]
    aa_trials: int
    false_promotes: int
    false_promote_rate: float
    false_promote_upper95: float
    gate_failures: dict[str, float]
    power: tuple[PlantedGain, ...]
    minimum_detectable_effect_points: float | None
    power_plan: dict[str, Any]
    cost: CalibrationCost
