"""SLURM jobs as the Dask workers of a run (``ablate run EXP --cluster slurm --cluster-config FILE``).

Built on ``dask_jobqueue.SLURMCluster``: the coordinating process (``ablate run``, on a login
node) runs the Dask scheduler and submits batch jobs whose script starts Dask workers; each
worker runs one recording at a time, as in ``--workers N``. The cluster file (TOML, one
``[slurm]`` table) says which queue, how many cores, how much memory and how long per job, how
many jobs, whether their number is fixed or adapts to the work left, and what the job script
runs first (``module load``, a virtualenv). Everything that can be checked before a job is
submitted is: the SLURM commands, munge and the controller, the queue, the largest node, the
queue's time limit, the cores each worker needs, and the job script itself (``sbatch
--test-only``). During the run, jobs that end (cancelled, over their walltime, node failure)
are replaced while recordings are left, and a run that has had no worker for
``start_timeout_s`` gives up on the recordings left, naming the jobs and why SLURM holds them.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import warnings
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from toolkit.core.config import build_config
from toolkit.core.errors import InputError, ToolkitError
from toolkit.core.names import did_you_mean

COMMANDS = ("sbatch", "squeue", "scancel", "sinfo")
# SLURM's time formats: minutes, minutes:seconds, hours:minutes:seconds, days-hours,
# days-hours:minutes, days-hours:minutes:seconds.
_WALLTIME = re.compile(r"^(?:(?P<d>\d+)-)?(?P<a>\d+)(?::(?P<b>\d+))?(?::(?P<c>\d+))?$")
# Job states after which a job runs nothing more (squeue's long names).
ENDED = {
    *("CANCELLED", "COMPLETED", "FAILED", "TIMEOUT", "NODE_FAIL"),
    *("PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"),
}


def job_name(run_folder: Path) -> str:
    """The SLURM job name of every job of the run writing ``run_folder``: a later run of the same folder
    (its coordinator killed, say) finds the jobs the earlier one left by it."""
    from toolkit.core.files import config_hash

    return f"ablate-{config_hash(str(run_folder.resolve()))[:10]}"


def walltime_seconds(text: str) -> int:
    """Seconds in a SLURM time limit (``30``, ``30:00``, ``08:00:00``, ``2-00:00:00``, ...); ValueError otherwise."""
    match = _WALLTIME.match(text.strip())
    if match is None:
        raise ValueError(f"walltime {text!r} is not a SLURM time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)")
    days = int(match["d"] or 0)
    parts = [int(p) for p in (match["a"], match["b"], match["c"]) if p is not None]
    if match["d"] is not None:  # D-HH[:MM[:SS]]
        hours, minutes, seconds = (parts + [0, 0])[:3]
    elif len(parts) == 3:
        hours, minutes, seconds = parts
    else:  # MM or MM:SS
        hours, (minutes, seconds) = 0, (parts + [0])[:2]
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if total <= 0:
        raise ValueError(f"walltime {text!r} must be longer than zero")
    return total


@dataclass(frozen=True)
class SlurmConfig:
    """One ``[slurm]`` table: what every job asks SLURM for and how many jobs the run keeps.

    ``cores`` CPU cores per job, shared by its ``processes`` Dask workers (each decodes one
    recording at a time with the recognizers' ``cpu_threads``, so ``processes`` x ``cpu_threads``
    must fit in ``cores``). ``memory`` per job (``8GB``), ``walltime`` per job. ``jobs``: at most
    this many at once; ``scale = "fixed"`` keeps that many (fewer when fewer recordings are left)
    and replaces any that end, ``"adaptive"`` lets Dask add and release jobs between
    ``minimum_jobs`` and ``jobs`` as work remains. ``start_timeout_s``: how long the run waits
    with no worker at all (jobs pending) before it fails the recordings left.
    ``job_script_prologue`` lines run before the worker starts (``module load ...``,
    ``source /shared/venv/bin/activate``); ``job_extra_directives`` are more ``#SBATCH`` options
    (``--constraint=avx512``, ``--gres=gpu:1``). ``python`` (empty: the coordinator's), ``account``,
    ``scheduler_host`` / ``scheduler_interface`` (the address, or the network interface, the
    coordinator's scheduler listens on and workers reach it at; empty: Dask decides), ``interface``
    (the workers' network interface, and the scheduler's when neither of those is set; empty: the one that
    reaches the scheduler), ``node_timeout_s``
    (a worker silent this long, its node lost or cut off, is given up and its recording rescheduled),
    ``local_directory`` (workers' scratch; empty: Dask's default) and ``log_directory`` (job
    output; empty: ``slurm-logs/`` beside the experiment) are optional.
    """

    queue: str
    cores: int
    processes: int
    memory: str
    walltime: str
    jobs: int
    scale: Literal["fixed", "adaptive"]
    start_timeout_s: float
    minimum_jobs: int = 0
    account: str = ""
    job_script_prologue: tuple[str, ...] = ()
    job_extra_directives: tuple[str, ...] = ()
    python: str = ""
    scheduler_host: str = ""
    scheduler_interface: str = ""
    interface: str = ""
    node_timeout_s: float = 60.0
    local_directory: str = ""
    log_directory: str = ""

    def __post_init__(self) -> None:
        from dask.utils import parse_bytes

        if not self.queue.strip():
            raise ValueError("queue must name a SLURM partition")
        if self.cores < 1 or self.processes < 1 or self.jobs < 1:
            raise ValueError("cores, processes and jobs must each be at least 1")
        if self.processes > self.cores:
            raise ValueError(f"processes ({self.processes}) must not exceed cores ({self.cores}): a core each at least")
        if not 0 <= self.minimum_jobs <= self.jobs:
            raise ValueError(f"minimum_jobs ({self.minimum_jobs}) must lie in [0, jobs = {self.jobs}]")
        if self.scale == "fixed" and self.minimum_jobs:
            raise ValueError('minimum_jobs applies to scale = "adaptive" only')
        try:
            if parse_bytes(self.memory) <= 0:
                raise ValueError
        except (ValueError, TypeError):
            raise ValueError(f"memory {self.memory!r} is not an amount of memory such as '8GB' or '1500MB'") from None
        walltime_seconds(self.walltime)
        for name in ("start_timeout_s", "node_timeout_s"):
            if not 0 < getattr(self, name) < float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds, not {getattr(self, name)!r}")
        if self.scheduler_host and self.scheduler_interface:
            raise ValueError("set scheduler_host or scheduler_interface, not both")
        for directive in self.job_extra_directives:
            if not directive.startswith("-"):
                raise ValueError(f"job_extra_directives are sbatch options ('--constraint=avx512'), not {directive!r}")

    @property
    def walltime_s(self) -> int:
        return walltime_seconds(self.walltime)

    @property
    def memory_mb(self) -> float:
        from dask.utils import parse_bytes

        return parse_bytes(self.memory) / 2**20

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ClusterFile:
    """A checked cluster file and where it is (errors and the run record name it)."""

    config: SlurmConfig
    source: Path

    def log_directory(self, experiment_folder: Path) -> Path:
        """Where the jobs write their output: ``log_directory`` (relative to the file), or ``slurm-logs/``
        beside the experiment."""
        if self.config.log_directory:
            return (self.source.parent / self.config.log_directory).resolve()
        return (experiment_folder / "slurm-logs").resolve()


def load_cluster_file(path: str | Path) -> ClusterFile:
    """Read and check a cluster file: exactly one ``[slurm]`` table, every required key, no unknown one."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "cluster file not found")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise InputError(path, f"not a valid TOML cluster file ({error})") from None
    if set(raw) != {"slurm"} or not isinstance(raw["slurm"], dict):
        others = ", ".join(sorted(set(raw) - {"slurm"})) or "nothing"
        raise InputError(path, f"a cluster file holds one [slurm] table and nothing else (found {others})")
    table = raw["slurm"]
    known = [f.name for f in fields(SlurmConfig)]
    for key in table:
        if key not in known:
            hint = did_you_mean(key, known) or f"; known: {', '.join(known)}"
            raise InputError(path, f"[slurm] has unknown key {key!r}{hint}")
    missing = [f.name for f in fields(SlurmConfig) if f.default is MISSING and f.name not in table]
    if missing:
        raise InputError(path, f"[slurm] must set {', '.join(missing)}")
    return ClusterFile(build_config(SlurmConfig, table, path=path, where="slurm", require_all=False), path.resolve())


# --- checks before anything is submitted or written --------------------------------------------


def _slurm_command(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(args), capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise ToolkitError(f"`{' '.join(args)}` did not answer within 60 s: is the SLURM controller up?") from None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no message")


def _refusal(command: str, stderr: str) -> ToolkitError:
    """One line for a SLURM client command that failed: munge, the controller, or its own words."""
    lowered = stderr.lower()
    if "munge" in lowered:
        lines = [re.sub(r"^\S+: error: ", "", x.strip()) for x in stderr.splitlines() if "munge" in x.lower()]
        line = next((x for x in lines if "fail" in x.lower()), lines[0])
        return ToolkitError(
            f"SLURM cannot authenticate: munge is not running or not reachable here ({command}: {line}); "
            "start munged (systemctl start munge) and rerun"
        )
    if "unable to contact slurm controller" in lowered or "connection refused" in lowered:
        return ToolkitError(f"the SLURM controller does not answer ({command}: {_first_line(stderr)})")
    return ToolkitError(f"{command} failed: {_first_line(stderr)}")


def preflight(config: SlurmConfig, source: Path, cpu_threads: int, oversubscribe: bool) -> None:
    """Refuse, with one line, what would stop the jobs from ever running or the workers from fitting."""
    absent = [name for name in COMMANDS if shutil.which(name) is None]
    if absent:
        raise ToolkitError(
            f"{', '.join(absent)} not found on PATH: --cluster slurm submits and watches jobs with the SLURM "
            "client commands (run on a login node, or install slurm-wlm)"
        )
    done = _slurm_command("sinfo", "-h", "-o", "%P|%c|%m|%l")
    if done.returncode != 0:
        raise _refusal("sinfo", done.stderr)
    partitions: dict[str, list[tuple[int, int, str]]] = {}
    for line in done.stdout.splitlines():
        if line.count("|") == 3:
            name, cpus, memory, limit = line.split("|")
            partitions.setdefault(name.rstrip("*"), []).append((_int(cpus), _int(memory), limit))
    if config.queue not in partitions:
        queues = ", ".join(partitions) or "none"
        raise InputError(source, f"queue {config.queue!r} does not exist; this cluster's queues are {queues}")
    nodes = partitions[config.queue]
    node_cpus, node_memory = max(n[0] for n in nodes), max(n[1] for n in nodes)
    if config.cores > node_cpus:
        raise InputError(
            source, f"cores = {config.cores} per job, but the largest node of {config.queue!r} has {node_cpus}"
        )
    if node_memory and config.memory_mb > node_memory:
        raise InputError(
            source, f"memory = {config.memory} per job, but the largest node of {config.queue!r} has {node_memory} MB"
        )
    limit = nodes[0][2]
    if limit not in ("infinite", "UNLIMITED", "") and config.walltime_s > walltime_seconds(limit):
        raise InputError(source, f"walltime = {config.walltime} exceeds queue {config.queue!r}'s limit of {limit}")
    check_scheduler_address(config, source, _queue_nodes(config.queue))
    if config.processes * cpu_threads > config.cores and not oversubscribe:
        raise InputError(
            source,
            f"{config.processes} worker process(es) per job decoding on cpu_threads = {cpu_threads} need "
            f"{config.processes * cpu_threads} cores, and a job has cores = {config.cores}; raise cores, lower "
            "processes or the recognizers' cpu_threads, or pass --oversubscribe",
        )


def _queue_nodes(queue: str) -> list[str]:
    """The node names of ``queue`` (sinfo, one per line)."""
    done = _slurm_command("sinfo", "-h", "-N", "-p", queue, "-o", "%N")
    return sorted({line.strip() for line in done.stdout.splitlines() if line.strip()})


def _scheduler_address(config: SlurmConfig) -> str:
    """The address the run's scheduler will listen on: ``scheduler_host``, the first IPv4 address of
    ``scheduler_interface`` (else of ``interface``), or what Dask picks (the address of the default route;
    127.0.0.1 without one)."""
    import psutil
    from distributed.utils import get_ip

    if config.scheduler_host:
        return config.scheduler_host
    # Without either, dask-jobqueue puts the scheduler on the workers' interface when one is set.
    interface = config.scheduler_interface or config.interface
    if interface:
        addresses = psutil.net_if_addrs().get(interface, [])
        return next((a.address for a in addresses if a.family == socket.AF_INET), "")
    with warnings.catch_warnings():  # no route out: Dask warns as it falls back to 127.0.0.1, which is refused
        warnings.simplefilter("ignore", RuntimeWarning)
        return str(get_ip())


def check_scheduler_address(config: SlurmConfig, source: Path, nodes: list[str]) -> None:
    """Refuse a scheduler address the jobs could not reach: not this machine's, an interface it lacks, or a
    loopback address while the queue has nodes other than this one."""
    import psutil

    interfaces = psutil.net_if_addrs()
    name = "scheduler_interface" if config.scheduler_interface else "" if config.scheduler_host else "interface"
    interface = getattr(config, name) if name else ""
    if interface and interface not in interfaces:
        also = (
            ""
            if config.scheduler_interface
            else " (with neither scheduler_host nor scheduler_interface set, the scheduler listens on the workers' "
            "interface)"
        )
        raise InputError(
            source,
            f"{name} = {interface!r} is not a network interface of this machine{also} (it has "
            f"{', '.join(sorted(interfaces))})",
        )
    address = _scheduler_address(config)
    if interface and not address:
        raise InputError(source, f"{name} = {interface!r} has no IPv4 address")
    if config.scheduler_host:
        try:
            with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as probe:
                probe.bind((address, 0))
        except OSError as error:
            raise InputError(
                source,
                f"scheduler_host = {address!r} is not an address of this machine, so the scheduler cannot listen "
                f"on it ({error.strerror or error})",
            ) from None
    here = socket.gethostname().split(".")[0]
    others = [node for node in nodes if node != here]
    if others and _loopback(address):
        chosen = next((n for n in ("scheduler_host", "scheduler_interface", "interface") if getattr(config, n)), "")
        where = (
            f"{chosen} = {getattr(config, chosen)!r} is"
            if chosen
            else "with neither scheduler_host nor scheduler_interface set, Dask picks"
        )
        raise InputError(
            source,
            f"{where} the loopback address {address}, which jobs on {', '.join(others[:3])}"
            f"{' ...' if len(others) > 3 else ''} cannot reach; set scheduler_host or scheduler_interface to this "
            "machine's address on the cluster's network",
        )


def _loopback(address: str) -> bool:
    """Whether ``address`` (an IP address or a host name, resolved here) is a loopback address."""
    import ipaddress

    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        pass
    try:
        return ipaddress.ip_address(socket.gethostbyname(address)).is_loopback
    except (OSError, ValueError):
        return False


def _int(text: str) -> int:
    digits = re.match(r"\d+", text.strip())
    return int(digits.group()) if digits else 0


# --- the jobs of one run --------------------------------------------------------------------


@dataclass
class JobRecord:
    """What the run saw of one job: its last state (and why SLURM held it), where it ran, when."""

    job_id: str
    state: str = "SUBMITTED"
    reason: str = ""
    node: str = ""
    submitted: float = 0.0
    last_seen: float = 0.0
    recordings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "reason": self.reason, "node": self.node, "recordings": self.recordings}


class SlurmJobs:
    """A ``SLURMCluster`` (its scheduler lives in this process) and every job it submitted in this run."""

    def __init__(self, config: SlurmConfig, source: Path, log_directory: Path, run_folder: Path) -> None:
        import dask
        from dask_jobqueue import SLURMCluster

        self.config = config
        self.source = source
        self.jobs: dict[str, JobRecord] = {}
        self.target = 0
        self._adaptive = None
        self._last_poll = 0.0
        self._launched: dict[str, str] = {}  # worker spec name -> the job id submitted for it
        self._no_worker_since: float | None = None
        self._submitted_at: float | None = None
        self.first_worker_s: float | None = None  # from submission to the first worker joining (queue wait)
        self.job_name = job_name(run_folder)
        self.leftovers: list[str] = []  # jobs of an earlier coordinator of this run folder, cancelled
        self._dask_config = dask.config.set(
            {
                # A lost job is closed (and may be replaced) this long after its worker left, not 15 s.
                "distributed.deploy.lost-worker-timeout": "2s",
                # A worker that stops answering (its node lost, its network cut) is given up this long after
                # its last heartbeat, not 5 minutes, and its recording rescheduled.
                "distributed.scheduler.worker-ttl": f"{config.node_timeout_s:g}s",
                # Dask sizes an adaptive cluster by expected task time; a recording is long work, so
                # every waiting recording asks for a worker of its own (within minimum_jobs and jobs).
                "distributed.scheduler.default-task-durations": {"ablate": "1h"},
            }
        )
        self._dask_config.__enter__()
        scheduler_options: dict[str, Any] = {"dashboard_address": None}
        if config.scheduler_host:
            scheduler_options["host"] = config.scheduler_host
        if config.scheduler_interface:
            scheduler_options["interface"] = config.scheduler_interface
        # Worker processes must be allowed children (their model services); the services get the
        # coordinator's thread variables through the work plan (toolkit.pipeline.cluster).
        prologue = ["export DASK_DISTRIBUTED__WORKER__DAEMON=False", *config.job_script_prologue]
        log_directory.mkdir(parents=True, exist_ok=True)
        try:
            self.cluster = SLURMCluster(
                queue=config.queue,
                account=config.account or None,
                cores=config.processes,  # one task thread per worker process: one recording at a time
                processes=config.processes,
                job_cpu=config.cores,
                memory=config.memory,
                walltime=config.walltime,
                job_name=self.job_name,
                job_script_prologue=prologue,
                job_extra_directives=list(config.job_extra_directives),
                python=config.python or sys.executable,
                interface=config.interface or None,
                local_directory=config.local_directory or None,
                log_directory=str(log_directory),
                scheduler_options=scheduler_options,
            )
        except Exception as error:
            self._dask_config.__exit__(None, None, None)
            raise InputError(source, f"dask-jobqueue refused the cluster file: {error}") from None
        self.log_directory = log_directory
        self.job_script = self.cluster.job_script()

    @property
    def address(self) -> str:
        return self.cluster.scheduler_address

    def test_submission(self) -> None:
        """``sbatch --test-only`` on the job script: SLURM's own verdict on account, queue, limits, directives."""
        script = self.log_directory / ".ablate-test-only.sh"
        script.write_text(self.job_script, encoding="utf-8")
        try:
            done = _slurm_command("sbatch", "--test-only", str(script))
        finally:
            script.unlink(missing_ok=True)
        if done.returncode != 0:
            raise (
                _refusal("sbatch --test-only", done.stderr)
                if "munge" in done.stderr.lower()
                else InputError(self.source, f"SLURM refuses the job this file asks for: {_first_line(done.stderr)}")
            )

    def submit(self, recordings: int) -> None:
        """Cancel the jobs an earlier coordinator of this run folder left (killed, it could not), then ask for
        the jobs ``recordings`` left need (never more than ``jobs``)."""
        import getpass

        done = _slurm_command("squeue", "-h", "-u", getpass.getuser(), "-n", self.job_name, "-o", "%i")
        self.leftovers = sorted(done.stdout.split(), key=int)
        if self.leftovers:
            _slurm_command("scancel", *self.leftovers)
        self.target = self._jobs_for(recordings)
        if self.config.scale == "adaptive":
            self._adaptive = self.cluster.adapt(
                minimum_jobs=self.config.minimum_jobs, maximum_jobs=self.config.jobs, interval="2s", wait_count=3
            )
        else:
            self.cluster.scale(jobs=self.target)
        self._no_worker_since = self._submitted_at = time.monotonic()

    def _jobs_for(self, recordings: int) -> int:
        return max(1, min(self.config.jobs, -(-recordings // self.config.processes)))

    def housekeep(self, recordings_left: int, workers: int) -> str | None:
        """Every few seconds while the run waits: note job states, replace ended jobs (fixed policy, only
        while work is left), and say why the run must give up when it has had no worker for too long."""
        now = time.monotonic()
        if now - self._last_poll >= 3.0:
            self._last_poll = now
            self._poll()
            if self.config.scale == "fixed" and recordings_left:
                self._replace_ended(self._jobs_for(recordings_left))
        if workers:
            if self.first_worker_s is None and self._submitted_at is not None:
                self.first_worker_s = round(now - self._submitted_at, 2)
            self._no_worker_since = None
            return None
        if self._no_worker_since is None:
            self._no_worker_since = now
        if now - self._no_worker_since < self.config.start_timeout_s:
            return None
        self._poll()
        waiting = [j for j in self.jobs.values() if j.state not in ENDED]
        held = "; ".join(f"job {j.job_id} {j.state}" + (f" ({j.reason})" if j.reason else "") for j in waiting)
        ended = "; ".join(f"job {j.job_id} {j.state}" for j in self.jobs.values() if j.state in ENDED)
        return (
            f"no SLURM job has run a worker for {self.config.start_timeout_s:g} s (start_timeout_s in "
            f"{self.source}): {held or 'no job waiting'}{'; ended: ' + ended if ended else ''}; "
            f"job output in {self.log_directory}; rerun when the queue has room: finished results are kept"
        )

    def _replace_ended(self, wanted: int) -> None:
        """Forget the jobs that ended (lost with their node, cancelled, over their walltime) and submit new ones
        up to ``wanted``; a running job is never given back here, busy or not (a fixed number of jobs)."""
        spec = self.cluster.worker_spec
        for name in [n for n in spec if n in self._launched and n not in self.cluster.workers]:
            del spec[name]
            del self._launched[name]
        if len(spec) < wanted:
            self.target = wanted
            self.cluster.scale(jobs=wanted)

    def _poll(self) -> None:
        """Learn new job ids from the cluster and every known job's state from squeue."""
        now = time.monotonic()
        for name, job in list(self.cluster.workers.items()):
            job_id = getattr(job, "job_id", None)
            if job_id:
                self._launched[name] = job_id
            if job_id and job_id not in self.jobs:
                self.jobs[job_id] = JobRecord(job_id, submitted=now)
        if not self.jobs:
            return
        done = subprocess.run(
            ["squeue", "-h", "-t", "all", "-j", ",".join(self.jobs), "-o", "%i|%T|%r|%N"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        for line in done.stdout.splitlines():
            parts = line.split("|")
            if len(parts) == 4 and parts[0] in self.jobs:
                record = self.jobs[parts[0]]
                record.state, record.node, record.last_seen = parts[1], parts[3] or record.node, now
                record.reason = "" if parts[2] in ("None", "(null)") else parts[2]

    def refresh(self) -> None:
        """Learn every job's state now (for a message about jobs that ended)."""
        self._poll()

    def note_recording(self, job_id: str, node: str, recording: str) -> None:
        """A worker of job ``job_id`` on ``node`` ran ``recording`` to its end (finished or failed)."""
        record = self.jobs.setdefault(job_id, JobRecord(job_id))
        record.node = node or record.node
        record.recordings.append(recording)

    def to_json(self) -> dict[str, Any]:
        self._poll()
        return {
            "config": self.config.to_json(),
            "config_file": str(self.source),
            "job_script": self.job_script,
            "log_directory": str(self.log_directory),
            "first_worker_s": self.first_worker_s,
            "job_name": self.job_name,
            "earlier_jobs_cancelled": self.leftovers,
            "jobs": {job_id: record.to_json() for job_id, record in sorted(self.jobs.items(), key=lambda i: int(i[0]))},
        }

    def close(self) -> None:
        """Cancel every job of this run and stop the scheduler."""
        try:
            if self._adaptive is not None:
                self._adaptive.stop()
            self._poll()
            self.cluster.close()
        finally:
            self._dask_config.__exit__(None, None, None)
