"""A multi-node SLURM on this machine for tests and benchmarks: every "host" a network and UTS namespace, as root.

A ``login`` namespace holds a private bridge (``br0``, 10.213.0.1/24) and runs slurmctld and the
coordinating ``ablate run`` (so the Dask scheduler listens on the bridge address); each of the
hosts ``node1`` ... ``nodeN`` is its own network and UTS namespace (its own hostname and an
address 10.213.0.1N on a veth pair whose other end is on the bridge) running one slurmd with one
CPU. Nothing is created in this machine's own network namespace: the bridge and the veths live
and die with the namespaces, which last as long as the processes in them. munged runs here, and
its socket (a file) is shared by every namespace, as is the file system (a shared file system);
a host made with ``private_mounts`` gets its own mount namespace, so a path can be hidden on it.
docs/scale.md has the recipe; tests/single_node_slurm.py is the one-node version.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from single_node_slurm import DAEMONS, PARTITION, SingleNodeSlurm
from single_node_slurm import missing as single_node_missing

SUBNET = "10.213.0"
LOGIN_ADDRESS = f"{SUBNET}.1"
BRIDGE = "br0"


def missing() -> str | None:
    """What this machine lacks to start the namespace cluster, as one line (None: nothing)."""
    problem = single_node_missing()
    if problem is not None:
        return problem
    absent = [name for name in ("unshare", "nsenter", "ip") if shutil.which(name) is None]
    if absent:
        return f"namespace commands missing: {', '.join(absent)} (util-linux, iproute2)"
    probe = subprocess.run(
        ["unshare", "--net", "--uts", "--mount", "ip", "link", "add", "probe0", "type", "bridge"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"this kernel refuses network namespaces with a bridge ({(probe.stderr or 'unshare failed').strip()})"
    return None


def host_address(index: int) -> str:
    """The bridge address of host ``node<index>`` (1-based)."""
    return f"{SUBNET}.{10 + index}"


@dataclass
class Namespace:
    """One simulated machine: the pid of the process holding its namespaces, its hostname and address."""

    name: str
    address: str
    holder: subprocess.Popen
    private_mounts: bool = False

    def enter(self) -> list[str]:
        """The command prefix that runs a command inside this machine's namespaces."""
        return [
            "nsenter",
            f"--target={self.holder.pid}",
            "--net",
            "--uts",
            *(["--mount"] if self.private_mounts else []),
        ]

    def run(self, *args: str) -> None:
        """Run one command inside this machine's namespaces; RuntimeError with its message if it fails."""
        done = subprocess.run([*self.enter(), *args], capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"{self.name}: {' '.join(args)}: {done.stderr.strip()}")

    def processes(self) -> list[int]:
        """Every process inside this machine's network namespace but its holder."""
        mine = os.readlink(f"/proc/{self.holder.pid}/ns/net")
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != self.holder.pid:
                try:
                    if os.readlink(entry / "ns" / "net") == mine:
                        found.append(int(entry.name))
                except OSError:  # ended meanwhile
                    continue
        return found

    def kill_all(self) -> None:
        """SIGKILL every process in this machine (as a power cut would), then its holder: the namespace goes."""
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.holder.poll() is None:
            self.holder.kill()
            self.holder.wait()


