"""Run the arms of an experiment over one split of its frozen manifest.

The manifest is verified and every model resolved before any decoding starts. Each
(recording, arm) result is written as soon as it is finished, its full output file last,
so an interrupted run resumes where it stopped and an unchanged rerun reads everything
back without loading audio or decoding. Each recognizer, enhancer and VAD works in its own
worker process (toolkit.pipeline.workers), so per-arm memory and model load time are measured on
their own. Recordings run one after the other here (toolkit.pipeline.recording), or several at
once on a Dask cluster (toolkit.pipeline.cluster, ``workers`` or ``scheduler``).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from toolkit.audio.dither import Dither
from toolkit.core.config import build_config
from toolkit.core.errors import InputError
from toolkit.core.files import config_hash, sha256_file
from toolkit.core.names import unknown_name
from toolkit.pipeline.cache import ResultCache, dither_identity
from toolkit.pipeline.cluster import Cluster, ClusterRun
from toolkit.pipeline.cluster_worker import WorkPlan
from toolkit.pipeline.code_version import code_digest
from toolkit.pipeline.environment import hardware, library_versions
from toolkit.pipeline.experiment import Arm, Experiment
from toolkit.pipeline.measure import Measurement
from toolkit.pipeline.placement import Placement, worker_memory_mb
from toolkit.pipeline.recognizers import RecognizerPool
from toolkit.pipeline.recording import RecordingResult, ResultGuard, run_recording, stored_output, times
from toolkit.pipeline.runlock import RunLock
from toolkit.pipeline.runner import ArmRunner, reuse_counts
from toolkit.runs.arm_output_file import Reuse
from toolkit.runs.folder import RunFolder
from toolkit.runs.record import ArmFailure, ManifestUse, RecordingFailure, RunConfig, RunRecord, RuntimeRow, stored_path

if TYPE_CHECKING:
    from toolkit.corpus.manifest import RecordingEntry
    from toolkit.pipeline.slurm import ClusterFile


@dataclass
class RunSummary:
    """Where a run landed, what it reused at each level, and what it spent.

    ``computed``/``reused`` count (arm, recording) results; ``units`` counts, inside the results
    computed in this run, the decodes, VAD passes and enhancements computed or taken from the cache.
    ``failures`` are recordings that could not be finished at all; ``arm_failures`` the arms a stage
    failed for on a recording (the other arms of that recording finished).
    """

    folder: RunFolder
    split: str
    arms: list[str]
    recordings: list[str]
    computed: int = 0
    reused: int = 0
    units: dict[str, dict[str, int]] = field(default_factory=reuse_counts)
    this_run: Measurement = field(default_factory=Measurement)
    measured: Measurement = field(default_factory=Measurement)
    load_wall_s: float = 0.0
    rows: list[RuntimeRow] = field(default_factory=list)
    failures: list[RecordingFailure] = field(default_factory=list)
    arm_failures: list[ArmFailure] = field(default_factory=list)

    @property
    def failed_arms(self) -> list[str]:
        """Arms that failed on at least one recording, in arm order."""
        failed = {f.arm for f in self.arm_failures}
        return [arm for arm in self.arms if arm in failed]

    def add(self, result: RecordingResult) -> None:
        """Count one recording's results (call in manifest order: rows keep that order)."""
        if result.failure is not None:
            self.failures.append(RecordingFailure(result.recording, result.failure))
            return
        self.arm_failures.extend(result.arm_failures)
        self.computed += result.computed
        self.reused += result.reused
        for kind, counts in result.units.items():
            for outcome, count in counts.items():
                self.units[kind][outcome] += count
        self.this_run.add(result.this_run)
        self.measured.add(result.measured)
        self.rows.extend(result.rows)

    def reuse(self) -> dict[str, Reuse]:
        """Results and units made and reused, per level, as run.json keeps them."""
        return {"arm_results": Reuse(self.computed, self.reused), **{k: Reuse(**c) for k, c in self.units.items()}}

    def describe(self) -> str:
        """One line for the terminal: reuse per level, what this run spent, what the results cost when made."""
        units = ", ".join(f"{kind} {c['computed']} computed/{c['reused']} reused" for kind, c in self.units.items())
        failed = (
            f"{len(self.failures)} of {len(self.recordings)} recordings FAILED "
            f"({', '.join(f.recording for f in self.failures)}); "
            if self.failures
            else ""
        )
        for arm in self.failed_arms:
            count = sum(f.arm == arm for f in self.arm_failures)
            failed += f"arm {arm} FAILED on {count} of {len(self.recordings)} recordings; "
        return (
            failed + f"{self.computed} arm results computed, {self.reused} reused; in the computed ones: {units}; "
            f"this run spent {self.this_run.wall_s:.1f} s wall on results (plus {self.load_wall_s:.1f} s "
            f"starting workers and loading models); measured when made, the results cost "
            f"{self.measured.wall_s:.1f} s (a unit shared by two arms counts in both)"
        )


