"""Recordings in parallel on a Dask cluster: a local one (``--workers N``) or an existing one (``--scheduler``).

One task per recording with work left runs every arm on it (toolkit.pipeline.recording.run_recording)
and writes its results into the shared run folder. Each Dask worker process loads the
experiment's recognizers once, in their own service processes as in a one-worker run (so
per-unit time and memory are measured the same way), and keeps them across tasks until the
run releases them. The coordinating process holds the run lock and writes ``run.json``.

A task that fails (audio or model missing on that worker, say) comes back as a one-line
failure naming the worker and the file; the other recordings go on. A worker that dies has
its task rescheduled by Dask (up to ``distributed.scheduler.allowed-failures`` deaths, then
the recording is recorded as failed); arms a task finished before dying are on disk and
are not redone.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import socket
import threading
import uuid
from collections.abc import Callable
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
    recognizers: tuple[str, ...]  # those with work left, loaded once per worker
    environ: dict[str, str | None]  # the coordinator's NANNY_VARIABLES, for the services
    guard: Any = None  # which stored results may be reused (toolkit.pipeline.recording.ResultGuard)
    dither: Dither | None = None  # added to each recording before any stage (a stability rerun)

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
class ClusterRun:
    """Results of the recordings sent to the cluster, and where each ran and what loading cost there."""

    mode: str
    scheduler: str
    results: dict[str, RecordingResult] = field(default_factory=dict)
    recognizer_loads: dict[str, dict[str, Any]] = field(default_factory=dict)
    stage_loads: dict[str, dict[str, Any]] = field(default_factory=dict)
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "scheduler": self.scheduler, "workers": self.workers}


# --- in each worker process ------------------------------------------------------------------


@dataclass
class _Loaded:
    pool: Any
    runner: Any
    arms: list[Any]

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
    from distributed import get_worker

    return f"{get_worker().address} ({socket.gethostname()})"


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
    if [arm.to_json() for arm in arms] != plan.arms_json:
        raise ToolkitError(
            f"{plan.experiment_path}: the arms differ here from the coordinator's; every worker "
            "must see the same experiment file"
        )
    runner = ArmRunner(experiment, ResultCache(experiment.folder / "cache"), pool, arms, plan.dither)
    for name, value in plan.environ.items():  # inherited by the services started from here on
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    pool.start(plan.recognizers)
    _LOADED[_slot(plan)] = _Loaded(pool, runner, arms)
    return _LOADED[_slot(plan)]


def _cpu_code(runtime: dict[str, Any]) -> str:
    return (
        f"ISA {runtime.get('isa')}, int8 GEMM {runtime.get('gemm_s8')}, compute type {runtime.get('compute_type')} "
        f"({runtime.get('cpu')})"
    )


def _recording_task(plan: WorkPlan, entry: Any, keys: dict[str, str]) -> RecordingResult:
    """One Dask task: every arm on one recording; any error comes back as a one-line failure."""
    from toolkit.runs.folder import RunFolder

    where = _where()
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
    return result


def _release(key: str) -> dict[str, Any]:
    """Stop this worker's services of one run; their loads (with lifetime peaks) and this process's peak."""
    report: dict[str, Any] = {
        "host": socket.gethostname(),
        "process_peak_rss_mb": round(lifetime_peak_rss_mb(), 1),
        "recognizer_loads": {},
        "stage_loads": {},
    }
    slots = [slot for slot in _LOADED if slot[0] == key]
    for index, slot in enumerate(slots):
        loaded = _LOADED.pop(slot)
        loaded.close()
        suffix = f" #{index + 1}" if len(slots) > 1 else ""  # one set of services per task thread
        report["recognizer_loads"].update({name + suffix: load.to_json() for name, load in loaded.pool.loads().items()})
        report["stage_loads"].update(
            {name + suffix: load.to_json() for name, load in loaded.runner.stages.loads().items()}
        )
    return report


def _cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))


# --- in the coordinating process ---------------------------------------------------------------


class Cluster:
    """A Dask client on a local cluster it starts (``workers``) or on an existing scheduler.

    Opening it checks CPU threads: tasks running at once on a host times the recognizers'
    ``cpu_threads`` must not exceed that host's cores unless ``oversubscribe``.
    """

    def __init__(self, workers: int, scheduler: str | None, threads_per_task: int, oversubscribe: bool) -> None:
        import dask
        from distributed import Client, LocalCluster

        self.mode = "scheduler" if scheduler else "local"
        self.environ = service_environ()
        self._local = None
        # A local cluster's nannies live in this process and write their workers' variables
        # (NANNY_VARIABLES) into its environment: put it back once they are started and closed.
        self._saved_environ = dict(os.environ)
        if scheduler is None:
            cores = len(_cpus())
            _check_threads(f"--workers {workers}", workers, threads_per_task, cores, oversubscribe, "this machine")
            try:
                with dask.config.set({"distributed.worker.daemon": False}):
                    self._local = LocalCluster(
                        n_workers=workers,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=logging.CRITICAL,
                    )
            finally:
                self._restore_environ()
            self.client = Client(self._local)
        else:
            try:
                self.client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as error:
                raise ToolkitError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None
            self._check_remote(threads_per_task, oversubscribe)
        self.address = self.client.scheduler.address

    def _check_remote(self, threads_per_task: int, oversubscribe: bool) -> None:
        info = self.client.scheduler_info()["workers"]
        cpus = self.client.run(_cpus)
        hosts: dict[str, tuple[int, set[int]]] = {}
        for address, worker in info.items():
            tasks, cores = hosts.get(worker["host"], (0, set()))
            hosts[worker["host"]] = (tasks + worker["nthreads"], cores | set(cpus.get(address, [])))
        for host, (tasks, cores) in hosts.items():
            _check_threads(
                f"the cluster's workers on {host} ({tasks} task threads)",
                tasks,
                threads_per_task,
                len(cores),
                oversubscribe,
                host,
            )

    def run(
        self,
        plan: WorkPlan,
        entries: list[Any],
        keys: dict[str, dict[str, str]],
        bar: Any,
        on_result: Callable[[RecordingResult], None] | None = None,
    ) -> ClusterRun:
        """Send every recording of ``entries`` (longest first) and collect results as they finish
        (``on_result`` hears of each, here in the coordinator)."""
        from dataclasses import replace

        from distributed import as_completed

        outcome = ClusterRun(self.mode, self.address)
        token = uuid.uuid4().hex[:8]
        futures = {}
        for rank, entry in enumerate(sorted(entries, key=lambda e: -e.duration)):
            shared = replace(entry, base_dir=entry.base_dir.resolve())  # workers have their own working folder
            future = self.client.submit(
                _recording_task,
                plan,
                shared,
                keys[entry.id],
                pure=False,
                key=f"ablate-{entry.id}-{token}",
                priority=-rank,
            )
            futures[future] = entry
        for future in as_completed(futures):
            entry = futures[future]
            try:
                result = future.result()
            except Exception as error:  # a recording whose workers kept dying (KilledWorker), say
                result = RecordingResult(entry.id, failure=" ".join(f"{type(error).__name__}: {error}".split()))
            outcome.results[entry.id] = result
            if on_result is not None:
                on_result(result)
            if bar is not None:
                bar.set_postfix_str(f"{entry.id} {'FAILED' if result.failure else 'done'}")
                bar.update(len(plan.arms))
        for result in outcome.results.values():
            if result.worker is not None:
                address = result.worker.split(" ")[0]
                outcome.workers.setdefault(address, {"recordings": []})["recordings"].append(result.recording)
        for address, report in self.client.run(_release, plan.key).items():
            for kind, loads in (("recognizer_loads", outcome.recognizer_loads), ("stage_loads", outcome.stage_loads)):
                loads.update({f"{name} on {address}": load for name, load in report.pop(kind, {}).items()})
            outcome.workers.setdefault(address, {"recordings": []}).update(report)
        return outcome

    def _restore_environ(self) -> None:
        os.environ.clear()
        os.environ.update(self._saved_environ)

    def close(self) -> None:
        self.client.close()
        if self._local is not None:
            self._local.close()
            self._restore_environ()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_threads(what: str, tasks: int, threads: int, cores: int, oversubscribe: bool, where: str) -> None:
    if tasks * threads > cores and not oversubscribe:
        raise ToolkitError(
            f"{what} with recognizers decoding on cpu_threads = {threads} would run {tasks * threads} "
            f"decoding threads on the {cores} cores of {where}; set cpu_threads = "
            f"{max(1, cores // tasks)} in the experiment's recognizer decoding tables, use fewer "
            "workers, or pass --oversubscribe"
        )
