"""Recordings in parallel on a Dask cluster: a local one (``--workers N``), an existing one
(``--scheduler``), or SLURM jobs the run submits (``--cluster slurm``, toolkit.pipeline.slurm).

One task per recording with work left runs every arm on it (toolkit.pipeline.recording.run_recording)
and writes its results into the shared run folder. Each Dask worker process builds the
experiment's recognizers once and starts a model (in its own service process, as in a
one-worker run, so per-unit time and memory are measured the same way) only when a unit
needs it, then keeps it across tasks until the run releases them. The coordinating process
holds the run lock and writes ``run.json``.

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
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolkit.audio.dither import Dither
from toolkit.core.errors import InputError, ToolkitError
from toolkit.pipeline.measure import lifetime_peak_rss_mb
from toolkit.pipeline.recording import RecordingResult, run_recording
from toolkit.runs.record import ServiceLoad

if TYPE_CHECKING:
    from toolkit.pipeline.slurm import ClusterFile

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
    recognizer_loads: dict[str, ServiceLoad] = field(default_factory=dict)
    stage_loads: dict[str, ServiceLoad] = field(default_factory=dict)
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # local: workers asked and started; slurm: its jobs

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "scheduler": self.scheduler, "workers": self.workers, **self.extra}


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


def _cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))


# --- in the coordinating process ---------------------------------------------------------------

# What one local worker process costs besides its models (the Dask worker and its Python), and
# what a recognizer service costs besides twice its weight file (measured with whisper-base:
# Dask worker 178-180 MB, service 401-566 MB for a 145 MB model.bin). Only to refuse a request
# the machine cannot hold, so rough is enough.
WORKER_BASE_MB = 250.0
SERVICE_BASE_MB = 250.0
SCHEDULER_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")


@dataclass(frozen=True)
class Placement:
    """Where the recordings of a run go: ``workers`` local processes, an existing ``scheduler``, or ``slurm`` jobs."""

    workers: int = 1
    scheduler: str | None = None
    slurm: ClusterFile | None = None
    oversubscribe: bool = False

    @property
    def distributed(self) -> bool:
        return self.workers > 1 or self.scheduler is not None or self.slurm is not None

    def check(self) -> None:
        """Refuse contradictory or malformed choices with one line."""
        if self.workers < 1:
            raise ToolkitError(f"--workers must be at least 1, not {self.workers}")
        if sum([self.workers != 1, self.scheduler is not None, self.slurm is not None]) > 1:
            raise ToolkitError(
                "--workers sizes a local cluster; with --scheduler the cluster's own workers decide, and with "
                "--cluster slurm the cluster file's jobs: choose one"
            )
        if self.scheduler is not None:
            problem = scheduler_address_problem(self.scheduler)
            if problem:
                raise ToolkitError(
                    f"--scheduler {self.scheduler!r} is not a Dask scheduler address ({problem}); give "
                    "tcp://HOST:PORT (what `dask scheduler` prints)"
                )


def scheduler_address_problem(address: str) -> str | None:
    """What is wrong with ``address`` as a Dask scheduler address (scheme://HOST:PORT), or None."""
    if "://" not in address:
        return "no scheme such as tcp://"
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError as error:  # a port out of 0-65535 or not a number, an unclosed IPv6 bracket
        return str(error).lower()
    if parts.scheme not in SCHEDULER_SCHEMES:
        return f"scheme {parts.scheme!r} is not one of {', '.join(SCHEDULER_SCHEMES)}"
    if not parts.hostname:
        return "no host"
    if not port:
        return "no port number" if port is None else "port 0"
    if parts.path or parts.query or parts.fragment:
        return "a path after the port"
    return None


class Cluster:
    """A Dask cluster for one run: local worker processes, an existing scheduler, or SLURM jobs.

    Opening it only checks (nothing is started, nothing written): CPU threads (tasks at once on a
    host times the recognizers' ``cpu_threads`` must not exceed that host's cores unless
    ``oversubscribe``), the memory local workers need, a reachable scheduler, and for SLURM
    everything toolkit.pipeline.slurm can check before submitting. ``start`` starts the workers
    (or submits the jobs) for the recordings left, only once some recording needs a model.
    """

    def __init__(
        self, placement: Placement, threads_per_task: int, worker_memory_mb: float, experiment_folder: Path
    ) -> None:
        placement.check()
        self.placement = placement
        self.mode = "slurm" if placement.slurm else "scheduler" if placement.scheduler else "local"
        self.environ = service_environ()
        self.threads_per_task = threads_per_task
        self.client: Any = None
        self.address = placement.scheduler or ""
        self.slurm: Any = None
        self.started_workers = 0
        self._local: Any = None
        # A local cluster's nannies live in this process and write their workers' variables
        # (NANNY_VARIABLES) into its environment: put it back once they are started and closed.
        self._saved_environ = dict(os.environ)
        if self.mode == "local":
            cores = len(_cpus())
            _check_threads(
                f"--workers {placement.workers}",
                placement.workers,
                threads_per_task,
                cores,
                placement.oversubscribe,
                "this machine",
            )
            _check_memory(placement.workers, worker_memory_mb)
        elif self.mode == "scheduler":
            self._connect(self.address)
            self._check_remote(threads_per_task, placement.oversubscribe)
        else:
            from toolkit.pipeline.slurm import SlurmJobs, preflight

            request = placement.slurm
            assert request is not None  # the mode says so
            preflight(request.config, request.source, threads_per_task, placement.oversubscribe)
            self.slurm = SlurmJobs(request.config, request.source, request.log_directory(experiment_folder))
            try:
                self.slurm.test_submission()
            except BaseException:
                self.slurm.close()
                raise
            self.address = self.slurm.address

    def _connect(self, address: str) -> None:
        from distributed import Client

        host, port = address.split("://", 1)[1].rsplit(":", 1)
        try:  # a plain connection first: a refused or unknown address fails fast, in one line
            socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
        except OSError as error:
            raise ToolkitError(f"cannot reach the Dask scheduler at {address}: {error.strerror or error}") from None
        try:
            self.client = Client(address, timeout="20s")
        except (OSError, TimeoutError, ValueError) as error:
            raise ToolkitError(f"cannot reach the Dask scheduler at {address}: {error}") from None

    def start(self, recordings: int) -> None:
        """Start what ``recordings`` recordings need: local workers (no more than recordings), or SLURM jobs."""
        import dask
        from distributed import Client, LocalCluster

        if self.mode == "local":
            self.started_workers = min(self.placement.workers, recordings)
            try:
                with dask.config.set({"distributed.worker.daemon": False}):
                    self._local = LocalCluster(
                        n_workers=self.started_workers,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=logging.CRITICAL,
                    )
            finally:
                self._restore_environ()
            self.client = Client(self._local)
        elif self.mode == "slurm":
            self.slurm.submit(recordings)
            self.client = Client(self.slurm.cluster)
        self.address = self.client.scheduler.address

    def _check_remote(self, threads_per_task: int, oversubscribe: bool) -> None:
        info = self.client.scheduler_info()["workers"]
        cpus = self.client.run(_cpus, on_error="ignore")  # a worker gone meanwhile (a job ended) is left out
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
        counted: dict[str, int] | None = None,
        on_result: Callable[[RecordingResult], None] | None = None,
    ) -> ClusterRun:
        """Send every recording of ``entries`` (longest first) and collect results as they finish
        (``on_result`` hears of each, here in the coordinator).

        ``counted``: arms per recording the progress bar already shows (done before the cluster started).
        """
        from dataclasses import replace

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
        remaining = dict(futures)
        while remaining:
            finished = [future for future in remaining if future.done()]
            for future in finished:
                entry = remaining.pop(future)
                try:
                    result = future.result()
                except Exception as error:  # a recording whose workers kept dying (KilledWorker), say
                    result = RecordingResult(entry.id, failure=self._died(error))
                self._record(outcome, entry, result, plan, bar, counted, on_result)
            if finished:
                continue
            problem = self._housekeep(len(remaining))
            if problem is not None:  # no worker for too long: the recordings left fail, a rerun resumes them
                for future, entry in list(remaining.items()):
                    future.cancel()
                    self._record(
                        outcome, entry, RecordingResult(entry.id, failure=problem), plan, bar, counted, on_result
                    )
                remaining.clear()
                break
            time.sleep(0.25)
        for result in outcome.results.values():
            if result.worker is not None:
                address = result.worker.split(" ")[0]
                worker = outcome.workers.setdefault(address, {"recordings": []})
                worker["recordings"].append(result.recording)
                # From the result itself: a SLURM job that ended before the release below reports nothing.
                job = re.search(r"SLURM job (\d+)", result.worker)
                if job is not None:
                    worker.setdefault("slurm_job", job.group(1))
        # A worker whose job ended (cancelled, over its walltime) since its last result cannot answer: it is
        # left out, as its results already came with them (a broadcast to it would fail the whole run).
        for address, report in self.client.run(_release, plan.key, on_error="ignore").items():
            for kind, loads in (("recognizer_loads", outcome.recognizer_loads), ("stage_loads", outcome.stage_loads)):
                loads.update({f"{name} on {address}": load for name, load in report.pop(kind, {}).items()})
            outcome.workers.setdefault(address, {"recordings": []}).update(report)
        if self.mode == "local":
            outcome.extra["workers_asked"] = self.placement.workers
            outcome.extra["workers_started"] = self.started_workers
        if self.slurm is not None:
            outcome.extra["slurm"] = self.slurm.to_json()
        return outcome

    def _record(
        self,
        outcome: ClusterRun,
        entry: Any,
        result: RecordingResult,
        plan: WorkPlan,
        bar: Any,
        counted: dict[str, int] | None,
        on_result: Callable[[RecordingResult], None] | None = None,
    ) -> None:
        outcome.results[entry.id] = result
        if on_result is not None:
            on_result(result)
        if self.slurm is not None and result.worker is not None:
            where = re.search(r"\((.*), SLURM job (\d+)\)", result.worker)
            if where is not None:
                self.slurm.note_recording(where.group(2), where.group(1), entry.id)
        if bar is not None:
            bar.set_postfix_str(f"{entry.id} {'FAILED' if result.failure else 'done'}")
            bar.update(len(plan.arms) - (counted or {}).get(entry.id, 0))

    def _housekeep(self, recordings_left: int) -> str | None:
        """SLURM: job states, replacements, and the reason to give up when no worker has run for too long."""
        if self.slurm is None:
            return None
        workers = len(self.client.scheduler_info()["workers"])
        return self.slurm.housekeep(recordings_left, workers)

    def _died(self, error: Exception) -> str:
        """One line for a task Dask gave up on: its workers died (killed, out of memory, SLURM ended their jobs)."""
        from distributed import KilledWorker

        if isinstance(error, KilledWorker):
            allowed = dask_config("distributed.scheduler.allowed-failures")
            ended = ""
            if self.slurm is not None:
                self.slurm.refresh()
                jobs = self.slurm.jobs.values()
                gone = [f"{j.job_id} {j.state}" for j in jobs if j.state not in ("RUNNING", "PENDING")]
                ended = f"; SLURM jobs that ended: {', '.join(gone)}" if gone else ""
                ended += " (is the walltime long enough for one recording?)"
            return (
                f"every worker that ran it died ({allowed + 1} attempts, distributed.scheduler.allowed-failures = "
                f"{allowed}){ended}; finished arms are kept and a rerun resumes it"
            )
        return " ".join(f"{type(error).__name__}: {error}".split())

    def _restore_environ(self) -> None:
        os.environ.clear()
        os.environ.update(self._saved_environ)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self._local is not None:
            self._local.close()
            self._restore_environ()
        if self.slurm is not None:
            self.slurm.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dask_config(key: str) -> Any:
    import dask

    return dask.config.get(key)


