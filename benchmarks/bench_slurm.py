"""Throughput over 1 and 2 SLURM jobs (one core each) on the single-node SLURM of tests/single_node_slurm.py.

Builds ``--recordings`` demo recordings (``ablate demo``'s, about 2 minutes each) and runs the demo
experiment's ``--arms`` on one decoding thread, each configuration from an empty cache: ``--cluster
slurm`` with ``jobs = 1`` and with ``jobs = 2`` (one core and one Dask worker per job). Prints per
configuration the wall time (from submission to the last result), throughput (audio hours per wall
hour), the queue wait (submission to the first worker), the model loads, the compute the workers
measured, and the scheduler and data-movement overhead per recording: what a worker spent on a
recording beyond its decodes and VAD passes (loading and resampling audio, writing results, Dask's
scheduling and transfers), i.e. ``(workers x (wall - queue wait - loads) - compute) / recordings``,
split into what the worker measured around the decodes (``this_run`` minus compute) and the rest
(scheduling, transfers, a worker idle at the end or waiting for its job to start).
Targets: >= 1.4x the throughput with 2 jobs, overhead <= 2 s per recording. The machine's load
average before and after each run is printed: on 2 shared cores only a quiet machine gives figures
to quote. Needs root, slurm-wlm, munge and dask-jobqueue (scripts/setup.sh).
Run: ``.venv/bin/python benchmarks/bench_slurm.py [--recordings 4] [--arms baseline] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from machine import describe, machine  # noqa: E402
from single_node_slurm import missing, single_node_slurm  # noqa: E402

DEMO = ROOT / "experiments" / "demo" / "experiment.toml"


def corpus(root: Path, recordings: int) -> Path:
    from toolkit.corpus.freeze import freeze
    from toolkit.demo import build_corpus

    built = build_corpus(root / "corpus", recordings=recordings)
    splits = root / "splits.csv"
    splits.write_text("id,split\n" + "".join(f"{r.recording_id},tuning\n" for r in built.recordings), encoding="utf-8")
    freeze(root / "corpus" / "audio", root / "corpus" / "refs", root / "corpus" / "manifest.json", splits_csv=splits)
    return root / "corpus" / "manifest.json"


def measure(root: Path, manifest: Path, name: str, jobs: int, arms: list[str]) -> dict[str, Any]:
    from toolkit.pipeline.engine import run_experiment
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.pipeline.slurm import load_cluster_file

    folder = root / name
    folder.mkdir()
    text = DEMO.read_text(encoding="utf-8").replace("cpu_threads = 2", "cpu_threads = 1")
    (folder / "experiment.toml").write_text(
        text.replace('manifest = "corpus/manifest.json"', f'manifest = "{manifest}"'), encoding="utf-8"
    )
    (folder / "slurm.toml").write_text(
        "[slurm]\n"
        'queue = "debug"\ncores = 1\nprocesses = 1\nmemory = "3GB"\nwalltime = "01:00:00"\n'
        f'jobs = {jobs}\nscale = "fixed"\nstart_timeout_s = 300\nscheduler_host = "127.0.0.1"\n',
        encoding="utf-8",
    )
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    summary = run_experiment(
        load_experiment(folder), "tuning", arms, progress=False, slurm=load_cluster_file(folder / "slurm.toml")
    )
    wall = time.perf_counter() - started
    record = summary.folder.read_record()
    audio = sum(m.duration_s for m in record.measurements) / len(arms)
    compute = sum(m.wall_s or 0.0 for m in record.measurements)
    # Inside the worker, per recording: everything around the decodes (audio, bookkeeping, writing).
    this_run = sum(m.this_run_wall_s for m in record.measurements if isinstance(m.this_run_wall_s, float))
    parallel = record.parallel or {}
    workers = len(parallel["workers"])
    waited = parallel["slurm"]["first_worker_s"] or 0.0
    loads = summary.load_wall_s / max(1, workers)  # each worker loads its models once, in parallel
    recordings = len(summary.recordings)
    return {
        "jobs": jobs,
        "workers": workers,
        "wall_s": round(wall, 1),
        "audio_s": round(audio, 1),
        "audio_hours_per_wall_hour": round(audio / wall, 2),
        "queue_wait_s": waited,
        "model_loads_per_worker_s": round(loads, 1),
        "compute_s": round(compute, 1),
        "overhead_per_recording_s": round((workers * (wall - waited - loads) - compute) / recordings, 2),
        "in_worker_per_recording_s": round((this_run - compute) / recordings, 2),
        "scheduling_idle_per_recording_s": round((workers * (wall - waited - loads) - this_run) / recordings, 2),
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "jobs_record": parallel["slurm"]["jobs"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=4, help="demo recordings (at most 4 distinct)")
    parser.add_argument("--arms", default="baseline", help="comma-separated demo arms")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    problem = missing()
    if problem is not None:
        print(f"skipped: {problem}")
        return
    arms = args.arms.split(",")
    measured_on = machine()  # the CPU, CTranslate2's instruction set and GEMM backend, the load before
    with tempfile.TemporaryDirectory() as scratch, single_node_slurm(Path(scratch)) as slurm:
        os.environ["SLURM_CONF"] = str(slurm.conf)
        root = Path(scratch)
        manifest = corpus(root, args.recordings)
        runs = {name: measure(root, manifest, name, jobs, arms) for name, jobs in (("1-job", 1), ("2-jobs", 2))}
    speedup = runs["2-jobs"]["audio_hours_per_wall_hour"] / runs["1-job"]["audio_hours_per_wall_hour"]
    figures = {
        "machine": measured_on,
        "arms": arms,
        "runs": runs,
        "throughput_2_jobs_over_1": round(speedup, 2),
    }
    print(f"{args.recordings} demo recordings, arms {', '.join(arms)}; {describe(measured_on)}")
    print(
        f"{'run':7} {'wall s':>7} {'audio h/h':>9} {'queue s':>7} {'loads s':>7} {'compute s':>9} "
        f"{'overhead/rec s':>14} {'(in worker':>10} {'+ idle)':>7}  load"
    )
    for name, run in runs.items():
        print(
            f"{name:7} {run['wall_s']:7.1f} {run['audio_hours_per_wall_hour']:9.2f} {run['queue_wait_s']:7.1f} "
            f"{run['model_loads_per_worker_s']:7.1f} {run['compute_s']:9.1f} {run['overhead_per_recording_s']:14.2f} "
            f"{run['in_worker_per_recording_s']:10.2f} {run['scheduling_idle_per_recording_s']:7.2f}  "
            f"{run['load_average_before_after']}"
        )
    print(
        f"throughput 2 jobs / 1 job: {speedup:.2f}x ({'met' if speedup >= 1.4 else 'NOT MET'}: >= 1.4x); overhead per "
        f"recording <= 2 s: {'met' if all(r['overhead_per_recording_s'] <= 2 for r in runs.values()) else 'NOT MET'}"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
