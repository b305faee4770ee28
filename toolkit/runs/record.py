"""The run record (``run.json``): what a run was, on what, and how it went, as one typed, checked record.

Written by the pipeline at the start of a run (``status = "running"``) and again at its end, read
by everything else (evaluation, report, protocol, adjudication, app) through :meth:`RunRecord.read`,
which refuses a malformed file with one line naming the key (its ``measurements`` rows are
:class:`RuntimeRow` records, the machine a :class:`Hardware`, each model load a :class:`ServiceLoad`, the reuse
counts ``Reuse`` records, read strictly by toolkit.core.json_records). Paths are stored relative to the
experiment folder (the run folder's grandparent) when they lie inside it, so an experiment folder
can be moved or copied and still judges its own files, from any working directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolkit.core.config import build_config
from toolkit.core.data_files import read_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json
from toolkit.core.json_records import Absent, optional_key, record_from_json, record_to_json
from toolkit.runs.arm_output_file import Reuse

Status = Literal["running", "complete", "failed"]
STATUSES = ("running", "complete", "failed")


@dataclass(frozen=True)
class ArmFailure:
    """An arm a stage failed for on one recording; ``error`` is the one-line message the run printed."""

    arm: str
    recording: str
    stage: str
    error: str


@dataclass(frozen=True)
class RecordingFailure:
    """A recording the run could not finish at all (its audio or a worker failed): one line, naming both."""

    recording: str
    error: str


@dataclass(frozen=True)
class ManifestUse:
    """The manifest a run was made on: its path (relative to the experiment folder when inside it) and hash."""

    path: str
    sha256: str


@dataclass(frozen=True)
class Hardware:
    """The machine a run ran on (its words depend on the CPU: CTranslate2 picks kernels by instruction set)."""

    platform: str
    python: str
    machine: str
    cpu: str
    cpu_count: int | None
    memory_gb: float | None


@dataclass(frozen=True)
class ServiceLoad:
    """Building one service (a recognizer, a VAD or enhancement stage) in its worker: the load's CPU time, what
    the run waited (``ready_wall_s``: the process, its imports and the load), memory once loaded, the load's wall
    time and the worker's lifetime peak (None when the worker could not say); LOAD_COLUMNS in
    toolkit.report.tables explains each to the report's reader, whose table lists them in this order."""

    cpu_s: float
    ready_wall_s: float
    rss_after_load_mb: float
    wall_s: float
    worker_peak_rss_mb: float | None


@dataclass(frozen=True)
class RuntimeRow:
    """What one arm's result on one recording cost and how it was made (a row of ``measurements``; RUNTIME_COLUMNS
    in toolkit.report.tables says what each figure means). Runs from before a column was measured lack it."""

    arm: str
    recording: str
    duration_s: float
    wall_s: float | None  # None: not measured here, an imported arm's (its result is IMPORTED)
    cpu_s: float | None
    words: int | Absent = optional_key()
    peak_rss_mb: float | None | Absent = optional_key()
    real_time_factor: float | None | Absent = optional_key()
    this_run_wall_s: float | Absent = optional_key()
    this_run_cpu_s: float | Absent = optional_key()
    result: str | Absent = optional_key()  # "computed", "reused" or IMPORTED
    units_computed: int | Absent = optional_key()
    units_reused: int | Absent = optional_key()
    decoded_s: float | Absent = optional_key()
    fallback_share: float | None | Absent = optional_key()
    fallback_dominated: bool | Absent = optional_key()
    temperatures: str | Absent = optional_key()
    unmapped_times: int | Absent = optional_key()
    seams: int | Absent = optional_key()
    disagreements: int | Absent = optional_key()


BASELINE = "baseline"  # the arm name the protocol and every comparison take as the baseline
IMPORTED = "imported"  # the result of an imported arm's row: made elsewhere, so its cost was never measured here


@dataclass(frozen=True)
class RunConfig:
    """Everything a run's results depend on; its hash names the run folder."""

    experiment: str
    primary: str
    recognizers: dict[str, Any]
    arms: tuple[dict[str, Any], ...]
    experiment_file_sha256: str = ""
    time_tolerance_s: float = 0.0
    seed: int = 0
    recognizer_runtime: dict[str, Any] = field(default_factory=dict)
    recognizer_relations: dict[str, Any] = field(default_factory=dict)
    stage_devices: dict[str, Any] = field(default_factory=dict)  # where each VAD pass and enhancer ran
    dither: dict[str, Any] | None = None  # the inaudible dither of a stability rerun (toolkit.audio.dither)

    @property
    def arm_names(self) -> list[str]:
        return [arm["name"] for arm in self.arms]

    @property
    def reference_arm(self) -> str:
        """The arm every other is compared with: ``baseline`` when the run has it, else its first arm."""
        names = self.arm_names
        return BASELINE if BASELINE in names else names[0]

    def arm(self, name: str) -> dict[str, Any] | None:
        return next((arm for arm in self.arms if arm["name"] == name), None)

    def recognizers_of(self, arm: dict[str, Any]) -> list[str]:
        """The recognizers ``arm`` decodes with: a second model in place of the primary or beside it; none for an
        imported arm (its words were made elsewhere)."""
        if "imported" in arm:
            return []
        for component in arm["components"]:
            if component["stage"] == "second_model":
                second = component["config"]["recognizer"]
                return [second] if component["config"]["mode"] == "replace" else [self.primary, second]
        return [self.primary]

    def arms_with(self, stage: str) -> set[str]:
        """Names of the arms that have a stage of this type (``"windows"``, ``"vad"``, ...)."""
        return {arm["name"] for arm in self.arms if any(c["stage"] == stage for c in arm["components"])}