@dataclass
class RunPlan:
    """A run of the chosen arms over a split before anything runs: its configuration, the folder that
    configuration names, and the cache key of every (recording, arm) result."""

    entries: list[RecordingEntry]
    arms: list[Arm]
    manifest_sha256: str
    pool: RecognizerPool
    runner: ArmRunner
    config: dict[str, Any]
    folder: RunFolder
    keys: dict[str, dict[str, str]]

    def missing(self, guard: ResultGuard | None = None) -> set[tuple[str, str]]:
        """The (recording, arm) results the folder does not hold yet (or ``guard`` refuses to reuse)."""
        return {
            (entry.id, arm.name)
            for entry in self.entries
            for arm in self.arms
            if stored_output(self.folder, arm.name, entry.id, self.keys[entry.id][arm.name], guard) is None
        }


def plan_run(experiment: Experiment, split: str, arm_names: list[str] | None, dither: Dither | None) -> RunPlan:
    """The run ``run_experiment`` would make, resolved (manifest verified, every model hashed) but not started."""
    from toolkit.asr.registry import relation
    from toolkit.corpus.manifest import load_manifest

    manifest = load_manifest(experiment.manifest_path)
    manifest.require_verified()
    entries = [entry for entry in manifest.recordings if entry.split == split]
    if not entries:
        splits = list(dict.fromkeys(entry.split for entry in manifest.recordings))
        raise InputError(experiment.manifest_path, unknown_name("split", split, splits))
    arms = experiment.select_arms(arm_names)
    for arm in arms:  # an imported arm's files hash to its record, one for every recording of the split
        if arm.imported is not None:
            arm.imported.verify_files([entry.id for entry in entries])
    pool = RecognizerPool(experiment)
    identities = pool.identities()
    runtimes = pool.runtimes()
    runner = ArmRunner(experiment, ResultCache(experiment.folder / "cache"), pool, arms, dither)
    config: dict[str, Any] = {
        "experiment": experiment.name,
        "experiment_file_sha256": sha256_file(experiment.path),
        "primary": experiment.primary,
        "time_tolerance_s": experiment.time_tolerance_s,
        "seed": experiment.seed,
        "recognizers": identities,
        "recognizer_runtime": runtimes,
        "stage_devices": runner.stage_devices(),
        "recognizer_relations": {
            name: relation(identities[experiment.primary], identity)
            for name, identity in identities.items()
            if name != experiment.primary
        },
        "arms": [arm.to_json() for arm in arms],
    }
    if dither is not None:  # absent otherwise, so an undithered run keeps its folder and keys
        config["dither"] = dither_identity(dither)
    folder = RunFolder(experiment.folder / "runs" / f"{split}-{config_hash([config, manifest.sha256])[:10]}")
    keys = {
        entry.id: {
            arm.name: config_hash(
                {
                    "audio": entry.sha256,
                    "arm": arm.to_json(),
                    "recognizers": identities,
                    "runtime": runtimes,
                    "time_tolerance_s": experiment.time_tolerance_s,
                    "code": code_digest("arm"),
                    **({"dither": config["dither"]} if dither is not None else {}),
                }
            )
            for arm in arms
        }
        for entry in entries
    }
    return RunPlan(entries, arms, manifest.sha256, pool, runner, config, folder, keys)


