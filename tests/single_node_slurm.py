"""A single-node SLURM on this machine for tests and benchmarks: munged, slurmctld and slurmd, as root.

Everything lives in one temporary folder (``/work/shared/slurm-single-node.md`` is the recipe):
its own munge key and socket (the system's munge, if any, is left alone), a ``slurm.conf``
with this machine's cores and memory, free ports for the two daemons, one node and one
partition (``debug``). The daemons run in the foreground as children of this process and are
stopped by their pids after every job is cancelled. ``SLURM_CONF`` in :attr:`SingleNodeSlurm.env`
points the client commands (``sbatch``, ``squeue``, ``scancel``, ...) at it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

PARTITION = "debug"
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo", "scontrol")


def missing() -> str | None:
    """What this machine lacks to start the single-node SLURM, as one line (None: nothing)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "a single-node SLURM needs root (munged, slurmctld and slurmd run as root)"
    absent = [name for name in (*DAEMONS, *CLIENTS) if shutil.which(name) is None]
    if absent:
        return f"SLURM/munge commands missing: {', '.join(absent)} (apt-get install slurm-wlm munge; scripts/setup.sh)"
    try:
        import dask_jobqueue  # noqa: F401
    except ImportError:
        return "dask-jobqueue is not installed (pip install -e '.[asr]'; scripts/setup.sh)"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


@dataclass
class SingleNodeSlurm:
    """A running single-node SLURM: its folder, configuration, node name and client environment."""

    folder: Path
    conf: Path
    node: str
    cpus: int
    memory_mb: int
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """This process's environment with the client commands pointed at this SLURM."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def command(self, *args: str, check: bool = True) -> str:
        """Run a SLURM client command against this cluster; its standard output."""
        done = subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def jobs(self) -> dict[str, str]:
        """Job id -> state of every job slurmctld still knows."""
        out = self.command("squeue", "-h", "-t", "all", "-o", "%i %T", check=False)
        return dict(line.split() for line in out.splitlines() if line.strip())

    def start_munge(self) -> None:
        self._start(
            "munged",
            [
                "munged",
                "--foreground",
                "--force",
                f"--socket={self.folder / 'munge.socket'}",
                f"--key-file={self.folder / 'munge.key'}",
                f"--pid-file={self.folder / 'munged.pid'}",
                f"--log-file={self.folder / 'log' / 'munged.log'}",
                f"--seed-file={self.folder / 'munged.seed'}",
            ],
        )
        self._wait(lambda: (self.folder / "munge.socket").exists(), "munged to open its socket")

    def stop(self, name: str) -> None:
        """Stop one daemon by the pid of the process started here."""
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _start(self, name: str, command: list[str]) -> None:
        log = open(self.folder / "log" / f"{name}.out", "ab")  # noqa: SIM115 - the daemon writes it while it runs
        self.processes[name] = subprocess.Popen(
            command, env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        log.close()

    def _wait(self, ready, what: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            dead = [name for name, p in self.processes.items() if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                logs = {p.name: p.read_text(errors="replace")[-800:] for p in (self.folder / "log").glob("*")}
                raise RuntimeError(f"single-node SLURM: waiting for {what} failed (ended: {dead}); logs: {logs}")
            time.sleep(0.2)

    def _idle(self) -> bool:
        out = self.command("sinfo", "-h", "-o", "%T", check=False)
        return out.strip() in ("idle", "mixed", "allocated")


def _write_config(folder: Path, node: str, cpus: int, memory_mb: int) -> Path:
    for sub in ("state", "spool", "log"):
        (folder / sub).mkdir()
    conf = folder / "slurm.conf"
    conf.write_text(
        "\n".join(
            [
                "ClusterName=ablatetest",
                f"SlurmctldHost={node}(127.0.0.1)",
                f"SlurmctldPort={_free_port()}",
                f"SlurmdPort={_free_port()}",
                "SlurmUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={folder / 'munge.socket'}",
                f"StateSaveLocation={folder / 'state'}",
                f"SlurmdSpoolDir={folder / 'spool'}",
                f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
                f"SlurmdPidFile={folder / 'slurmd.pid'}",
                f"SlurmctldLogFile={folder / 'log' / 'slurmctld.log'}",
                f"SlurmdLogFile={folder / 'log' / 'slurmd.log'}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "JobAcctGatherType=jobacct_gather/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SchedulerType=sched/backfill",
                "ReturnToService=2",
                "MpiDefault=none",
                # A job over its time limit gets SIGTERM, then SIGKILL this many seconds later.
                "KillWait=5",
                "MinJobAge=3600",
                f"NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN",
                f"PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        ),
        encoding="utf-8",
    )
    return conf


@contextmanager
def single_node_slurm(parent: Path | None = None) -> Iterator[SingleNodeSlurm]:
    """Start munged, slurmctld and slurmd in a fresh folder; cancel every job and stop them after."""
    problem = missing()
    if problem is not None:
        raise RuntimeError(problem)
    folder = Path(tempfile.mkdtemp(prefix="slurm-", dir=parent))
    node = socket.gethostname().split(".")[0]
    cpus = len(os.sched_getaffinity(0))
    memory_mb = _memory_mb() - 1024
    slurm = SingleNodeSlurm(folder, _write_config(folder, node, cpus, memory_mb), node, cpus, memory_mb)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    try:
        slurm.start_munge()
        slurm._start("slurmctld", ["slurmctld", "-D", "-i", "-f", str(slurm.conf)])
        slurm._start("slurmd", ["slurmd", "-D", "-f", str(slurm.conf)])
        slurm._wait(slurm._idle, "the node to come up idle")
        yield slurm
    finally:
        if "slurmctld" in slurm.processes and "munged" in slurm.processes:
            slurm.command("scancel", "--full", "--user", "root", check=False)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(
                state in ("RUNNING", "PENDING", "COMPLETING", "CONFIGURING") for state in slurm.jobs().values()
            ):
                time.sleep(0.5)
        for name in reversed(DAEMONS):
            slurm.stop(name)
        shutil.rmtree(folder, ignore_errors=True)