def _check_threads(what: str, tasks: int, threads: int, cores: int, oversubscribe: bool, where: str) -> None:
    if tasks * threads > cores and not oversubscribe:
        raise ToolkitError(
            f"{what} with recognizers decoding on cpu_threads = {threads} would run {tasks * threads} "
            f"decoding threads on the {cores} cores of {where}; set cpu_threads = "
            f"{max(1, cores // tasks)} in the experiment's recognizer decoding tables, use fewer "
            "workers, or pass --oversubscribe"
        )


def _available_memory_mb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _check_memory(workers: int, worker_memory_mb: float) -> None:
    """Refuse local workers whose models cannot all be held at once (even ``--oversubscribe`` cannot add memory)."""
    available = _available_memory_mb()
    if available is None or workers * worker_memory_mb <= available:
        return
    fits = max(1, int(available // worker_memory_mb))
    raise ToolkitError(
        f"--workers {workers} would hold {workers} copies of the models, about "
        f"{workers * worker_memory_mb / 1024:,.1f} GB "
        f"(~{worker_memory_mb:,.0f} MB per worker), and this machine has {available / 1024:,.1f} GB available and "
        f"{len(_cpus())} cores; use --workers {min(fits, len(_cpus()))} or fewer"
    )


def worker_memory_mb(weights_mb: list[float]) -> float:
    """Rough memory of one local worker holding recognizers with these weight files (for ``_check_memory``)."""
    return WORKER_BASE_MB + sum(SERVICE_BASE_MB + 2 * size for size in weights_mb)
