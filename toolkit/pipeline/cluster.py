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

This module is the coordinating process's side; what runs in each worker is toolkit.pipeline.cluster_worker,
and where the recordings go and whether they fit is toolkit.pipeline.placement.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.errors import ToolkitError
from toolkit.pipeline.cluster_worker import WorkPlan, recording_task, release, service_environ
from toolkit.pipeline.placement import Placement, available_cpus, check_memory, check_threads
from toolkit.pipeline.recording import RecordingResult
from toolkit.pipeline.runner import UNIT_KINDS
from toolkit.runs.record import ServiceLoad


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

    def waited_s(self) -> float:
        """What the run waited for the cluster's workers to start and load their models, all of them together."""
        return sum(load.ready_wall_s for loads in (self.recognizer_loads, self.stage_loads) for load in loads.values())


class Cluster:
    """A Dask cluster for one run: local worker processes, an existing scheduler, or SLURM jobs.

    Opening it only checks (nothing is started, nothing written): CPU threads (tasks at once on a
    host times the recognizers' ``cpu_threads`` must not exceed that host's cores unless
    ``oversubscribe``), the memory local workers need, a reachable scheduler, and for SLURM
    everything toolkit.pipeline.slurm can check before submitting. ``start`` starts the workers
    (or submits the jobs) for the recordings left, only once some recording needs a model.
    """

    def __init__(
        self,
        placement: Placement,
        threads_per_task: int,
        worker_memory_mb: float,
        experiment_folder: Path,
        run_folder: Path,
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
            cores = len(available_cpus())
            check_threads(
                f"--workers {placement.workers}",
                placement.workers,
                threads_per_task,
                cores,
                placement.oversubscribe,
                "this machine",
            )
            check_memory(placement.workers, worker_memory_mb)
        elif self.mode == "scheduler":
            self._connect(self.address)
            self._check_remote(threads_per_task, placement.oversubscribe)
        else:
            from toolkit.pipeline.slurm import SlurmJobs, preflight

            request = placement.slurm
            assert request is not None  # the mode says so
            preflight(request.config, request.source, threads_per_task, placement.oversubscribe)
            self.slurm = SlurmJobs(request.config, request.source, request.log_directory(experiment_folder), run_folder)
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
        cpus = self.client.run(available_cpus, on_error="ignore")  # a worker gone meanwhile (a job ended) is left out
        hosts: dict[str, tuple[int, set[int]]] = {}
        for address, worker in info.items():
            tasks, cores = hosts.get(worker["host"], (0, set()))
            hosts[worker["host"]] = (tasks + worker["nthreads"], cores | set(cpus.get(address, [])))
        for host, (tasks, cores) in hosts.items():
            check_threads(
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
                recording_task,
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
        for address, report in self.client.run(release, plan.key, on_error="ignore").items():
            for kind, loads in (("recognizer_loads", outcome.recognizer_loads), ("stage_loads", outcome.stage_loads)):
                loads.update({f"{name} on {address}": load for name, load in report.pop(kind, {}).items()})
            outcome.workers.setdefault(address, {"recordings": []}).update(report)
        outcome.extra["nodes"] = per_node(outcome)
        outcome.extra["rescheduled"] = self._rescheduled({f"ablate-{e.id}-{token}": e.id for e in entries})
        if self.mode == "local":
            outcome.extra["workers_asked"] = self.placement.workers
            outcome.extra["workers_started"] = self.started_workers
        if self.slurm is not None:
            outcome.extra["slurm"] = self.slurm.to_json()
        return outcome

    def _rescheduled(self, recordings: dict[str, str]) -> list[dict[str, object]]:
        """Each worker that left the scheduler (its node lost, its job ended) while it held recordings of this
        run (running or queued there), with those recordings: Dask sent them to other workers."""
        left = []
        for _, event in self.client.get_events("all"):
            if isinstance(event, dict) and event.get("action") == "remove-worker":
                running = [recordings[key] for key in event.get("processing-tasks", ()) if key in recordings]
                if running:
                    left.append({"worker": event.get("worker", ""), "recordings": sorted(running)})
        return left

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
        reason: str | None = self.slurm.housekeep(recordings_left, workers)
        return reason

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


@dataclass
class NodeFigures:
    """One host's share of a run, as run.json's ``nodes`` holds it."""

    workers: list[str] = field(default_factory=list)
    slurm_jobs: list[str] = field(default_factory=list)
    recordings: list[str] = field(default_factory=list)
    units_computed: int = 0
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0
    models_sha256: dict[str, str] = field(default_factory=dict)

    def add_worker(self, address: str) -> None:
        """Name the worker at ``address`` once."""
        if address not in self.workers:
            self.workers.append(address)

    def to_json(self) -> dict[str, object]:
        """The figures as run.json writes them."""
        return dataclasses.asdict(self)


def per_node(outcome: ClusterRun) -> dict[str, dict[str, object]]:
    """Per host: its workers and SLURM jobs, the recordings finished there, the units of work (decodes, VAD
    passes, enhancements) computed, their CPU time, the largest peak memory of its processes (the model
    services' and, when it reported at the end, the worker's), and each model's sha256 as verified there.
    Taken from the results as they came back, so a worker whose job ended early (lost with its node, or
    released as the work ran out) still counts."""
    nodes: dict[str, NodeFigures] = {}
    for result in outcome.results.values():
        where = re.match(r"(\S+) \(([^,)]+)", result.worker or "")
        if where is None:
            continue
        entry = nodes.setdefault(where.group(2), NodeFigures())
        entry.add_worker(where.group(1))
        if result.failure is None:
            entry.recordings.append(result.recording)
        entry.units_computed += sum(result.units[kind]["computed"] for kind in UNIT_KINDS)
        entry.cpu_s = round(entry.cpu_s + result.this_run.cpu_s, 2)
        peaks = [row.peak_rss_mb for row in result.rows if isinstance(row.peak_rss_mb, float | int)]
        entry.peak_rss_mb = round(max([entry.peak_rss_mb, *peaks]), 1)
        entry.models_sha256.update(result.models_sha256)
    for address, worker in outcome.workers.items():
        if "host" not in worker:
            continue
        entry = nodes.setdefault(worker["host"], NodeFigures())
        entry.add_worker(address)
        entry.peak_rss_mb = max(entry.peak_rss_mb, worker.get("process_peak_rss_mb", 0.0))
    for address, worker in outcome.workers.items():
        job = worker.get("slurm_job")
        host = worker.get("host") or next((h for h, n in nodes.items() if address in n.workers), None)
        if job and host and job not in nodes[host].slurm_jobs:
            nodes[host].slurm_jobs.append(job)
    return {host: figures.to_json() for host, figures in sorted(nodes.items())}


def dask_config(key: str) -> Any:
    import dask

    return dask.config.get(key)
