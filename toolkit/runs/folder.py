"""The layout of a run folder: one self-describing directory of plain, diffable files.

``experiments/<name>/runs/<split>-<config hash>/`` holds ``run.json`` (configuration,
manifest hash, model identities, versions, hardware, timings), per arm and recording the
hypothesis as JSON words and CTM in original time plus the full arm output (VAD segments,
seam reports, disagreements between recognizers, decode units), disagreement lists of
disagreements with the baseline, and later the score tables and reports.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.devices import FORCE_VARIABLE
from toolkit.core.errors import InputError
from toolkit.core.json_records import read_record, record_from_json, write_record
from toolkit.core.names import did_you_mean, path_name_problem, unknown_name
from toolkit.core.transcripts import Hypothesis
from toolkit.runs.arm_output_file import ArmOutputFile
from toolkit.runs.disagreement_file import DisagreementListFile
from toolkit.runs.record import RunRecord
from toolkit.runs.score_files import (
    Calibration,
    ExplanationFile,
    GateVerdict,
    PairedFile,
    RecordingScoreFile,
    Stability,
)
from toolkit.scorer.tables import read_tables, table_paths

if TYPE_CHECKING:  # pandas is imported when the tables are read, so opening a run folder stays quick
    import pandas as pd


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

    def recording_score(self, arm: str, recording: str) -> Path:
        """``arm``'s score of ``recording`` (toolkit.runs.score_files.RecordingScoreFile)."""
        return self._inside("scores", arm, recording, "json")

    @property
    def score_tables(self) -> tuple[Path, Path]:
        """The per-recording and the aggregate CSV table of the run's scores."""
        return table_paths(self.scores)

    @property
    def paired(self) -> Path:
        """Every arm against the baseline: ΔWER, its interval and paired tests."""
        return self.scores / "paired.json"

    @property
    def gates(self) -> Path:
        """The verdict of ``ablate gate`` on this run, once it was asked for."""
        return self.scores / "gates.json"

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

    @property
    def calibration(self) -> Path:
        """The gates' error rates measured on this tuning run (``ablate calibrate``), when measured."""
        return self.scores / "calibration.json"

    def read_record(self) -> RunRecord:
        """The checked run record (toolkit.runs.record); a malformed run.json is one line naming it."""
        return RunRecord.read(self.record)

    def read_hypothesis(self, arm: str, recording: str) -> Hypothesis:
        """The stored hypothesis, validated and refused if it is not for ``recording``."""
        from toolkit.formats import read_hypothesis

        return read_hypothesis(self.hypothesis_json(arm, recording), recording)

    def read_recording_score(self, arm: str, recording: str) -> RecordingScoreFile:
        return read_record(RecordingScoreFile, self.recording_score(arm, recording), "recording score")

    def write_recording_score(self, arm: str, recording: str, data: dict[str, Any]) -> Path:
        """Write ``RecordingScore.to_json()``, refused unless it reads back as a RecordingScoreFile."""
        return _write(self.recording_score(arm, recording), RecordingScoreFile, data)

    def read_score_tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return read_tables(self.scores)

    def read_paired(self) -> PairedFile:
        return read_record(PairedFile, self.paired, "paired comparison file")

    def write_paired(self, data: dict[str, Any]) -> Path:
        return _write(self.paired, PairedFile, data)

    def read_explanation(self, arm: str) -> ExplanationFile:
        return read_record(ExplanationFile, self.explanation(arm), "explanation")

    def write_explanation(self, arm: str, data: dict[str, Any]) -> Path:
        return _write(self.explanation(arm), ExplanationFile, data)

    def read_gates(self) -> GateVerdict:
        return read_record(GateVerdict, self.gates, "gate verdict")

    def write_gates(self, data: dict[str, Any]) -> Path:
        return _write(self.gates, GateVerdict, data)

    def read_stability(self) -> Stability:
        return read_record(Stability, self.stability, "stability record")

    def write_stability(self, stability: Stability) -> Path:
        return write_record(self.stability, stability)

    def read_calibration(self) -> Calibration:
        return read_record(Calibration, self.calibration, "calibration record")

    def write_calibration(self, calibration: Calibration) -> Path:
        return write_record(self.calibration, calibration)

    def read_arm_output(self, arm: str, recording: str) -> ArmOutputFile:
        return read_record(ArmOutputFile, self.arm_output(arm, recording), "arm output")

    def read_disagreement_list(self, arm: str, recording: str) -> DisagreementListFile:
        """Where ``arm`` disagrees with the baseline on ``recording`` (written by the pipeline's
        ``write_disagreements``)."""
        return read_record(DisagreementListFile, self.disagreements(arm, recording), "disagreement list")

    def write_arm_output(self, arm: str, recording: str, data: dict[str, Any]) -> ArmOutputFile:
        """Write an arm's full output (its result's completion mark), refused unless it reads back as an
        ArmOutputFile; the record written."""
        record = record_from_json(ArmOutputFile, data, self.arm_output(arm, recording))
        write_record(self.arm_output(arm, recording), record)
        return record