def _die_with_parent() -> None:
    """In the holder, before it runs: SIGKILL it when the process that started it ends (a test run killed
    outright leaves no idle holder behind)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _namespace(name: str, address: str, private_mounts: bool = False) -> Namespace:
    """A new network and UTS (and, if asked, mount) namespace named ``name``, its loopback up."""
    holder = subprocess.Popen(
        [
            "unshare",
            "--net",
            "--uts",
            *(["--mount", "--propagation", "private"] if private_mounts else []),
            "sleep",
            "infinity",
        ],
        stdin=subprocess.DEVNULL,
        preexec_fn=_die_with_parent,
    )
    deadline = time.monotonic() + 10
    while os.readlink(f"/proc/{holder.pid}/ns/net") == os.readlink("/proc/self/ns/net"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name}: unshare did not make a network namespace")
        time.sleep(0.05)
    space = Namespace(name, address, holder, private_mounts)
    space.run("hostname", name)
    space.run("ip", "link", "set", "lo", "up")
    return space


@dataclass
class MultiNodeSlurm(SingleNodeSlurm):
    """A running namespace cluster: slurmctld in ``login``, one slurmd per host, clients run in ``login``."""

    login: Namespace | None = None
    hosts: dict[str, Namespace] = field(default_factory=dict)

    @property
    def address(self) -> str:
        """Where the coordinator (and its Dask scheduler) is reached from the hosts: the bridge's address."""
        return LOGIN_ADDRESS

    def in_login(self) -> list[str]:
        """The prefix that runs a command on the login machine (where ``ablate run`` must run)."""
        assert self.login is not None
        return self.login.enter()

    def command(self, *args: str, check: bool = True) -> str:
        """Run a SLURM client command on the login machine; its standard output."""
        done = subprocess.run([*self.in_login(), *args], env=self.env, capture_output=True, text=True, timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def node_states(self) -> dict[str, str]:
        """Node name -> state as slurmctld sees it."""
        out = self.command("sinfo", "-h", "-N", "-o", "%N %T", check=False)
        return dict(line.split() for line in out.splitlines() if line.strip())

    def lose(self, name: str) -> None:
        """Host ``name`` is lost: its veth is cut (the bridge no longer reaches it), then every process on it,
        slurmd and its jobs' workers included, is killed."""
        assert self.login is not None
        self.login.run("ip", "link", "del", f"v{name}")
        self.processes.pop(f"slurmd@{name}", None)
        self.hosts.pop(name).kill_all()

    def _idle(self) -> bool:
        states = self.node_states()
        return len(states) == len(self.hosts) and all(s in ("idle", "mixed", "allocated") for s in states.values())


def _write_config(folder: Path, hosts: list[str], memory_mb: int) -> Path:
    for sub in ("state", "spool", "log"):
        (folder / sub).mkdir()
    conf = folder / "slurm.conf"
    nodes = [
        f"NodeName={h} NodeAddr={host_address(i + 1)} CPUs=1 RealMemory={memory_mb} State=UNKNOWN"
        for i, h in enumerate(hosts)
    ]
    conf.write_text(
        "\n".join(
            [
                "ClusterName=ablatemulti",
                f"SlurmctldHost=login({LOGIN_ADDRESS})",
                "SlurmUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={folder / 'munge.socket'}",
                f"StateSaveLocation={folder / 'state'}",
                # One file system for every host: what each slurmd writes is named by its node (%n).
                f"SlurmdSpoolDir={folder / 'spool' / '%n'}",
                f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
                f"SlurmdPidFile={folder / 'slurmd-%n.pid'}",
                f"SlurmctldLogFile={folder / 'log' / 'slurmctld.log'}",
                f"SlurmdLogFile={folder / 'log' / 'slurmd-%n.log'}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "JobAcctGatherType=jobacct_gather/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SchedulerType=sched/backfill",
                # The hosts share this machine's cores: each says it has one CPU, whatever it counts.
                "SlurmdParameters=config_overrides",
                "ReturnToService=2",
                "MpiDefault=none",
                "KillWait=5",
                "MinJobAge=3600",
                # A host that stops answering is marked DOWN (its jobs NODE_FAIL) after this many seconds.
                "SlurmdTimeout=10",
                *nodes,
                f"PartitionName={PARTITION} Nodes={','.join(hosts)} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        ),
        encoding="utf-8",
    )
    return conf


@contextmanager
def multi_node_slurm(
    parent: Path | None = None, hosts: int = 3, private_mounts: tuple[str, ...] = (), memory_mb: int = 6000
) -> Iterator[MultiNodeSlurm]:
    """Start the namespace cluster (``hosts`` hosts; those named in ``private_mounts`` with their own mount
    namespace) in a fresh folder; afterwards cancel every job, stop every daemon and end every namespace."""
    problem = missing()
    if problem is not None:
        raise RuntimeError(problem)
    folder = Path(tempfile.mkdtemp(prefix="slurm-multi-", dir=parent))
    names = [f"node{i + 1}" for i in range(hosts)]
    slurm = MultiNodeSlurm(folder, _write_config(folder, names, memory_mb), "login", 1, memory_mb)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    try:
        slurm.start_munge()
        slurm.login = _namespace("login", LOGIN_ADDRESS)
        slurm.login.run("ip", "link", "add", BRIDGE, "type", "bridge")
        slurm.login.run("ip", "addr", "add", f"{LOGIN_ADDRESS}/24", "dev", BRIDGE)
        slurm.login.run("ip", "link", "set", BRIDGE, "up")
        for index, name in enumerate(names, start=1):
            host = _namespace(name, host_address(index), name in private_mounts)
            slurm.hosts[name] = host
            slurm.login.run(
                "ip", "link", "add", f"v{name}", "type", "veth", "peer", "name", "eth0", "netns", str(host.holder.pid)
            )
            slurm.login.run("ip", "link", "set", f"v{name}", "master", BRIDGE, "up")
            host.run("ip", "addr", "add", f"{host.address}/24", "dev", "eth0")
            host.run("ip", "link", "set", "eth0", "up")
        slurm._start("slurmctld", [*slurm.in_login(), "slurmctld", "-D", "-i", "-f", str(slurm.conf)])
        for name, host in slurm.hosts.items():
            slurm._start(f"slurmd@{name}", [*host.enter(), "slurmd", "-D", "-f", str(slurm.conf)])
        slurm._wait(slurm._idle, "every host to come up idle", timeout_s=60)
        yield slurm
    finally:
        if "slurmctld" in slurm.processes and "munged" in slurm.processes and slurm.login is not None:
            slurm.command("scancel", "--full", "--user", "root", check=False)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(
                state in ("RUNNING", "PENDING", "COMPLETING", "CONFIGURING") for state in slurm.jobs().values()
            ):
                time.sleep(0.5)
        for name in [n for n in slurm.processes if n.startswith("slurmd@")]:
            slurm.stop(name)
        for name in reversed(DAEMONS):
            slurm.stop(name)
        for host in [*slurm.hosts.values(), *([slurm.login] if slurm.login else [])]:
            host.kill_all()
        shutil.rmtree(folder, ignore_errors=True)
