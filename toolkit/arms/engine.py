"""Run the arms of an experiment over one split of its frozen manifest.

The manifest is verified and every model resolved before any decoding starts. Each
(recording, arm) result is written as soon as it is finished, its full output file last,
so an interrupted run resumes where it stopped and an unchanged rerun reads everything
back without loading audio or decoding. Each recognizer, enhancer and VAD works in its own
worker process (toolkit.arms.workers), so per-arm memory and model load time are measured on
their own.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from tqdm import tqdm

from toolkit.arms.pipeline import ArmOutput, ArmRunner, reuse_counts
from toolkit.arms.recognizers import RecognizerPool
from toolkit.cache import ResultCache
from toolkit.environment import hardware, library_versions
from toolkit.errors import InputError, ToolkitError
from toolkit.experiment import Arm, Experiment
from toolkit.measure import Measurement, measure
from toolkit.records import Hypothesis
from toolkit.runlock import RunLock
from toolkit.runs import RunFolder
from toolkit.store import atomic_write_json, config_hash, sha256_file


@dataclass
class RunSummary:
    """Where a run landed, what it reused at each level, and what it spent.

    ``computed``/``reused`` count (arm, recording) results; ``units`` counts, inside the results
    computed in this run, the decodes, VAD passes and enhancements computed or taken from the cache.
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
    rows: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)

    def add(self, result: "RecordingResult") -> None:
        """Count one recording's results (call in manifest order: rows keep that order)."""
        if result.failure is not None:
            self.failures.append({"recording": result.recording, "error": result.failure})
            return
        self.computed += result.computed
        self.reused += result.reused
        for kind, counts in result.units.items():
            for outcome, count in counts.items():
                self.units[kind][outcome] += count
        self.this_run.add(result.this_run)
        self.measured.add(result.measured)
        self.rows.extend(result.rows)

    def reuse_json(self) -> dict[str, dict[str, int]]:
        return {"arm_results": {"computed": self.computed, "reused": self.reused}, **self.units}

    def describe(self) -> str:
        """One line for the terminal: reuse per level, what this run spent, what the results cost when made."""
        units = ", ".join(f"{kind} {c['computed']} computed/{c['reused']} reused" for kind, c in self.units.items())
        failed = (f"{len(self.failures)} of {len(self.recordings)} recordings FAILED "
                  f"({', '.join(f['recording'] for f in self.failures)}); " if self.failures else "")
        return (failed + f"{self.computed} arm results computed, {self.reused} reused; in the computed ones: {units}; "
                f"this run spent {self.this_run.wall_s:.1f} s wall on results (plus {self.load_wall_s:.1f} s "
                f"starting workers and loading models); measured when made, the results cost "
                f"{self.measured.wall_s:.1f} s (a unit shared by two arms counts in both)")


