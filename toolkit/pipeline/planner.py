"""What a full run will cost, from what a tuning run measured (``ablate plan``).

For each arm the tuning run measured, in its workers, the wall time of every decode, VAD pass and
enhancement over the recording's audio time (its real-time factor, RTF, with the recognizers'
``cpu_threads`` cores each) and how long starting a worker's models took. A full run of ``hours``
of audio in recordings like the tuning ones, on ``nodes`` x ``cores`` (workers of ``cpu_threads``
cores each) or on ``gpus`` (one worker per GPU), then takes per arm:

- ``wall = loads + ceil(recordings / workers) x (recording seconds x RTF + overhead)``: every worker
  loads its models once, recordings go to workers in rounds (longest first in practice, so the
  last round is the shortest), and each recording pays the scheduler and data-movement overhead;
- ``core-hours = workers x cpu_threads x wall`` (what a queue bills for jobs held for the whole
  run; GPU-hours likewise per GPU).

All arms in one run start each model service once per worker, and a decode, VAD pass or enhancement
two arms share is computed once: the run's stored outputs name each unit of work by its cache key, so
the all-arms RTF counts every key once (outputs written before keys were recorded give the sum of the
arms' RTFs, an upper bound, and the plan says so). Where the tuning run was measured on a CPU, a GPU
plan is refused: its RTFs say nothing about a GPU.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError
from toolkit.core.json_records import record_to_json
from toolkit.runs.folder import RunFolder
from toolkit.runs.record import RunRecord

# Scheduler and data-movement overhead per recording (s): measured on the single-node SLURM
# (benchmarks/bench_slurm.py, docs/scale.md); a cluster file system may cost more.
OVERHEAD_S = 2.0


@dataclass(frozen=True)
class ArmCost:
    """One arm as the tuning run measured it: audio seconds, compute wall and CPU seconds, cores per task."""

    arm: str
    audio_s: float
    wall_s: float
    cpu_s: float
    threads: int
    services: tuple[tuple[str, float], ...]  # the model services this arm starts, each with its load (s)

    @property
    def rtf(self) -> float:
        return self.wall_s / self.audio_s if self.audio_s else 0.0

    @property
    def load_s(self) -> float:
        """Starting this arm's model services once in one worker."""
        return sum(load for _, load in self.services)


