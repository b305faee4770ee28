"""``ablate calibrate``: the error rates of the gates about to be frozen, measured on the tuning split.

- A/A: the baseline against itself re-decoded under inaudible dither (seeds 1..K, the stability machinery's
  reruns, cached like any run) and, when asked, with CTranslate2 forced to another instruction set (another
  machine's kernels, another machine's words): every pair of these decodes is a challenger that is no better.
  Each pair goes through every gate (but the dither gate, which reads reruns of the holdout itself) exactly as
  a holdout would, on ``resamples`` recording-level resamples of the tuning split drawn with replacement at
  the holdout's number of recordings. The false-PROMOTE rate is the share of those trials promoted, with
  Clopper-Pearson's exact one-sided 95% upper bound.
- Planted gains: the same pairs with the re-decoded side's errors thinned (each substitution, deletion and
  insertion corrected with probability ``f``, so the expected WER falls by the effect), so they carry the
  decoder's own noise; the share promoted is the gates' power at that effect. The same again with one new
  negation error planted in a drawn recording where the baseline got a negation right: how often the
  critical-word gates catch it.

The dither gate can only turn a PROMOTE into a RETAIN BASELINE, so leaving it out makes both rates upper
estimates of the whole procedure's. What this does not promise: resamples of a few tuning recordings are not
independent trials, so the bound is on this resampling scheme, not on a new corpus.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.stats import beta

from toolkit.audio.dither import Dither
from toolkit.core.devices import FORCE_VARIABLE
from toolkit.core.errors import InputError
from toolkit.core.json_records import record_from_json, record_to_json
from toolkit.pipeline.engine import finished_run, run_experiment
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.gate_measures import CRITICAL_GATES, Measured, Scores, critical_errors, measure_scores
from toolkit.protocol.gates import PROMOTE, judge, verdict_of
from toolkit.protocol.gates_file import DITHER_GATE, GatesFile
from toolkit.protocol.power_check import holdout_power
from toolkit.runs.folder import RunFolder, latest_run
from toolkit.runs.record import BASELINE
from toolkit.runs.score_files import Calibration, CalibrationCost, PlantedGain
from toolkit.runs.scored import Evaluation
from toolkit.scorer.metrics.turns import lost_turns
from toolkit.scorer.metrics.wer import ErrorCounts
from toolkit.scorer.stats import paired_comparison

RESAMPLES = 200
CALIBRATED = "gates calibrated"  # the audit log event holding a calibration's figures
ISAS = ("GENERIC", "AVX", "AVX2", "AVX512")  # what CT2_FORCE_CPU_ISA accepts on x86
RERUNS = 2
EFFECTS = (0.5, 1.0, 2.0)
NEGATION_GATE = next(gate for gate, audit in CRITICAL_GATES.items() if audit == "negation")


@dataclass(frozen=True)
class _Pair:
    """Two decodes of the baseline on the tuning split: ``first`` plays the baseline, ``second`` the challenger."""

    name: str
    first: Scores
    second: Scores


@dataclass
class _Trials:
    """The tuning split's recordings, the gates and what every trial shares."""

    evaluation: Evaluation  # the tuning run: its manifest and score options
    gates: GatesFile
    size: int
    rng: np.random.Generator
    critical: dict[tuple[str, str], dict[str, Measured]]

    @property
    def replace(self) -> bool:
        """Whether resamples repeat recordings: only when the tuning split holds no more than the holdout's."""
        return len(self.evaluation.scores[BASELINE]) <= self.size

    def draw(self) -> list[str]:
        """A holdout's worth of tuning recordings: distinct ones where the split holds more than that."""
        ids = sorted(self.evaluation.scores[BASELINE])
        return [ids[i] for i in self.rng.choice(len(ids), self.size, replace=self.replace)]

    def critical_of(self, pair: _Pair, rid: str) -> dict[str, Measured]:
        key = (pair.name, rid)
        if key not in self.critical:
            self.critical[key] = critical_errors(self.evaluation, {rid: pair.first[rid]}, {rid: pair.second[rid]})
        return self.critical[key]

    def verdict(
        self, pair: _Pair, drawn: list[str], fraction: float = 0.0, flip_at: int | None = None
    ) -> tuple[str, list[str]]:
        """The verdict of every gate but the dither gate on one resample, and the gates that failed."""
        keys = [f"{rid}~{i}" for i, rid in enumerate(drawn)]
        first = {k: pair.first[rid] for k, rid in zip(keys, drawn, strict=True)}
        second = {k: pair.second[rid] for k, rid in zip(keys, drawn, strict=True)}
        counts = {k: thinned(s.counts, fraction, self.rng) for k, s in second.items()}
        critical = {
            gate: Measured(
                sum(int(self.critical_of(pair, rid)[gate].value or 0) for rid in drawn),
                sum(self.critical_of(pair, rid)[gate].opportunities or 0 for rid in drawn),
            )
            for gate in CRITICAL_GATES
        }
        if flip_at is not None:  # one negation the baseline got right, now wrong: a new error and a substitution
            gate = critical[NEGATION_GATE]
            critical[NEGATION_GATE] = Measured(int(gate.value or 0) + 1, gate.opportunities)
            flipped = counts[keys[flip_at]]
            counts[keys[flip_at]] = (
                replace(flipped, hits=flipped.hits - 1, substitutions=flipped.substitutions + 1)
                if flipped.hits
                else replace(flipped, insertions=flipped.insertions + 1)  # nothing left to flip: an inserted "não"
            )
        options = self.evaluation.options
        comparison = paired_comparison(
            {k: s.counts for k, s in first.items()},
            counts,
            samples=options.bootstrap_samples,
            seed=options.bootstrap_seed,
        )
        results = judge(measure_scores(first, second, comparison, critical, self.gates, None), self.gates)
        failed = [r.name for r in results if r.applicable and r.passed is False and r.name != DITHER_GATE]
        return verdict_of(results, excluding=DITHER_GATE), failed

    def negation_slot(self, pair: _Pair, drawn: list[str]) -> int | None:
        """A drawn recording where the baseline got a negation right (a flip can be planted there), if any."""
        slots = [i for i, rid in enumerate(drawn) if (self.critical_of(pair, rid)[NEGATION_GATE].opportunities or 0)]
        return None if not slots else slots[int(self.rng.integers(len(slots)))]


