"""Does a result survive an inaudible change? The split re-decoded K times with seeded dither.

Each rerun adds TPDF noise 90 dB below full scale (toolkit.audio.dither; level and seeds recorded)
to every recording before any stage, in its own run folder and cache keys. Per arm, the spread of
WER and of ΔWER against the baseline across the reruns is set beside the paired bootstrap interval
of the undithered run: a spread as wide as the interval, or a direction ("better", "worse",
"unclear" by that interval) that changes between reruns, says the conclusion rests on the decoder's
luck, not on the audio. A test split is only re-decoded after the protocol ran it to the end, so
the reruns can never be a peek at held-out data; there the frozen gates' verdict (every gate but the
dither gate, which reads these verdicts) is computed on every rerun too (does the verdict flip?), and
the outcome is chained into the audit log.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from toolkit.audio.dither import DEFAULT_LEVEL_DBFS, Dither
from toolkit.core.errors import InputError
from toolkit.core.json_records import ABSENT, record_to_json
from toolkit.evaluate import evaluate_run, score_run
from toolkit.pipeline.engine import finished_run, run_experiment
from toolkit.pipeline.experiment import Experiment
from toolkit.pipeline.recording import ResultGuard
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.challenger import gates_copy
from toolkit.protocol.dither_evidence import STABILITY_EVENT
from toolkit.protocol.gates import evaluate_gates
from toolkit.protocol.gates_file import MAX_RERUNS, load_gates
from toolkit.protocol.recorded_runs import split_run
from toolkit.protocol.state import TEST_SPLITS, replay, run_hashes, verified_log
from toolkit.protocol.testsplit import evidence_guard
from toolkit.runs.folder import RunFolder
from toolkit.runs.record import BASELINE
from toolkit.runs.score_files import ArmStability, DitherSetting, Stability, StabilityCheck
from toolkit.runs.scored import Evaluation
from toolkit.scorer.metrics.wer import ErrorCounts
from toolkit.scorer.stats import PairedComparison

BETTER, WORSE, UNCLEAR = "better", "worse", "unclear"


def direction(comparison: PairedComparison) -> str:
    """What the paired bootstrap interval of ΔWER says: the arm is better, worse, or it cannot tell."""
    if comparison.ci_high < 0:
        return BETTER
    if comparison.ci_low > 0:
        return WORSE
    return UNCLEAR


def measure_stability(
    experiment: Experiment,
    split: str,
    reruns: int,
    *,
    level_dbfs: float = DEFAULT_LEVEL_DBFS,
    arm_names: list[str] | None = None,
    workers: int = 1,
    progress: bool = False,
) -> Stability:
    """Re-decode ``split`` ``reruns`` times with dither seeds 1..K, score each run, and write the comparison
    to the undithered run's ``scores/stability.json`` (shown in its report; see the module docstring).

    A run that already finished (the split's real run, a rerun of an earlier check) is only read: its
    ``run.json`` keeps describing the invocation that made it; this check's own figures go in ``check``."""
    if not 1 <= reruns <= MAX_RERUNS:
        raise InputError(experiment.path, f"--stability must be between 1 and {MAX_RERUNS} reruns, not {reruns}")
    try:
        dithers = [Dither(seed, level_dbfs) for seed in range(1, reruns + 1)]
    except ValueError as error:
        raise InputError(experiment.path, str(error)) from None
    # A test split's reruns are evidence too: their results are made afresh unless the audit log recorded
    # them, and recorded when made, so files planted in or edited after a rerun's folder are refused.
    runs = _Runs(experiment, split, workers, progress, evidence_guard(experiment, split))
    options = experiment.score_options()
    if split in TEST_SPLITS:  # only once the protocol ran it: its audited run is the undithered one
        folder = split_run(experiment, split)
        arm_names = folder.read_record().config.arm_names
    else:
        if arm_names is not None and BASELINE in experiment.arms and BASELINE not in arm_names:
            arm_names = [BASELINE, *arm_names]  # ΔWER is against the baseline
        folder = runs.folder(arm_names)
    reference = score_run(folder, options)
    names = list(reference.scores)
    evaluations = [evaluate_run(runs.folder(names, dither), options) for dither in dithers]
    verdicts = _verdicts(experiment, [reference, *evaluations]) if split in TEST_SPLITS else ()
    stability = Stability.measured(
        split,
        reference.reference_arm,
        DitherSetting("tpdf", level_dbfs, tuple(d.seed for d in dithers)),
        folder.root.name,
        tuple(e.folder.root.name for e in evaluations),
        reference.signature,
        tuple(_arm(name, reference, evaluations) for name in names),
        verdicts,
        runs.check(),
    )
    folder.write_stability(stability)
    if split in TEST_SPLITS:  # what held-out data said under dither is evidence: chained into the audit log
        AuditLog(experiment.folder).append(
            STABILITY_EVENT,
            split=split,
            run=stability.run,
            reruns=list(stability.reruns),
            dither=record_to_json(stability.dither),
            verdicts=list(verdicts),
            flipped=list(stability.flipped),
            hashes=run_hashes(experiment.folder, [folder, *(e.folder for e in evaluations)]),
        )
    if split not in TEST_SPLITS:  # a test split's report is the protocol's to render (its verdict sections)
        evaluate_run(folder, options)
    return stability


@dataclass
class _Runs:
    """The runs of one split a check reads: one that finished earlier is read back as it is (its run.json
    untouched), any other is run (or resumed) here and counted in ``made``. A test split's reruns always go
    through the protocol's ``guard`` instead (a finished folder is not evidence until its files are checked
    against the audit log), and count as made when they computed a result."""

    experiment: Experiment
    split: str
    workers: int
    progress: bool
    guard: ResultGuard | None = None
    made: list[str] = field(default_factory=list)
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    clock: float = field(default_factory=time.perf_counter)

    def folder(self, arm_names: list[str] | None, dither: Dither | None = None) -> RunFolder:
        folder = finished_run(self.experiment, self.split, arm_names, dither) if self.guard is None else None
        if folder is None:
            summary = run_experiment(
                self.experiment,
                self.split,
                arm_names,
                progress=self.progress,
                workers=self.workers,
                dither=dither,
                guard=self.guard,
            )
            folder = summary.folder
            if self.guard is None or summary.computed:
                self.made.append(folder.root.name)
        return folder

    def check(self) -> StabilityCheck:
        """This check's own figures, so far."""
        finished = datetime.now(UTC).isoformat(timespec="seconds")
        wall_s = round(time.perf_counter() - self.clock, 3)
        return StabilityCheck(self.started.isoformat(timespec="seconds"), finished, wall_s, tuple(self.made))


def _verdicts(experiment: Experiment, evaluations: list[Evaluation]) -> tuple[str, ...]:
    """The frozen challenger's verdict under the frozen gates on each run (the holdout's, then each rerun),
    every gate but the dither gate (which these verdicts are for: toolkit.protocol.gates)."""
    frozen = replay(verified_log(experiment.folder)).challenger
    if frozen is None:
        return ()
    gates = load_gates(gates_copy(experiment))
    return tuple(evaluate_gates(e, frozen["arm"], gates, baseline=BASELINE).others_verdict for e in evaluations)


def _arm(name: str, reference: Evaluation, reruns: list[Evaluation]) -> ArmStability:
    wers = tuple(_wer(e, name) for e in reruns)
    if name == reference.reference_arm:
        return ArmStability.measured(name, _wer(reference, name), wers)
    comparison = reference.comparisons[name]
    return ArmStability.measured(
        name,
        _wer(reference, name),
        wers,
        comparison.delta,
        tuple(e.comparisons[name].delta for e in reruns),
        (comparison.ci_low, comparison.ci_high),
        (direction(comparison), *(direction(e.comparisons[name]) for e in reruns)),
    )


def _wer(evaluation: Evaluation, arm: str) -> float:
    """The arm's WER over the run, its recordings' counts pooled as the scorer pools them."""
    pooled = sum((s.counts for s in evaluation.scores[arm].values()), ErrorCounts())
    return pooled.wer or 0.0


def stability_text(stability: Stability) -> str:
    """The terminal form: per arm WER and ΔWER with their ranges over the reruns, and the directions."""
    dither = stability.dither
    lines = [
        f"{stability.split}: {len(dither.seeds)} reruns with TPDF dither at {dither.level_dbfs:g} dBFS "
        f"(seeds {', '.join(map(str, dither.seeds))}) against run {stability.run}",
        *([stability.check.describe()] if stability.check is not ABSENT else []),
        f"{'arm':24} {'WER':>7} {'reruns: min-max':>16} {'ΔWER':>10} {'reruns: min-max':>16} "
        f"{'95% interval':>16}  directions",
    ]
    for a in stability.arms:
        wers = f"{_pct(min(a.rerun_wers))}-{_pct(max(a.rerun_wers))}"
        if a.delta is None:
            lines.append(f"{a.arm:24} {_pct(a.wer):>7} {wers:>16} {'(baseline)':>10}")
            continue
        deltas = f"{_pts(min(a.rerun_deltas))}-{_pts(max(a.rerun_deltas))}"
        interval = f"[{_pts(a.ci_low)}, {_pts(a.ci_high)}]"
        shown = "/".join(dict.fromkeys(a.directions))
        lines.append(
            f"{a.arm:24} {_pct(a.wer):>7} {wers:>16} {_pts(a.delta):>10} {deltas:>16} {interval:>16}  "
            f"{shown}{'  FLIPS' if a.flips else ''}"
        )
    if stability.verdicts:
        lines.append(
            f"verdict of the frozen gates: {' / '.join(stability.verdicts)}"
            + ("  FLIPS under an inaudible change" if stability.verdict_flips else " (the same in every rerun)")
        )
    lines.append(
        "directions: by the paired bootstrap interval of ΔWER (better: below 0, worse: above 0, unclear: "
        "it holds 0), undithered first; FLIPS: an inaudible change altered what the run says about the arm"
        if stability.arms
        else "no arms"
    )
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


def _pts(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.2f}"
