"""Parallel benchmark: recordings decoded at once on a local Dask cluster against one worker.

Builds ``--recordings`` recordings of ``--minutes`` each from the shared real pt-BR clips
(``ptbr-dev``, found by tests/shared_data.py; joined as in bench_seams), then runs the demo experiment's
``--arms`` on them, each configuration from a cold cache in its own folder, in one session:

- ``w1-t2``: ``--workers 1``, the recognizer on two threads (in this process, the default path);
- ``w1-t1``: ``--workers 1`` on one thread (what the parallel runs must equal byte for byte);
- ``w2-t1``: ``--workers 2``, one thread each (a local Dask cluster the run starts);
- ``sched-t1``: a two-worker LocalCluster started here and reached through ``--scheduler``.

Prints wall time, RTF (wall over audio seconds, the whole run with worker start and model
loads), WER, peak memory per worker (the Dask worker process and its recognizer service
process, each's lifetime peak), and the ratios against ``w1-t2``. The machine's other load
is not controlled: run it alone for figures you quote.
Run: ``.venv/bin/python benchmarks/bench_parallel.py [--recordings 4] [--minutes 1] [--arms baseline]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import describe, machine  # noqa: E402
from shared_data import PTBR_DEV  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"


def build_corpus(corpus: Path, recordings: int, minutes: float) -> None:
    """``recordings`` long recordings (different clip orders) with their TextGrids, all in the tuning split."""
    from bench_seams import RECORDING, build_recording

    (corpus / "audio").mkdir(parents=True)
    (corpus / "refs").mkdir()
    for index in range(recordings):
        scratch = corpus / f"build{index}"
        build_recording(scratch, minutes, seed=100 + index)
        shutil.move(scratch / "audio" / f"{RECORDING}.wav", corpus / "audio" / f"long{index}.wav")
        shutil.move(scratch / "refs" / f"{RECORDING}.TextGrid", corpus / "refs" / f"long{index}.TextGrid")
        shutil.rmtree(scratch)
    (corpus / "splits.csv").write_text(
        "id,split\n" + "".join(f"long{i},tuning\n" for i in range(recordings)), encoding="utf-8"
    )


def experiment(root: Path, name: str, threads: int) -> Path:
    text = DEMO.read_text(encoding="utf-8").replace("cpu_threads = 2", f"cpu_threads = {threads}")
    text = text.replace('manifest = "corpus/manifest.json"', f'manifest = "{root / "corpus" / "manifest.json"}"')
    (root / name).mkdir()
    (root / name / "experiment.toml").write_text(text, encoding="utf-8")
    return root / name


def measure_run(folder: Path, arms: list[str], **options: Any) -> dict[str, Any]:
    from toolkit.evaluate import evaluate_run
    from toolkit.pipeline.engine import run_experiment
    from toolkit.pipeline.experiment import load_experiment

    started = time.perf_counter()
    summary = run_experiment(load_experiment(folder), "tuning", arms, progress=False, **options)
    wall = time.perf_counter() - started
    evaluation = evaluate_run(summary.folder)
    record = summary.folder.read_record()
    audio = sum(r.duration_s for r in record.measurements) / len(arms)
    overall = evaluation.aggregate[evaluation.aggregate["stratum"] == "all"].set_index("arm")
    services = record.recognizer_loads
    workers = (record.parallel or {}).get("workers", {"this process": {}})
    memory = {
        address: {
            "dask_worker_mb": worker.get("process_peak_rss_mb"),
            "recognizer_service_mb": max(
                (
                    load.worker_peak_rss_mb or 0
                    for name, load in services.items()
                    if name.endswith(address) or address == "this process"
                ),
                default=None,
            ),
            "recordings": worker.get("recordings"),
        }
        for address, worker in workers.items()
    }
    hypotheses = {
        str(p.relative_to(summary.folder.root)): p.read_bytes()
        for p in sorted((summary.folder.root / "hypotheses").rglob("*.ctm"))
    }
    return {
        "wall_s": round(wall, 2),
        "audio_s": round(audio, 1),
        "rtf": round(wall / audio, 4),
        "load_wall_s": round(summary.load_wall_s, 2),
        # Summed over the measured units: contention shows as unit wall time, spinning threads as CPU time.
        "unit_wall_s": round(sum(r.wall_s or 0.0 for r in record.measurements), 2),
        "unit_cpu_s": round(sum(r.cpu_s or 0.0 for r in record.measurements), 2),
        "wer": {arm: round(float(overall.loc[arm, "wer"]), 4) for arm in arms},
        "memory_per_worker": memory,
        "_hypotheses": hypotheses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=1.0, help="length of each recording")
    parser.add_argument("--arms", default="baseline", help="comma-separated demo arms")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not PTBR_DEV.is_dir():
        print(f"skipped: the shared pt-BR clips are not at {PTBR_DEV} (set ABLATE_SHARED_DATA)")
        return
    import dask
    from distributed import LocalCluster

    from toolkit.corpus.freeze import freeze

    arms = args.arms.split(",")
    cores = len(os.sched_getaffinity(0))
    figures: dict[str, Any] = {"cores": cores, "load_average_before": os.getloadavg()[0], "machine": machine()}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        corpus = root / "corpus"
        build_corpus(corpus, args.recordings, args.minutes)
        freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
        runs = {
            "w1-t2": measure_run(experiment(root, "w1-t2", 2), arms, oversubscribe=2 > cores),
            "w1-t1": measure_run(experiment(root, "w1-t1", 1), arms),
            "w2-t1": measure_run(experiment(root, "w2-t1", 1), arms, workers=2, oversubscribe=2 > cores),
        }
        saved = dict(os.environ)  # this process hosts the cluster's nannies, which set OMP_NUM_THREADS=1 & co.
        with dask.config.set({"distributed.worker.daemon": False}):
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        os.environ.clear()
        os.environ.update(saved)
        try:
            runs["sched-t1"] = measure_run(
                experiment(root, "sched-t1", 1), arms, scheduler=cluster.scheduler_address, oversubscribe=2 > cores
            )
        finally:
            cluster.close()
            os.environ.clear()
            os.environ.update(saved)
    same = {name: run.pop("_hypotheses") for name, run in runs.items()}
    figures["runs"] = runs
    figures["identical_hypotheses_to_w1-t1"] = {name: same[name] == same["w1-t1"] for name in runs}
    figures["speedup_vs_w1-t2"] = {
        name: round(runs["w1-t2"]["wall_s"] / run["wall_s"], 3) for name, run in runs.items()
    }
    print(describe(figures["machine"]))
    print(
        f"{args.recordings} recordings x {args.minutes} min, arms {', '.join(arms)}, {cores} cores "
        f"(load average before: {figures['load_average_before']:.2f}; other work on the machine is not controlled)"
    )
    print(
        f"{'run':10} {'wall s':>8} {'RTF':>7} {'speedup':>8} {'load s':>7} {'unit wall':>9} {'unit CPU':>9}  "
        "WER / peak MB per worker (Dask worker process + its recognizer service)"
    )
    for name, run in runs.items():
        memory = "; ".join(
            f"{m['dask_worker_mb'] or '-'}+{m['recognizer_service_mb']}" for m in run["memory_per_worker"].values()
        )
        print(
            f"{name:10} {run['wall_s']:8.1f} {run['rtf']:7.3f} {figures['speedup_vs_w1-t2'][name]:8.2f} "
            f"{run['load_wall_s']:7.1f} {run['unit_wall_s']:9.1f} {run['unit_cpu_s']:9.1f}  {run['wer']} / {memory}"
        )
    print(f"identical hypotheses to w1-t1: {figures['identical_hypotheses_to_w1-t1']}")
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