def _pair(name: str, first: Scores, second: Scores) -> _Pair:
    """Two decodes as baseline and challenger, the challenger's lost turns judged against this baseline (as the
    scorer of a run judges them against the run's baseline)."""
    judged = {
        rid: replace(
            score, lost_turns=lost_turns(first[rid].audit_tokens, score.audit_tokens, first[rid].word_utterances)
        )
        for rid, score in second.items()
    }
    return _Pair(name, first, judged)


def thinned(counts: ErrorCounts, fraction: float, rng: np.random.Generator) -> ErrorCounts:
    """``counts`` with each error corrected with probability ``fraction`` (a corrected substitution or deletion
    becomes a hit; a corrected insertion disappears); the reference words stay."""
    if fraction <= 0:
        return counts
    s, d, i = (int(rng.binomial(n, fraction)) for n in (counts.substitutions, counts.deletions, counts.insertions))
    return replace(
        counts,
        hits=counts.hits + s + d,
        substitutions=counts.substitutions - s,
        deletions=counts.deletions - d,
        insertions=counts.insertions - i,
    )


def upper_bound_95(successes: int, trials: int) -> float:
    """Clopper-Pearson's exact one-sided 95% upper bound on a binomial rate: 1 - 0.05^(1/n) at zero successes."""
    return 1.0 if successes >= trials else float(beta.ppf(0.95, successes + 1, trials - successes))


