"""The challenger and gates a command before the freeze works with when none is named (calibrate, plan --power)."""

from __future__ import annotations

from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.challenger import gates_copy
from toolkit.protocol.gates_file import TEMPLATE
from toolkit.protocol.state import replay, verified_log
from toolkit.runs.folder import latest_run
from toolkit.runs.record import BASELINE


def chosen_arm(experiment: Experiment) -> str:
    """The frozen challenger, else the arm with the lowest WER on the latest tuning run (ties by name)."""
    frozen = replay(verified_log(experiment.folder)).challenger
    if frozen is not None:
        return str(frozen["arm"])
    run = latest_run(experiment.folder, "tuning", [BASELINE])
    _, aggregate = run.read_score_tables()
    overall = aggregate[(aggregate["stratum"] == "all") & (aggregate["arm"] != BASELINE)].dropna(subset=["wer"])
    if overall.empty:
        raise InputError(run.root, "the tuning run holds no arm besides the baseline to calibrate the gates for")
    return str(min(zip(overall["wer"], overall["arm"], strict=True))[1])


def chosen_gates(experiment: Experiment) -> Path:
    """The frozen gates copy when a challenger was frozen, else the template."""
    copy = gates_copy(experiment)
    return copy if copy.is_file() else TEMPLATE
