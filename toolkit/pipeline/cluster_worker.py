"""What runs in each Dask worker process of a run (toolkit.pipeline.cluster sends it there): the run's arms and
recognizers, built once per run and task thread and checked against the coordinator's (the same experiment,
model files, CPU code and devices, or the words would depend on the machine), one task per recording, and
the release of the run's services with what loading them cost."""

from __future__ import annotations

import multiprocessing
import os
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.audio.dither import Dither
from toolkit.core.errors import InputError, ToolkitError
from toolkit.pipeline.measure import lifetime_peak_rss_mb
from toolkit.pipeline.recording import RecordingResult, run_recording

# Worker processes must be able to start the model services (child processes): Dask's nanny
# makes its workers daemonic unless told otherwise, and daemonic processes cannot have children.
DAEMON_FIX = "DASK_DISTRIBUTED__WORKER__DAEMON=False"
# Variables Dask's nanny sets in its workers (``distributed.nanny.pre-spawn-environ``). The
# thread counts change Whisper's word confidences in the last digits (OMP_NUM_THREADS=1 against
# unset, measured on LapsBM clips) and the malloc trim threshold costs decoding CPU time, so the
# services a worker starts get the coordinator's values instead: the same results and costs.
NANNY_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")


def service_environ() -> dict[str, str | None]:
    """This process's values of NANNY_VARIABLES (None: unset)."""
    return {name: os.environ.get(name) for name in NANNY_VARIABLES}


@dataclass(frozen=True)
class WorkPlan:
    """What a worker needs to run recordings of one run: the experiment file (on a shared path),
    the arms, the run folder, and the coordinator's recognizer identities and arms to check against."""

    experiment_path: Path
    arms: tuple[str, ...]
    folder: Path
    identities: dict[str, Any]
    runtimes: dict[str, Any]  # what CTranslate2 runs on the coordinator's CPU (toolkit.asr.cpu)
    arms_json: list[dict[str, Any]]
    recognizers: tuple[str, ...]  # those with work left: their CPU code is checked on each worker
    environ: dict[str, str | None]  # the coordinator's NANNY_VARIABLES, for the services
    guard: Any = None  # which stored results may be reused (toolkit.pipeline.recording.ResultGuard)
    dither: Dither | None = None  # added to each recording before any stage (a stability rerun)
    stage_devices: dict[str, Any] = field(default_factory=dict)  # where each VAD pass and enhancer runs
    # What else a worker reads or writes by path, as (what, path): the run and cache folders, the model
    # files; each is checked to resolve on the worker before a recording starts there (so is its audio).
    shared_paths: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        from toolkit.core.files import config_hash

        return config_hash(
            [
                str(self.experiment_path),
                self.arms,
                str(self.folder),
                self.identities,
                self.runtimes,
                self.arms_json,
                self.dither and self.dither.to_json(),
            ]
        )


@dataclass
class _Loaded:
    pool: Any
    runner: Any
    arms: list[Any]
    models_sha256: dict[str, str] = field(default_factory=dict)  # each recognizer's weights as hashed here

    def close(self) -> None:
        self.pool.close()
        self.runner.stages.close()

    def kill(self) -> None:
        self.pool.kill()
        self.runner.stages.kill()


# This worker process's loaded runs, kept across tasks: one per run and task thread, since a
# service answers one request at a time (a worker with --nthreads 2 holds two of each model).
_LOADED: dict[tuple[str, int], _Loaded] = {}


def _slot(plan: WorkPlan) -> tuple[str, int]:
    return plan.key, threading.get_ident()


def _where() -> str:
    """This worker's address and host, and its SLURM job when it runs in one."""
    from distributed import get_worker

    job = os.environ.get("SLURM_JOB_ID")
    return f"{get_worker().address} ({socket.gethostname()}{f', SLURM job {job}' if job else ''})"