@dataclass(frozen=True)
class RunRecord:
    """``run.json``: the configuration, the manifest, the recordings, the machine, and the outcome."""

    status: Status
    started: str
    split: str
    config: RunConfig
    manifest: ManifestUse
    recordings: tuple[str, ...]
    versions: dict[str, str | None] = field(default_factory=dict)
    hardware: Hardware | None = None
    finished: str | None = None
    measurements: tuple[RuntimeRow, ...] = ()
    computed: int = 0
    reused: int = 0
    failures: tuple[RecordingFailure, ...] = ()
    arm_failures: tuple[ArmFailure, ...] = ()
    reuse: dict[str, Reuse] = field(default_factory=dict)  # per level (arm_results, decode, vad, enhance)
    this_run: dict[str, float] = field(default_factory=dict)  # wall_s and cpu_s, once the run has ended
    recognizer_loads: dict[str, ServiceLoad] = field(default_factory=dict)
    stage_loads: dict[str, ServiceLoad] = field(default_factory=dict)
    parallel: dict[str, Any] | None = None

    def service_loads(self) -> list[tuple[str, ServiceLoad]]:
        """Every model load of the run by its worker's name: the recognizers', then the stages'."""
        return [*self.recognizer_loads.items(), *self.stage_loads.items()]

    def failed_recordings(self, arm: str) -> list[str]:
        return [f.recording for f in self.arm_failures if f.arm == arm]

    def manifest_path(self, run_root: Path) -> Path:
        """The manifest's path: as stored if absolute, else under the experiment folder of ``run_root``."""
        path = Path(self.manifest.path)
        return path if path.is_absolute() else experiment_folder(run_root) / path

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data: lists where the record holds tuples, so it equals what ``run.json`` reads back."""
        data = record_to_json(self)
        return {key: value for key, value in data.items() if value is not None or key == "finished"}

    def write(self, path: Path) -> Path:
        return atomic_write_json(path, self.to_json())

    @classmethod
    def read(cls, path: Path) -> RunRecord:
        """The run record at ``path``; a missing, malformed or incomplete file is one InputError naming it."""
        if not path.is_file():
            raise InputError(path, "no run record here (run the experiment first)")
        try:
            data = read_json(path)
        except InputError as error:
            raise InputError(path, f"not a readable run record: {error.problem}") from None
        return cls.from_json(data, path)

    @classmethod
    def from_json(cls, data: Any, path: Path) -> RunRecord:
        top = _table(data, path, "run.json")
        status = top.get("status")
        if status not in STATUSES:
            raise InputError(path, f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        config = _table(top.get("config"), path, "config")
        return cls(
            status=status,
            started=_text(top, "started", path),
            split=_text(top, "split", path),
            config=_build(RunConfig, {**config, "arms": tuple(_list(config, "arms", path, dict))}, path, "config"),
            manifest=_build(ManifestUse, _table(top.get("manifest"), path, "manifest"), path, "manifest"),
            recordings=tuple(_list(top, "recordings", path, str)),
            measurements=record_from_json(tuple[RuntimeRow, ...], top.get("measurements", []), path, "measurements"),
            failures=tuple(
                _build(RecordingFailure, item, path, "failures")
                for item in _list(top, "failures", path, dict, required=False)
            ),
            arm_failures=tuple(
                _build(ArmFailure, item, path, "arm_failures")
                for item in _list(top, "arm_failures", path, dict, required=False)
            ),
            **{key: record_from_json(_TYPED_PARTS[key], top[key], path, key) for key in _TYPED_PARTS if key in top},
            **({"parallel": top["parallel"]} if "parallel" in top else {}),
        )


# The parts of run.json read strictly as their declared types (toolkit.core.json_records); ``parallel`` stays the
# object the cluster wrote (its workers and, on SLURM, its jobs).
_TYPED_PARTS: dict[str, Any] = {
    "finished": str | None,
    "versions": dict[str, str | None],
    "hardware": Hardware,
    "computed": int,
    "reused": int,
    "reuse": dict[str, Reuse],
    "this_run": dict[str, float],
    "recognizer_loads": dict[str, ServiceLoad],
    "stage_loads": dict[str, ServiceLoad],
}


def experiment_folder(run_root: Path) -> Path:
    """The experiment folder of a run folder (``EXP/runs/<run>``)."""
    return run_root.parent.parent


def stored_path(path: Path, experiment: Path) -> str:
    """How a path is written in a record: relative to the experiment folder when inside it, else absolute."""
    resolved, base = path.resolve(), experiment.resolve()
    if resolved == base or base in resolved.parents:
        return Path(os.path.relpath(resolved, base)).as_posix()
    return resolved.as_posix()


def _table(value: Any, path: Path, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(path, f"{key} must be an object, not {type(value).__name__}")
    return value


def _text(table: dict[str, Any], key: str, path: Path) -> str:
    value = table.get(key)
    if not isinstance(value, str):
        raise InputError(path, f"{key} must be a string, not {value!r}"[:200])
    return value


def _list(table: dict[str, Any], key: str, path: Path, item: type, required: bool = True) -> list[Any]:
    value = table.get(key, None if required else [])
    if not isinstance(value, list) or not all(isinstance(v, item) for v in value):
        raise InputError(path, f"{key} must be a list of {item.__name__}s")
    return value


def _build(cls: type, table: Any, path: Path, key: str) -> Any:
    """A record's part, every key known and of its declared type (toolkit.core.config.build_config)."""
    return build_config(cls, _table(table, path, key), path=path, where=key, require_all=False)
