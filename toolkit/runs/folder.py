"""The layout of a run folder: one self-describing directory of plain, diffable files.

``experiments/<name>/runs/<split>-<config hash>/`` holds ``run.json`` (configuration,
manifest hash, model identities, versions, hardware, timings), per arm and recording the
hypothesis as JSON words and CTM in original time plus the full arm output (VAD segments,
seam reports, disagreements between recognizers, decode units), disagreement lists of
disagreements with the baseline, and later the score tables and reports.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError
from toolkit.core.names import path_name_problem
from toolkit.core.transcripts import Hypothesis
from toolkit.runs.record import RunRecord


@dataclass(frozen=True)
class RunFolder:
    root: Path

    @property
    def record(self) -> Path:
        return self.root / "run.json"

    def _inside(self, kind: str, arm: str, recording: str, suffix: str) -> Path:
        """``<root>/<kind>/<arm>/<recording>.<suffix>``; names that would leave the run folder are refused."""
        for what, name in (("arm", arm), ("recording id", recording)):
            problem = path_name_problem(name, what)
            if problem is not None:
                raise InputError(self.root, problem)
        return self.root / kind / arm / f"{recording}.{suffix}"

    def hypothesis_json(self, arm: str, recording: str) -> Path:
        return self._inside("hypotheses", arm, recording, "json")

    def hypothesis_ctm(self, arm: str, recording: str) -> Path:
        return self._inside("hypotheses", arm, recording, "ctm")

    def arm_output(self, arm: str, recording: str) -> Path:
        return self._inside("outputs", arm, recording, "json")

    def disagreements(self, arm: str, recording: str, suffix: str = "json") -> Path:
        """Where ``arm`` disagrees with the baseline on ``recording`` (JSON or CSV)."""
        return self._inside("disagreements", arm, recording, suffix)

    @property
    def scores(self) -> Path:
        return self.root / "scores"

    def explanation(self, arm: str) -> Path:
        """``arm``'s ΔWER against the baseline by cause, with every changed word (``ablate explain``)."""
        problem = path_name_problem(arm, "arm")
        if problem is not None:
            raise InputError(self.root, problem)
        return self.scores / "explain" / f"{arm}.json"

    @property
    def stability(self) -> Path:
        """The run's results under inaudible dither (``ablate explain --stability``), when measured."""
        return self.scores / "stability.json"

    def read_record(self) -> RunRecord:
        """The checked run record (toolkit.runs.record); a malformed run.json is one line naming it."""
        return RunRecord.read(self.record)

    def read_hypothesis(self, arm: str, recording: str) -> Hypothesis:
        """The stored hypothesis, validated and refused if it is not for ``recording``."""
        from toolkit.formats import read_hypothesis

        return read_hypothesis(self.hypothesis_json(arm, recording), recording)

    def read_arm_output(self, arm: str, recording: str) -> dict[str, Any]:
        return json.loads(self.arm_output(arm, recording).read_text(encoding="utf-8"))


def latest_run(experiment_folder: Path, split: str, arms: Sequence[str] = (), complete: bool = False) -> RunFolder:
    """The most recently finished run of ``split`` in an experiment folder that ran every one of ``arms``
    (and, with ``complete``, had no failed recording); one line when there is none.

    A stability rerun (decoded with inaudible dither, ``ablate explain --stability``) is never the
    split's run: it measures how stable the real run is and lives beside it.
    """
    finished: list[tuple[str, Path]] = []
    without: list[tuple[str, Path]] = []
    for root in sorted(Path(experiment_folder).glob(f"runs/{split}-*")):
        if (root / "run.json").is_file():
            record = RunFolder(root).read_record()
            if record.split != split or not record.finished or record.config.dither:
                continue
            if complete and record.status != "complete":
                continue
            ran = {arm["name"] for arm in record.config.arms}
            (finished if set(arms) <= ran else without).append((record.finished, root))
    if not finished:
        missing = f" with arm(s) {', '.join(arms)}" if arms else ""
        others = f" (the runs without: {', '.join(root.name for _, root in sorted(without))})" if without else ""
        raise InputError(
            Path(experiment_folder),
            f"no finished {split} run{missing} here{others}: run 'ablate run {experiment_folder} --split {split}' "
            "first",
        )
    return RunFolder(max(finished)[1])
