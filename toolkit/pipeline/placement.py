"""Where a run's recordings go (``--workers``, ``--scheduler``, ``--cluster slurm``), checked before anything
starts: the choice itself, a scheduler's address, and whether the decoding threads and the models' memory fit
the cores and memory they would run on."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from toolkit.core.errors import ToolkitError

if TYPE_CHECKING:
    from toolkit.pipeline.slurm import ClusterFile

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


def available_cpus() -> list[int]:
    """The CPUs this process may run on (a worker's, asked through Dask, or the coordinator's)."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))


def check_threads(what: str, tasks: int, threads: int, cores: int, oversubscribe: bool, where: str) -> None:
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


def check_memory(workers: int, worker_memory_mb: float) -> None:
    """Refuse local workers whose models cannot all be held at once (even ``--oversubscribe`` cannot add memory)."""
    available = _available_memory_mb()
    if available is None or workers * worker_memory_mb <= available:
        return
    fits = max(1, int(available // worker_memory_mb))
    raise ToolkitError(
        f"--workers {workers} would hold {workers} copies of the models, about "
        f"{workers * worker_memory_mb / 1024:,.1f} GB "
        f"(~{worker_memory_mb:,.0f} MB per worker), and this machine has {available / 1024:,.1f} GB available and "
        f"{len(available_cpus())} cores; use --workers {min(fits, len(available_cpus()))} or fewer"
    )


def worker_memory_mb(weights_mb: list[float]) -> float:
    """Rough memory of one local worker holding recognizers with these weight files (for ``check_memory``)."""
    return WORKER_BASE_MB + sum(SERVICE_BASE_MB + 2 * size for size in weights_mb)