def run_experiment(experiment: Experiment, split: str, arm_names: list[str] | None = None,
                   progress: bool = True, workers: int = 1, scheduler: str | None = None,
                   oversubscribe: bool = False) -> RunSummary:
    """Run (or resume) the chosen arms on every recording of ``split``; returns where it landed.

    ``workers`` above 1 decodes that many recordings at once on a local Dask cluster;
    ``scheduler`` (``tcp://HOST:PORT``) sends them to an existing Dask cluster instead
    (toolkit.arms.cluster). Either way each recording's results are byte-identical to a
    one-worker run, and ``run.json`` lists them in manifest order.
    """
    from toolkit.asr.registry import relation
    from toolkit.manifest import load_manifest

    if workers < 1:
        raise ToolkitError(f"--workers must be at least 1, not {workers}")
    if scheduler is not None and workers != 1:
        raise ToolkitError("--workers sizes a local cluster; with --scheduler the cluster's own workers decide")
    manifest = load_manifest(experiment.manifest_path)
    manifest.require_verified()
    entries = [entry for entry in manifest.recordings if entry.split == split]
    if not entries:
        splits = sorted({entry.split for entry in manifest.recordings})
        raise InputError(experiment.manifest_path, f"no recordings in split {split!r}; splits are {', '.join(splits)}")
    arms = experiment.select_arms(arm_names)
    pool = RecognizerPool(experiment)
    identities = pool.identities()
    runner = ArmRunner(experiment, ResultCache(experiment.folder / "cache"), pool, arms)
    config = {
        "experiment": experiment.name,
        "experiment_file_sha256": sha256_file(experiment.path),
        "primary": experiment.primary,
        "time_tolerance_s": experiment.time_tolerance_s,
        "seed": experiment.seed,
        "recognizers": identities,
        "recognizer_relations": {name: relation(identities[experiment.primary], identity)
                                 for name, identity in identities.items() if name != experiment.primary},
        "arms": [arm.to_json() for arm in arms],
    }
    folder = RunFolder(experiment.folder / "runs" / f"{split}-{config_hash([config, manifest.sha256])[:10]}")
    keys = {entry.id: {arm.name: config_hash({"audio": entry.sha256, "arm": arm.to_json(), "recognizers": identities,
                                              "time_tolerance_s": experiment.time_tolerance_s})
                       for arm in arms}
            for entry in entries}
    # (recording, arm) results still to make; recordings without any are read back here, loading nothing.
    missing = {(e.id, a.name) for e in entries for a in arms
               if _stored_output(folder, a.name, e.id, keys[e.id][a.name]) is None}
    pending = [e for e in entries if any((e.id, a.name) in missing for a in arms)]
    needed = list(dict.fromkeys(name for arm in arms for name in runner.recognizers_for(arm)
                                if any((e.id, arm.name) in missing for e in entries)))
    pending_ids = {e.id for e in pending}
    distributed = bool(pending) and (workers > 1 or scheduler is not None)
    if distributed:
        from toolkit.arms.cluster import Cluster, WorkPlan

        # Opened (and its CPU threads checked) before the run folder is written.
        threads = max(identities[name]["decoding"].get("cpu_threads", 1) for name in needed) if needed else 1
        cluster = Cluster(workers, scheduler, threads, oversubscribe)
        plan = WorkPlan(experiment.path.resolve(), tuple(a.name for a in arms), folder.root.resolve(), identities,
                        config["arms"], tuple(needed), cluster.environ)
    else:
        # Models load before any recording (their cost is reported apart) and before the run folder
        # is written, only for arms with work left: an unchanged rerun loads nothing.
        pool.start(needed)
    with cluster if distributed else nullcontext():
        lock = RunLock(folder.root).acquire()  # held until this run returns (or its process ends)
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        record = {
            "status": "running", "started": started, "split": split, "config": config,
            "manifest": {"path": str(experiment.manifest_path), "sha256": manifest.sha256},
            "recordings": [entry.id for entry in entries], "versions": library_versions(), "hardware": hardware(),
        }
        atomic_write_json(folder.record, record)

        summary = RunSummary(folder, split, [a.name for a in arms], [e.id for e in entries])
        results: dict[str, RecordingResult] = {}
        with pool, runner.stages, tqdm(total=len(entries) * len(arms), desc=f"{experiment.name}/{split}",
                                       unit="arm", disable=not progress) as bar:
            for entry in entries:
                if not distributed or entry.id not in pending_ids:
                    results[entry.id] = run_recording(runner, folder, arms, entry, keys[entry.id], bar)
            if distributed:
                parallel = cluster.run(plan, pending, keys, bar)
                results.update(parallel.results)
                record["parallel"] = parallel.to_json()
    for entry in entries:
        summary.add(results[entry.id])
    if distributed:
        summary.load_wall_s = sum(load["ready_wall_s"] for loads in (parallel.recognizer_loads, parallel.stage_loads)
                                  for load in loads.values())
        recognizer_loads, stage_loads = parallel.recognizer_loads, parallel.stage_loads
    else:
        summary.load_wall_s = sum(load.ready_wall_s for workers_ in (pool, runner.stages)
                                  for load in workers_.loads().values())
        recognizer_loads = {name: load.to_json() for name, load in pool.loads().items()}
        stage_loads = {name: load.to_json() for name, load in runner.stages.loads().items()}
    record.update(status="failed" if summary.failures else "complete",
                  finished=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  measurements=summary.rows, computed=summary.computed, reused=summary.reused,
                  failures=summary.failures, reuse=summary.reuse_json(), this_run=_times(summary.this_run),
                  recognizer_loads=recognizer_loads, stage_loads=stage_loads)
    atomic_write_json(folder.record, record)
    lock.release()
    return summary


@dataclass
class RecordingResult:
    """What running every arm on one recording gave: its runtime rows (arm order) and reuse counts.

    ``failure`` (one line naming the worker and the file) replaces the rows of a recording that
    could not be finished; arms it did finish are on disk and are reused by the next run.
    """

    recording: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    computed: int = 0
    reused: int = 0
    units: dict[str, dict[str, int]] = field(default_factory=reuse_counts)
    this_run: Measurement = field(default_factory=Measurement)
    measured: Measurement = field(default_factory=Measurement)
    worker: str | None = None
    failure: str | None = None