def finished_run(
    experiment: Experiment, split: str, arm_names: list[str] | None = None, dither: Dither | None = None
) -> RunFolder | None:
    """The folder of this run when it already finished with every result stored, else None: reading it
    back needs no new run, so its ``run.json`` keeps describing the invocation that made it."""
    plan = plan_run(experiment, split, arm_names, dither)
    try:
        record = plan.folder.read_record()
    except InputError:  # none yet, or damaged: not a finished run
        return None
    return plan.folder if record.status == "complete" and not plan.missing() else None


def run_experiment(
    experiment: Experiment,
    split: str,
    arm_names: list[str] | None = None,
    progress: bool = True,
    workers: int = 1,
    scheduler: str | None = None,
    oversubscribe: bool = False,
    guard: ResultGuard | None = None,
    dither: Dither | None = None,
    slurm: ClusterFile | None = None,
) -> RunSummary:
    """Run (or resume) the chosen arms on every recording of ``split``; returns where it landed.

    ``workers`` above 1 decodes that many recordings at once on a local Dask cluster;
    ``scheduler`` (``tcp://HOST:PORT``) sends them to an existing Dask cluster instead, and
    ``slurm`` (a cluster file) to SLURM jobs this run submits (toolkit.pipeline.cluster). Either
    way each recording's results are byte-identical to a one-worker run, and ``run.json`` lists
    them in manifest order. A model starts only when a unit needs it: recordings whose results
    can all be made from the cache are made here, without starting a cluster. ``guard`` (the
    protocol's, on a test split) decides which stored results may be reused and hears of each
    finished recording. ``dither`` (a stability rerun) is added to every recording before any
    stage; it is part of the run's configuration, so a dithered run has its own folder and keys.
    """
    placement = Placement(workers, scheduler, slurm, oversubscribe)
    placement.check()
    planned = plan_run(experiment, split, arm_names, dither)
    entries, arms, folder, keys = planned.entries, planned.arms, planned.folder, planned.keys
    pool, runner = planned.pool, planned.runner
    # (recording, arm) results still to make; recordings without any are read back here, loading nothing.
    missing = planned.missing(guard)
    pending_ids = {e.id for e in entries if any((e.id, a.name) in missing for a in arms)}
    distributed = bool(pending_ids) and placement.distributed
    if distributed:  # checked (threads, memory, the scheduler, SLURM) before the run folder is written
        cluster, plan = _cluster(experiment, planned, placement, _needed(planned, missing), guard, dither)
    parallel = None
    with cluster if distributed else nullcontext():
        lock = RunLock(folder.root).acquire()  # held until this run returns (or its process ends)
        record = _started_record(experiment, split, planned)
        record.write(folder.record)

        summary = RunSummary(folder, split, [a.name for a in arms], [e.id for e in entries])
        results: dict[str, RecordingResult] = {}
        with (
            pool,
            runner.stages,
            tqdm(
                total=len(entries) * len(arms), desc=f"{experiment.name}/{split}", unit="arm", disable=not progress
            ) as bar,
        ):
            done_here: dict[str, int] = {}

            def finished(result: RecordingResult) -> None:
                """The protocol hears of each finished recording (its arms that did not fail), as it finishes."""
                if guard is None or result.failure is not None:
                    return
                earlier = results[result.recording].arm_failures if result.recording in done_here else []
                failed = {f.arm for f in (*result.arm_failures, *earlier)}
                guard.recorded(folder, result.recording, [a.name for a in arms if a.name not in failed])

            # Here, models start when a unit needs one (its load is reported apart). With a cluster, this
            # process only finishes from the cache, until a recording needs a model: that one and every
            # pending one after it go to the cluster (a rerun whose decodes are cached starts none).
            runner.cache_only(distributed)
            sent: list[Any] = []
            for entry in entries:
                if sent and entry.id in pending_ids:
                    sent.append(entry)
                    continue
                results[entry.id] = run_recording(runner, folder, arms, entry, keys[entry.id], bar, guard)
                if results[entry.id].needs_work:
                    sent.append(entry)
                else:
                    finished(results[entry.id])
            if sent:
                done_here.update({e.id: len(results[e.id].rows) + len(results[e.id].arm_failures) for e in sent[:1]})
                cluster.start(len(sent))
                parallel = cluster.run(plan, sent, keys, bar, done_here, finished)
                for entry in sent:
                    remote = parallel.results[entry.id]
                    results[entry.id] = remote.after(results[entry.id]) if entry.id in done_here else remote
    for entry in entries:
        summary.add(results[entry.id])
    summary.load_wall_s = runner.started_wall_s() + (parallel.waited_s() if parallel is not None else 0.0)
    _finished_record(record, summary, planned, parallel).write(folder.record)
    lock.release()
    return summary


