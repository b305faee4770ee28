"""Before the holdout opens: can it detect the WER reduction its gates pre-register?

The tuning split's paired figures (the challenger against the baseline, per recording, from its latest
tuning run) give the noise; the manifest gives the holdout's recordings and minutes (never its words).
toolkit.scorer.power holds the formulas. ``ablate challenger freeze`` prints the result, records it in the
audit log, and refuses a holdout too small to tell its own threshold from no gain unless the user allows it
explicitly, which the verdict then states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from toolkit.core.errors import InputError
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.gates_file import WER_GATE, GatesFile
from toolkit.runs.record import BASELINE
from toolkit.scorer.metrics.wer import ErrorCounts
from toolkit.scorer.power import PairedSpread, PowerPlan, plan_power, power_text

HOLDOUT = "holdout"


@dataclass(frozen=True)
class PowerCheck:
    """A holdout's power plan, or why none could be made (no tuning run with both arms, too few recordings)."""

    plan: PowerPlan | None
    reason: str = ""
    tuning_run: str = ""
    arms_compared: int = 0  # arms besides the baseline on that tuning run: the challenger is the best of these
    no_spread: bool = False  # the arms differ by one rate on every recording: nothing to plan from, or a forgery

    @property
    def underpowered(self) -> bool:
        """When a plan says the holdout cannot detect its own threshold, or the tuning figures show no spread at
        all (real paired decodes always differ somewhere: none says nothing of the holdout's power)."""
        return self.no_spread or (self.plan is not None and self.plan.detects_threshold is False)

    def to_json(self) -> dict[str, Any]:
        if self.plan is None:
            known = {"tuning_run": self.tuning_run, "arms_compared": self.arms_compared} if self.tuning_run else {}
            return {"estimated": False, "reason": self.reason, **known}
        return {
            "estimated": True,
            "tuning_run": self.tuning_run,
            "arms_compared": self.arms_compared,
            **self.plan.to_json(),
        }

    def text(self) -> str:
        return power_text(self.to_json())


def holdout_power(
    experiment: Experiment, arm: str, gates: GatesFile, split: str = HOLDOUT, recordings: int | None = None
) -> PowerCheck:
    """The planned ``split``'s power for ``arm`` against the baseline, from the latest tuning run holding both; with
    ``recordings``, of a split that many recordings long, each as long as the tuning split's on average."""
    from toolkit.corpus.manifest import load_manifest
    from toolkit.runs.folder import latest_run

    manifest = load_manifest(experiment.manifest_path)
    planned = manifest.split(split)
    if not planned and recordings is None:
        return PowerCheck(None, f"the manifest has no {split} recordings")
    try:
        run = latest_run(experiment.folder, "tuning", [BASELINE, arm])
    except InputError:
        return PowerCheck(None, f"no finished tuning run holds both {BASELINE!r} and {arm!r}")
    arms = len([name for name in run.read_record().config.arm_names if name != BASELINE])
    spread = tuning_spread(run.read_score_tables()[0], arm, manifest)
    if spread is None or not math.isfinite(spread.variance_per_word):
        fewer = f"the tuning run {run.root.name} has fewer than two scored recordings"
        return PowerCheck(None, fewer, run.root.name, arms)
    if spread.variance_per_word == 0:
        same = f"{arm!r} and {BASELINE!r} differ by the same rate on every recording of {run.root.name}"
        return PowerCheck(None, f"{same}: no spread to plan from", run.root.name, arms, no_spread=True)
    gate = gates.gates[WER_GATE]
    threshold = gate.threshold if gate.applicable else None
    if recordings is not None:
        minutes = recordings * spread.minutes / spread.recordings
        return PowerCheck(plan_power(spread, recordings, minutes, threshold), "", run.root.name, arms)
    minutes = sum(entry.duration for entry in planned) / 60
    return PowerCheck(plan_power(spread, len(planned), minutes, threshold), "", run.root.name, arms)


def tuning_spread(per_recording: Any, arm: str, manifest: Any) -> PairedSpread | None:
    """The paired spread of ``arm`` against the baseline from a run's per-recording score table."""
    durations = {entry.id: entry.duration for entry in manifest.recordings}
    by_arm = {
        name: {row["recording_id"]: error_counts(row) for _, row in rows.iterrows()}
        for name, rows in per_recording.groupby("arm")
        if name in (BASELINE, arm)
    }
    if set(by_arm) != {BASELINE, arm} or not by_arm[arm] or set(by_arm[arm]) != set(by_arm[BASELINE]):
        return None
    minutes = sum(durations.get(rid, 0.0) for rid in by_arm[arm]) / 60
    return PairedSpread.of(by_arm[BASELINE], by_arm[arm], minutes)


def error_counts(row: Any) -> ErrorCounts:
    """A per-recording score row's word counts."""
    return ErrorCounts(
        ref_words=int(row["ref_words"]),
        hits=int(row["hits"]),
        substitutions=int(row["substitutions"]),
        deletions=int(row["deletions"]),
        insertions=int(row["insertions"]),
    )