def run_recording(runner: ArmRunner, folder: RunFolder, arms: list[Arm], entry: Any, keys: dict[str, str],
                  bar: Any = None) -> RecordingResult:
    """Every arm on one recording: stored results are read back, the others computed and written
    (full output last), then the review lists against the baseline. ``bar`` (tqdm) advances per arm."""
    result = RecordingResult(entry.id)
    signal = None
    outputs: dict[str, dict[str, Any]] = {}
    for arm in arms:
        if bar is not None:
            bar.set_postfix_str(f"{entry.id} {arm.name}")
        stored = _stored_output(folder, arm.name, entry.id, keys[arm.name])
        this_run = None
        if stored is None:
            with measure() as spent:
                signal = signal if signal is not None else entry.load_audio()
                output = runner.run(arm, entry.sha256, signal)
            # Memory is measured per unit in the workers; this process's peak says nothing.
            this_run = Measurement(spent.wall_s, spent.cpu_s + output.worker_cpu_s)
            stored = _write_result(folder, arm, entry.id, entry.duration, output, keys[arm.name], _times(this_run))
            result.computed += 1
            for kind, counts in output.reuse.items():
                for outcome, count in counts.items():
                    result.units[kind][outcome] += count
        else:
            result.reused += 1
        result.this_run.add(this_run or Measurement())
        result.measured.add(Measurement(**stored["compute"]))
        outputs[arm.name] = stored
        result.rows.append(_row(arm.name, entry.id, entry.duration, stored, this_run))
        if bar is not None:
            bar.update()
    _write_arm_disagreements(folder, entry.id, arms, outputs)
    return result


def _times(spent: Measurement) -> dict[str, float]:
    """Wall and CPU time of what this run spent (no memory figure: see RUNTIME_COLUMNS)."""
    return {"wall_s": round(spent.wall_s, 4), "cpu_s": round(spent.cpu_s, 4)}


def _stored_output(folder: RunFolder, arm: str, recording: str, unit_key: str) -> dict[str, Any] | None:
    path = folder.arm_output(arm, recording)
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    # Outputs written before segments and reuse were recorded are made again (from the cache).
    return stored if stored.get("unit_key") == unit_key and "segments" in stored and "reuse" in stored else None


def _write_result(folder: RunFolder, arm: Arm, recording: str, duration: float, output: ArmOutput,
                  unit_key: str, this_run: dict[str, float]) -> dict[str, Any]:
    """Write hypothesis (JSON + CTM), review list, then the full output last (the completion mark)."""
    from toolkit.formats import write_ctm, write_hypothesis_json

    hypothesis = Hypothesis(recording, output.words, arm=arm.name,
                            meta={"unmapped_times": output.unmapped_times, "notes": output.notes,
                                  "recognizers": output.recognizer_notes})
    write_hypothesis_json(hypothesis, folder.hypothesis_json(arm.name, recording))
    write_ctm(hypothesis, folder.hypothesis_ctm(arm.name, recording))
    stored = {"unit_key": unit_key, "arm": arm.name, "recording": recording, "duration": duration,
              "this_run": this_run, **output.to_json()}
    stored["real_time_factor"] = round(output.compute.wall_s / duration, 4) if duration > 0 else None
    atomic_write_json(folder.arm_output(arm.name, recording), stored)
    return stored


def _row(arm: str, recording: str, duration: float, stored: dict[str, Any],
         this_run: Measurement | None) -> dict[str, Any]:
    """One runtime row (``this_run`` None: the stored result was reused whole); RUNTIME_COLUMNS in
    toolkit.report says what each figure means."""
    from toolkit.asr.segments import temperature_summary

    compute = stored["compute"]
    units = stored["reuse"].values() if this_run is not None else []
    this_run = this_run or Measurement()
    temperatures = temperature_summary(stored["segments"])
    return {"arm": arm, "recording": recording, "duration_s": duration, "words": len(stored["words"]),
            "wall_s": compute["wall_s"], "cpu_s": compute["cpu_s"], "peak_rss_mb": compute["peak_rss_mb"],
            "real_time_factor": stored["real_time_factor"],
            "this_run_wall_s": round(this_run.wall_s, 4), "this_run_cpu_s": round(this_run.cpu_s, 4),
            "result": "computed" if units else "reused",
            "units_computed": sum(u["computed"] for u in units), "units_reused": sum(u["reused"] for u in units),
            "decoded_s": temperatures["decoded_s"], "fallback_share": temperatures["fallback_share"],
            "fallback_dominated": temperatures["fallback_dominated"],
            "temperatures": "; ".join(f"{t}: {100 * share:.0f}%"
                                      for t, share in temperatures["share_by_temperature"].items()),
            "unmapped_times": stored["unmapped_times"],
            "seams": len(stored["seams"]), "disagreements": len(stored["disagreements"])}


def _write_arm_disagreements(folder: RunFolder, recording: str, arms: list[Arm],
                             outputs: dict[str, dict[str, Any]]) -> None:
    """Review lists (JSON and CSV) of where each arm disagrees with the first arm, the baseline.

    Disagreements between two recognizers of one arm stay in that arm's output file.
    """
    from toolkit.disagreement import disagreement_spans, write_review_list
    from toolkit.records import Word

    base = arms[0].name
    base_words = [Word(**w) for w in outputs[base]["words"]]
    for arm in arms[1:]:
        spans = disagreement_spans(base_words, [Word(**w) for w in outputs[arm.name]["words"]])
        for path in (folder.review_list(arm.name, recording), folder.review_list(arm.name, recording, "csv")):
            write_review_list(spans, path, recording_id=recording, label_a=base, label_b=arm.name)