def calibrate(
    experiment: Experiment,
    arm: str,
    gates: GatesFile,
    *,
    resamples: int = RESAMPLES,
    reruns: int = RERUNS,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    holdout_recordings: int | None = None,
    isa: str | None = None,
) -> Calibration:
    """Measure ``gates``' false-PROMOTE rate and power on the tuning split (module docstring) at the size of the
    manifest's holdout (or ``holdout_recordings``, to plan one), with the baseline also decoded under another
    CTranslate2 instruction set when ``isa`` names one; written to the tuning run's ``scores/calibration.json``
    and returned."""
    from toolkit.corpus.manifest import load_manifest
    from toolkit.evaluate import score_run
    from toolkit.protocol.report_sections import report_sections
    from toolkit.report.run_report import write_reports
    from toolkit.scorer.signature import scorer_signature

    if holdout_recordings is not None and holdout_recordings < 1:
        raise InputError(experiment.path, f"a holdout holds at least one recording, not {holdout_recordings}")
    if isa is not None and isa not in ISAS:
        raise InputError(experiment.path, f"--isa must be one of {', '.join(ISAS)}, not {isa!r}")
    if resamples < 1 or reruns < 1:
        raise InputError(
            experiment.path, f"calibration needs at least one resample and one rerun, not {resamples} and {reruns}"
        )
    if arm == BASELINE:
        raise InputError(experiment.path, f"calibrate the gates for a challenger against {BASELINE!r}, not for itself")
    wall0, cpu0 = time.perf_counter(), time.process_time()
    options = experiment.score_options()
    tuning = latest_run(experiment.folder, "tuning", [BASELINE, arm])
    decoded: list[str] = []
    reruns_run = [_baseline(experiment, Dither(s), None, progress, workers, decoded) for s in range(1, reruns + 1)]
    isa_runs = {} if isa is None else {isa: _baseline(experiment, None, isa, progress, workers, decoded)}
    size = (
        holdout_recordings
        or len(load_manifest(experiment.manifest_path).split("holdout"))
        or len(tuning.read_record().recordings)
    )
    asked: dict[str, Any] = {
        "challenger": arm,
        "gates_sha256": gates.sha256,
        "tuning_run": tuning.root.name,
        "scorer_signature": scorer_signature(options).text,
        "holdout_recordings": size,
        "resamples": resamples,
        "seed": seed,
        "dither_reruns": tuple(r.root.name for r in reruns_run),
        "isa_runs": {name: run.root.name for name, run in isa_runs.items()},
    }
    log = AuditLog(experiment.folder)
    earlier = logged_calibration(log, asked)
    if earlier is not None:  # the same runs, gates, scorer and draws: the figures the log recorded
        tuning.write_calibration(earlier)
        return earlier
    evaluation = score_run(tuning, options)
    others = [*reruns_run, *isa_runs.values()]
    decodes = [evaluation.scores[BASELINE], *(score_run(r, options).scores[BASELINE] for r in others)]
    labels = ["undithered", *(f"dither seed {s}" for s in range(1, reruns + 1)), *(f"forced {i}" for i in isa_runs)]
    pairs = [  # both ways round: which decode plays the baseline must not decide the rate
        _pair(f"{labels[a]} vs {labels[b]}", decodes[a], decodes[b])
        for a in range(len(decodes))
        for b in range(len(decodes))
        if a != b
    ]
    trials = _Trials(evaluation, gates, size, np.random.default_rng(seed), {})
    promotes, failures = (
        0,
        dict.fromkeys((g for g, spec in gates.gates.items() if spec.applicable and g != DITHER_GATE), 0),
    )
    draws = [trials.draw() for _ in range(resamples)]
    for pair in pairs:
        for drawn in draws:
            verdict, failed = trials.verdict(pair, drawn)
            promotes += verdict == PROMOTE
            for name in failed:
                failures[name] += 1
    n = len(pairs) * resamples
    power = tuple(_planted(trials, pairs, draws, effect) for effect in EFFECTS)
    check = holdout_power(experiment, arm, gates, recordings=holdout_recordings)
    calibration = Calibration(
        baseline=BASELINE,
        **asked,
        resampling="with replacement" if trials.replace else "without replacement",
        aa_pairs=tuple(p.name for p in pairs),
        aa_trials=n,
        false_promotes=promotes,
        false_promote_rate=promotes / n,
        false_promote_upper95=upper_bound_95(promotes, n),
        gate_failures={name: count / n for name, count in failures.items()},
        power=power,
        minimum_detectable_effect_points=check.plan.minimum_detectable_effect_points if check.plan else None,
        power_plan=check.to_json(),
        cost=CalibrationCost(
            round(time.perf_counter() - wall0, 3), round(time.process_time() - cpu0, 3), tuple(decoded)
        ),
    )
    tuning.write_calibration(calibration)
    log.append(CALIBRATED, calibration=record_to_json(calibration))  # what a freeze may quote: not the file
    write_reports(evaluation, report_sections(tuning))  # the tuning report opens with it
    return calibration