def _write(path: Path, record_type: Any, data: Any) -> Path:
    """``data`` written to ``path`` through its record, so no file is written that its reader would refuse."""
    return write_record(path, record_from_json(record_type, data, path))


def latest_run(experiment_folder: Path, split: str, arms: Sequence[str] = (), complete: bool = False) -> RunFolder:
    """The most recently finished run of ``split`` in an experiment folder that ran every one of ``arms``
    (and, with ``complete``, had no failed recording); one line when there is none.

    A stability rerun (decoded with inaudible dither, ``ablate explain --stability``) is never the
    split's run: it measures how stable the real run is and lives beside it. Nor is a run decoded with
    CTranslate2 forced to an instruction set this environment does not force now (``ablate calibrate --isa``:
    another machine's words), unless the same one is forced while reading.
    """
    finished: list[tuple[str, Path]] = []
    without: list[tuple[str, Path]] = []
    ran_any: dict[str, None] = {}  # every arm a finished run of the split ran, in run order
    for root in sorted(Path(experiment_folder).glob(f"runs/{split}-*")):
        if (root / "run.json").is_file():
            record = RunFolder(root).read_record()
            if record.split != split or not record.finished or record.config.dither or _forced_elsewhere(record):
                continue
            if complete and record.status != "complete":
                continue
            ran = {arm["name"]: None for arm in record.config.arms}
            ran_any.update(ran)
            (finished if set(arms) <= set(ran) else without).append((record.finished, root))
    if not finished:
        raise InputError(Path(experiment_folder), _no_run(Path(experiment_folder), split, arms, without, list(ran_any)))
    return RunFolder(max(finished)[1])


def _forced_elsewhere(record: RunRecord) -> bool:
    """Whether the run's recognizers ran with CTranslate2 forced to an instruction set not forced here now."""
    forced = {r.get("forced_isa") for r in record.config.recognizer_runtime.values() if isinstance(r, dict)}
    return bool(forced - {None, os.environ.get(FORCE_VARIABLE)})


def _no_run(
    experiment_folder: Path, split: str, arms: Sequence[str], without: list[tuple[str, Path]], ran: list[str]
) -> str:
    """Why no run of ``split`` with ``arms`` is here: a split or arm name close to one that has runs is
    most likely misspelled (and suggested); otherwise the split was not run yet (with those arms)."""
    records = sorted(experiment_folder.glob("runs/*/run.json"))
    with_runs = list(dict.fromkeys(record.parent.name.rsplit("-", 1)[0] for record in records))
    if split not in with_runs and did_you_mean(split, with_runs):
        return unknown_name("split", split, with_runs, "splits with runs")
    misspelled = next((arm for arm in arms if arm not in ran and did_you_mean(arm, ran)), None)
    if misspelled is not None:
        return unknown_name("arm", misspelled, ran, f"arms the {split} runs ran")
    missing = f" with arm(s) {', '.join(arms)}" if arms else ""
    others = f" (the runs without: {', '.join(root.name for _, root in sorted(without))})" if without else ""
    return f"no finished {split} run{missing} here{others}: run 'ablate run {experiment_folder} --split {split}' first"