def _load(plan: WorkPlan) -> _Loaded:
    """This thread's runner for ``plan``, built and its recognizers loaded on first use."""
    if _slot(plan) in _LOADED:
        return _LOADED[_slot(plan)]
    if multiprocessing.current_process().daemon:
        raise ToolkitError(
            f"tasks run in a daemonic process, which cannot start the model services; "
            f"start the Dask workers with {DAEMON_FIX} in their environment"
        )
    from toolkit.pipeline.cache import ResultCache
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.pipeline.recognizers import RecognizerPool
    from toolkit.pipeline.runner import ArmRunner

    experiment = load_experiment(plan.experiment_path)
    arms = experiment.select_arms(list(plan.arms))
    pool = RecognizerPool(experiment)
    identities = pool.identities()
    for name, identity in plan.identities.items():
        mine = identities.get(name)
        if mine != identity:
            differ = sorted(k for k in {*identity, *(mine or {})} if (mine or {}).get(k) != identity.get(k))
            raise ToolkitError(
                f"{plan.experiment_path}: recognizer {name} resolves differently here than on the "
                f"coordinator ({', '.join(differ)} differ); every worker must see the same "
                "experiment and model files"
            )
    for name in plan.recognizers:
        mine = pool.runtime(name)
        if mine != plan.runtimes[name]:
            raise ToolkitError(
                f"recognizer {name}: CTranslate2 here selects {_cpu_code(mine)}, on the coordinator "
                f"{_cpu_code(plan.runtimes[name])}; the words would depend on the machine: run on "
                f"like machines, or set the same CT2_FORCE_CPU_ISA on every worker and the coordinator"
            )
    runner = ArmRunner(experiment, ResultCache(experiment.folder / "cache"), pool, arms, plan.dither)
    if runner.stage_devices() != plan.stage_devices:
        raise ToolkitError(
            f"the VAD passes and enhancers would run on {runner.stage_devices()} here, on {plan.stage_devices} on "
            'the coordinator; set their device the same way (or to "cpu") where devices differ'
        )
    if [arm.to_json() for arm in arms] != plan.arms_json:
        raise ToolkitError(
            f"{plan.experiment_path}: the arms differ here from the coordinator's; every worker "
            "must see the same experiment file"
        )
    for name, value in plan.environ.items():  # inherited by the services started from here on
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    # No model starts here: a unit that must be decoded starts its recognizer (a recording whose
    # decodes are all cached starts none).
    # The weights were hashed here (sha256) as the recognizers resolved, and the hashes matched the
    # coordinator's above, before any unit ran: recorded per node.
    hashes = {name: str(identity.get("weights_sha256", "")) for name, identity in identities.items()}
    _LOADED[_slot(plan)] = _Loaded(pool, runner, arms, hashes)
    return _LOADED[_slot(plan)]


def unseen_path(plan: WorkPlan, audio: Path) -> str | None:
    """One line naming the first path of ``plan`` or the recording's ``audio`` that does not resolve on this
    worker's host (a node whose view of the shared file system differs); None when every one does."""
    host = socket.gethostname()
    for what, path in (
        ("experiment file", str(plan.experiment_path)),
        *plan.shared_paths,
        ("audio", str(audio)),
    ):
        if not os.path.exists(path):
            return (
                f"{path} ({what}) does not resolve on host {host}; every node must see it at the same path "
                "(a shared file system)"
            )
    return None


def _cpu_code(runtime: dict[str, Any]) -> str:
    return (
        f"ISA {runtime.get('isa')}, int8 GEMM {runtime.get('gemm_s8')}, compute type {runtime.get('compute_type')} "
        f"({runtime.get('cpu')})"
    )


def recording_task(plan: WorkPlan, entry: Any, keys: dict[str, str]) -> RecordingResult:
    """One Dask task: every arm on one recording; any error comes back as a one-line failure."""
    from toolkit.runs.folder import RunFolder

    where = _where()
    unseen = unseen_path(plan, Path(entry.audio_path))
    if unseen is not None:
        return RecordingResult(entry.id, worker=where, failure=f"worker {where}: {unseen}")
    try:
        loaded = _load(plan)
        result = run_recording(loaded.runner, RunFolder(plan.folder), loaded.arms, entry, keys, guard=plan.guard)
    except Exception as error:  # reported per recording, so the run finishes the others
        if not isinstance(error, InputError):  # a service may have died with it: the next task starts afresh
            broken = _LOADED.pop(_slot(plan), None)
            if broken is not None:
                broken.kill()
        detail = str(error) if isinstance(error, ToolkitError) else f"{type(error).__name__}: {error}"
        return RecordingResult(entry.id, worker=where, failure=f"worker {where}: {' '.join(detail.split())}")
    result.worker = where
    result.models_sha256 = dict(loaded.models_sha256)
    return result


def release(key: str) -> dict[str, Any]:
    """Stop this worker's services of one run; their loads (with lifetime peaks) and this process's peak."""
    report: dict[str, Any] = {
        "host": socket.gethostname(),
        **({"slurm_job": os.environ["SLURM_JOB_ID"]} if "SLURM_JOB_ID" in os.environ else {}),
        "process_peak_rss_mb": round(lifetime_peak_rss_mb(), 1),
        "recognizer_loads": {},
        "stage_loads": {},
    }
    slots = [slot for slot in _LOADED if slot[0] == key]
    for index, slot in enumerate(slots):
        loaded = _LOADED.pop(slot)
        loaded.close()
        suffix = f" #{index + 1}" if len(slots) > 1 else ""  # one set of services per task thread
        report["recognizer_loads"].update({name + suffix: load.stored() for name, load in loaded.pool.loads().items()})
        report["stage_loads"].update(
            {name + suffix: load.stored() for name, load in loaded.runner.stages.loads().items()}
        )
    return report