def _baseline(
    experiment: Experiment, dither: Dither | None, isa: str | None, progress: bool, workers: int, decoded: list[str]
) -> RunFolder:
    """The baseline's tuning run under ``dither`` or with CTranslate2 forced to ``isa`` (its own run folder and
    cache keys: the instruction set is part of both): read back when it finished before, else run (and named)."""
    with _forced_isa(isa):
        folder = finished_run(experiment, "tuning", [BASELINE], dither)
        if folder is None:
            summary = run_experiment(
                experiment, "tuning", [BASELINE], progress=progress, workers=workers, dither=dither
            )
            folder = summary.folder
            decoded.append(folder.root.name)
    return folder


@contextmanager
def _forced_isa(isa: str | None) -> Iterator[None]:
    """``CT2_FORCE_CPU_ISA`` set to ``isa`` for the block (the workers a run starts inherit it); as before after."""
    if isa is None:
        yield
        return
    before = os.environ.get(FORCE_VARIABLE)
    os.environ[FORCE_VARIABLE] = isa
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(FORCE_VARIABLE, None)
        else:
            os.environ[FORCE_VARIABLE] = before


def _planted(trials: _Trials, pairs: Sequence[_Pair], draws: list[list[str]], effect: float) -> PlantedGain:
    """The share of trials promoted when the re-decoded side's errors are thinned by ``effect`` points."""
    promoted = flipped = flips = n = 0
    for pair in pairs:
        counts = [s.counts for s in pair.second.values()]
        wer = sum(c.errors for c in counts) / max(sum(c.ref_words for c in counts), 1)
        if 100 * wer < effect:
            return PlantedGain(effect, None, None, 0)
        fraction = effect / (100 * wer)
        for drawn in draws:
            n += 1
            promoted += trials.verdict(pair, drawn, fraction)[0] == PROMOTE
            slot = trials.negation_slot(pair, drawn)
            if slot is not None:
                flips += 1
                flipped += trials.verdict(pair, drawn, fraction, slot)[0] == PROMOTE
    return PlantedGain(effect, promoted / n, flipped / flips if flips else None, n)


def logged_calibration(log: AuditLog, asked: dict[str, Any]) -> Calibration | None:
    """The latest calibration the audit log recorded whose arm, gates, runs, scorer and draws are ``asked``."""
    for entry in reversed(log.entries()):
        if entry.event == CALIBRATED:
            recorded = entry.other["calibration"]
            if all(_same(recorded.get(key), value) for key, value in asked.items()):
                return record_from_json(Calibration, recorded, log.path)
    return None


def _same(recorded: Any, value: Any) -> bool:
    return recorded == (list(value) if isinstance(value, tuple) else value)


def tuning_calibration(experiment: Experiment, arm: str, gates: GatesFile) -> dict[str, Any] | None:
    """The calibration a freeze of ``arm`` with ``gates`` records: the latest the audit log holds for them, on
    the latest tuning run holding both arms, under this scorer, at the manifest holdout's size (None: none).
    Read from the log, never from ``calibration.json``, which anyone could have edited before the freeze."""
    from toolkit.corpus.manifest import load_manifest
    from toolkit.scorer.signature import scorer_signature

    try:
        tuning = latest_run(experiment.folder, "tuning", [BASELINE, arm])
    except InputError:
        return None
    holdout = len(load_manifest(experiment.manifest_path).split("holdout"))
    for entry in reversed(AuditLog(experiment.folder).entries()):
        recorded = entry.other.get("calibration") if entry.event == CALIBRATED else None
        if (
            recorded
            and recorded["challenger"] == arm
            and recorded["gates_sha256"] == gates.sha256
            and recorded["tuning_run"] == tuning.root.name
            and recorded["scorer_signature"] == scorer_signature(experiment.score_options()).text
            and (not holdout or recorded["holdout_recordings"] == holdout)
        ):
            return dict(recorded)
    return None