def _needed(planned: RunPlan, missing: set[tuple[str, str]]) -> list[str]:
    """The recognizers that results still to make decode with, in the arms' order."""
    return list(
        dict.fromkeys(
            name
            for arm in planned.arms
            for name in planned.runner.recognizers_for(arm)
            if any((e.id, arm.name) in missing for e in planned.entries)
        )
    )


def _cluster(
    experiment: Experiment,
    planned: RunPlan,
    placement: Placement,
    needed: list[str],
    guard: ResultGuard | None,
    dither: Dither | None,
) -> tuple[Cluster, WorkPlan]:
    """The cluster the run's pending recordings go to, and what its workers run; its workers start only once
    a recording needs a model."""
    config = planned.config
    identities = config["recognizers"]
    threads = max(identities[name]["decoding"].get("cpu_threads", 1) for name in needed) if needed else 1
    cluster = Cluster(
        placement, threads, worker_memory_mb(planned.pool.weights_mb(needed)), experiment.folder, planned.folder.root
    )
    plan = WorkPlan(
        experiment.path.resolve(),
        tuple(a.name for a in planned.arms),
        planned.folder.root.resolve(),
        identities,
        config["recognizer_runtime"],
        config["arms"],
        tuple(needed),
        cluster.environ,
        guard=guard,
        dither=dither,
        stage_devices=config["stage_devices"],
        shared_paths=(
            ("run folder", str(planned.folder.root.resolve())),
            ("experiment folder", str(experiment.folder.resolve())),
            *((f"model of {name}", str(path)) for name, path in planned.pool.model_files(needed).items()),
        ),
    )
    return cluster, plan


def _started_record(experiment: Experiment, split: str, planned: RunPlan) -> RunRecord:
    """run.json as a run starts: its configuration, manifest, recordings, libraries and machine."""
    folder = planned.folder
    return RunRecord(
        status="running",
        started=datetime.now(UTC).isoformat(timespec="seconds"),
        split=split,
        config=build_config(RunConfig, planned.config, path=folder.record, where="config", require_all=False),
        manifest=ManifestUse(stored_path(experiment.manifest_path, experiment.folder), planned.manifest_sha256),
        recordings=tuple(entry.id for entry in planned.entries),
        versions=library_versions(),
        hardware=hardware(),
    )


def _finished_record(
    record: RunRecord, summary: RunSummary, planned: RunPlan, parallel: ClusterRun | None
) -> RunRecord:
    """run.json as the run ends: its outcome, measurements, reuse and every model load, here and on the cluster."""
    recognizer_loads = {name: load.stored() for name, load in planned.pool.loads().items()}
    stage_loads = {name: load.stored() for name, load in planned.runner.stages.loads().items()}
    if parallel is not None:
        recognizer_loads.update(parallel.recognizer_loads)
        stage_loads.update(parallel.stage_loads)
    return replace(
        record,
        status="failed" if summary.failures else "complete",
        finished=datetime.now(UTC).isoformat(timespec="seconds"),
        measurements=tuple(summary.rows),
        computed=summary.computed,
        reused=summary.reused,
        failures=tuple(summary.failures),
        arm_failures=tuple(summary.arm_failures),
        reuse=summary.reuse(),
        this_run=times(summary.this_run),
        recognizer_loads=recognizer_loads,
        stage_loads=stage_loads,
        parallel=record.parallel if parallel is None else parallel.to_json(),
    )