@dataclass(frozen=True)
class Resources:
    """Where the full run goes: ``nodes`` x ``cores`` for CPU workers, or ``gpus``."""

    nodes: int = 1
    cores: int = 1
    gpus: int = 0

    def workers(self, threads: int) -> int:
        if self.gpus:
            return self.gpus
        return self.nodes * max(1, self.cores // threads)

    def describe(self) -> str:
        return f"{self.gpus} GPU(s)" if self.gpus else f"{self.nodes} node(s) x {self.cores} cores"


@dataclass(frozen=True)
class ArmPlan:
    arm: str
    rtf: float
    threads: int
    workers: int
    recording_s: float
    wall_h: float
    resource_h: float  # core-hours, or GPU-hours
    audio_hours_per_wall_hour: float

    def to_json(self) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Plan:
    hours: float
    recordings: int
    resources: Resources
    device: str
    source: Path
    arms: list[ArmPlan]
    together: ArmPlan  # every arm in one run
    loads: tuple[float, ...] = ()  # one worker's model loads per arm, as measured
    shared_counted_once: bool = False  # together's RTF counts each shared unit once (else: the arms' sum)

    def to_json(self) -> dict[str, Any]:
        return {
            "hours": self.hours,
            "recordings": self.recordings,
            "resources": asdict(self.resources),
            "measured_on": self.device,
            "tuning_run": str(self.source),
            "arms": [a.to_json() for a in self.arms],
            "all_arms": self.together.to_json(),
        }

    def table(self) -> str:
        unit = "GPU-h" if self.resources.gpus else "core-h"
        lines = [
            f"plan: {self.hours:g} h of audio in {self.recordings} recordings of {self.arms[0].recording_s / 60:.1f} "
            f"min on {self.resources.describe()}, from {self.source} (measured on {self.device})",
            f"{'arm':28} {'RTF':>7} {'cores':>5} {'workers':>7} {'wall h':>8} {unit:>9} {'audio h/wall h':>14}",
        ]
        for row in [*self.arms, self.together]:
            lines.append(
                f"{row.arm:28} {row.rtf:7.4f} {row.threads:5d} {row.workers:7d} {row.wall_h:8.2f} "
                f"{row.resource_h:9.1f} {row.audio_hours_per_wall_hour:14.1f}"
            )
        if not any(c > 0 for c in self.loads):
            lines.append(
                "model loads: none in that run (its results were reused, nothing was loaded); counted as 0 s: plan "
                "from a run that loaded its models (the first run of a tuning split) for them"
            )
        lines.append(
            f"wall = model loads + rounds of recordings x (recording x RTF + {OVERHEAD_S:g} s overhead); {unit} = "
            "workers x cores x wall (jobs held for the whole run); all arms: each model loads once, "
            + (
                "and a decode, VAD pass or enhancement that arms share counts once"
                if self.shared_counted_once
                else "the arms' RTFs add up (an upper bound: that run's outputs do not name their units of work)"
            )
        )
        return "\n".join(lines)


def measured_costs(run: Path) -> tuple[list[ArmCost], float, str]:
    """Per arm what the run measured, the mean recording length (s), and what it ran on (device, CPU, ISA)."""
    typed = RunFolder(run).read_record()  # checked: a malformed run.json is one line naming it
    config = record_to_json(typed.config)
    identities = config["recognizers"]
    devices = {runtime.get("device", "cpu") for runtime in config.get("recognizer_runtime", {}).values()}
    loads = _loads(typed)
    costs = []
    for arm in config["arms"]:
        rows = [m for m in typed.measurements if m.arm == arm["name"]]
        names = typed.config.recognizers_of(arm)
        if not names:  # an imported arm: read from its files, decoded elsewhere, nothing here to plan
            continue
        threads = max(int(identities[n]["decoding"].get("cpu_threads", 1)) for n in names)
        stage_names = {c["name"] for c in arm["components"]}
        services = tuple((k, v) for k, v in loads.items() if k in names or k.split(" ", 1)[-1] in stage_names)
        costs.append(
            ArmCost(
                arm["name"],
                sum(r.duration_s for r in rows),
                sum(r.wall_s or 0.0 for r in rows),
                sum(r.cpu_s or 0.0 for r in rows),
                threads,
                services,
            )
        )
    durations = {m.recording: m.duration_s for m in typed.measurements}
    mean = sum(durations.values()) / len(durations)
    if "cuda" in devices:
        gpus = {r.get("gpu") for r in config.get("recognizer_runtime", {}).values() if r.get("device") == "cuda"}
        return costs, mean, f"cuda ({', '.join(sorted(str(g) for g in gpus))})"
    runtimes = config.get("recognizer_runtime", {}).values()
    isas = {r.get("isa") for r in runtimes if "isa" in r}  # an external command runs its own code: none
    cpu = (typed.hardware and typed.hardware.cpu) or "an unnamed CPU"
    return costs, mean, f"cpu ({cpu}, CTranslate2 ISA {', '.join(sorted(str(i) for i in isas))})"


def _loads(record: RunRecord) -> dict[str, float]:
    """Model load per service name (``whisper_base``, ``vad vad``), one worker's worth (the slowest)."""
    loads: dict[str, float] = {}
    for name, load in record.service_loads():
        service = name.split(" on ", 1)[0].split(" #", 1)[0]
        loads[service] = max(loads.get(service, 0.0), load.ready_wall_s)
    return loads


def make_plan(
    run: Path,
    hours: float,
    resources: Resources,
    recording_minutes: float | None = None,
    overhead_s: float = OVERHEAD_S,
) -> Plan:
    """The full run's wall time and core- (GPU-) hours per arm and for every arm at once."""
    if not hours > 0:
        raise InputError(None, f"--hours must be a positive number of hours of audio, not {hours}")
    costs, mean_s, device = measured_costs(run)
    if not costs:
        raise InputError(
            run / "run.json", "every arm of this run is imported (decoded elsewhere): there is no decoding to plan"
        )
    if resources.gpus and not device.startswith("cuda"):
        raise InputError(
            run / "run.json",
            f"the tuning run was measured on a {device}, so its RTFs say nothing about a GPU; run the tuning "
            'split with device = "cuda" on one GPU and plan from that run',
        )
    if not resources.gpus and device.startswith("cuda"):
        raise InputError(run / "run.json", "the tuning run was measured on a GPU; plan it with --gpus")
    recording_s = recording_minutes * 60 if recording_minutes else mean_s
    recordings = max(1, math.ceil(hours * 3600 / recording_s))

    def estimate(name: str, rtf: float, threads: int, load_s: float) -> ArmPlan:
        workers = min(resources.workers(threads), recordings)
        rounds = math.ceil(recordings / workers)
        wall = load_s + rounds * (recording_s * rtf + overhead_s)
        cores = 1 if resources.gpus else threads
        return ArmPlan(
            name, rtf, threads, workers, recording_s, wall / 3600, workers * cores * wall / 3600, hours / (wall / 3600)
        )

    arms = [estimate(c.arm, c.rtf, c.threads, c.load_s) for c in costs]
    threads = max(c.threads for c in costs)
    services = dict(service for c in costs for service in c.services)  # a worker starts each one once
    shared = shared_rtf(run, [c.arm for c in costs])
    rtf = shared if shared is not None else sum(c.rtf for c in costs)
    together = estimate("all arms", rtf, threads, sum(services.values()))
    loads = tuple(c.load_s for c in costs)
    return Plan(hours, recordings, resources, device, run, arms, together, loads, shared is not None)


def shared_rtf(run: Path, arms: list[str]) -> float | None:
    """The RTF of all ``arms`` in one run, each unit of work they share counted once, from the run's
    stored outputs; None when an output is missing or from before units of work were recorded."""
    folder = RunFolder(run)
    record = folder.read_record()
    durations = {m.recording: m.duration_s for m in record.measurements}
    wall_s = 0.0
    for recording in durations:
        work: dict[str, float] = {}
        for arm in arms:
            try:
                stored = folder.read_arm_output(arm, recording)
            except InputError:  # missing, damaged, or from before units of work were recorded
                return None
            work.update({key: unit.wall_s for key, unit in stored.work.items()})
        wall_s += sum(work.values())
    audio_s = sum(durations.values())
    return wall_s / audio_s if audio_s else None
