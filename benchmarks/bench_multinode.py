"""``ablate plan`` against a measured run on the namespace SLURM cluster of tests/multi_node_slurm.py.

Builds two demo corpora (``ablate demo``'s recordings, about 2 minutes each): ``--tuning`` recordings
measured in one worker on this machine (the tuning run a plan reads), and ``--check`` other recordings.
From the tuning run, ``make_plan`` predicts the wall time of the check recordings on ``--hosts`` hosts of
one core each (one worker of one decoding thread per host); then the check recordings run on that many
namespace hosts (``ablate run --cluster slurm`` on the cluster's login machine, ``jobs`` = hosts, from an
empty cache) and the prediction is compared with the run's wall time (run.json's start to finish, and
the queue wait inside it). Prints the plan for ``--hours`` hours on ``--plan-nodes`` nodes of
``--plan-cores`` cores from the same tuning run, and each host's figures from run.json. The hosts share
this machine's cores: give no more hosts than it has cores. Needs root, slurm-wlm, munge, dask-jobqueue
and network namespaces (scripts/setup.sh).
Run: ``.venv/bin/python benchmarks/bench_multinode.py [--hosts 2] [--tuning 2] [--check 4] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from machine import describe, machine  # noqa: E402
from multi_node_slurm import MultiNodeSlurm, missing, multi_node_slurm  # noqa: E402

DEMO = ROOT / "experiments" / "demo" / "experiment.toml"
ARMS = ["baseline"]


def experiment(root: Path, name: str, recordings: int, seed: int) -> Path:
    """A demo corpus of ``recordings`` (all tuning) and the demo experiment on one decoding thread over it."""
    from toolkit.corpus.freeze import freeze
    from toolkit.demo import build_corpus

    corpus = root / f"{name}-corpus"
    built = build_corpus(corpus, seed=seed, recordings=recordings)
    splits = root / f"{name}-splits.csv"
    splits.write_text("id,split\n" + "".join(f"{r.recording_id},tuning\n" for r in built.recordings), encoding="utf-8")
    freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=splits)
    folder = root / name
    folder.mkdir()
    text = DEMO.read_text(encoding="utf-8").replace("cpu_threads = 2", "cpu_threads = 1")
    (folder / "experiment.toml").write_text(
        text.replace('manifest = "corpus/manifest.json"', f'manifest = "{corpus / "manifest.json"}"'), encoding="utf-8"
    )
    return folder


def on_cluster(slurm: MultiNodeSlurm, folder: Path, hosts: int) -> dict[str, Any]:
    """The check recordings on ``hosts`` namespace hosts; the run's wall time, queue wait and per-node figures."""
    cluster = folder / "slurm.toml"
    cluster.write_text(
        '[slurm]\nqueue = "debug"\ncores = 1\nprocesses = 1\nmemory = "3GB"\nwalltime = "01:00:00"\n'
        f'jobs = {hosts}\nscale = "fixed"\nstart_timeout_s = 300\nscheduler_interface = "br0"\ninterface = "eth0"\n',
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "toolkit", "run", str(folder), "--split", "tuning", "--arms", ",".join(ARMS)]
    command += ["--cluster", "slurm", "--cluster-config", str(cluster), "--no-score", "--quiet"]
    env = {**slurm.env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PYANNOTE_METRICS_ENABLED": "false"}
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    done = subprocess.run([*slurm.in_login(), *command], env=env, capture_output=True, text=True, cwd=ROOT)
    command_s = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    record = json.loads(next((folder / "runs").glob("*/run.json")).read_text(encoding="utf-8"))
    span = datetime.fromisoformat(record["finished"]) - datetime.fromisoformat(record["started"])
    rows = record["measurements"]
    return {
        "run_wall_s": span.total_seconds(),
        # What the cluster's workers measured: their RTF (decode wall over audio) and the slowest model load.
        "cluster_rtf": round(sum(r["wall_s"] for r in rows) / sum(r["duration_s"] for r in rows), 4),
        "slowest_load_s": max((load["ready_wall_s"] for load in record["recognizer_loads"].values()), default=0.0),
        "command_wall_s": round(command_s, 1),
        "queue_wait_s": record["parallel"]["slurm"]["first_worker_s"],
        "nodes": record["parallel"]["nodes"],
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=2, help="namespace hosts of one core each")
    parser.add_argument("--tuning", type=int, default=2, help="demo recordings measured in one worker")
    parser.add_argument("--check", type=int, default=4, help="other demo recordings run on the cluster")
    parser.add_argument("--hours", type=float, default=100.0)
    parser.add_argument("--plan-nodes", type=int, default=10)
    parser.add_argument("--plan-cores", type=int, default=32)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    problem = missing()
    if problem is not None:
        print(f"skipped: {problem}")
        return
    from toolkit.pipeline.engine import run_experiment
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.pipeline.planner import Resources, make_plan

    measured_on = machine()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        tuning = experiment(root, "tune", args.tuning, seed=1)
        check = experiment(root, "check", args.check, seed=2)
        tuned = run_experiment(load_experiment(tuning), "tuning", ARMS, progress=False).folder.root
        manifest = json.loads((check.parent / "check-corpus" / "manifest.json").read_text(encoding="utf-8"))
        audio_s = sum(r["duration"] for r in manifest["recordings"])
        plan = make_plan(
            tuned, audio_s / 3600, Resources(nodes=args.hosts, cores=1), audio_s / len(manifest["recordings"]) / 60
        )
        large = make_plan(tuned, args.hours, Resources(nodes=args.plan_nodes, cores=args.plan_cores))
        with multi_node_slurm(root, hosts=args.hosts) as slurm:
            run = on_cluster(slurm, check, args.hosts)
    predicted = plan.together.wall_h * 3600
    figures = {
        "machine": measured_on,
        "hosts": args.hosts,
        "check_audio_s": round(audio_s, 1),
        "predicted_wall_s": round(predicted, 1),
        **run,
        "prediction_error": round(predicted / run["run_wall_s"] - 1, 3),
        "plan": large.to_json(),
    }
    print(describe(measured_on))
    print(plan.table())
    print(
        f"predicted {predicted:.1f} s for {args.check} recordings ({audio_s:.0f} s of audio) on {args.hosts} hosts; "
        f"measured {run['run_wall_s']:.0f} s (run.json start to finish; queue wait {run['queue_wait_s']} s; "
        f"the command {run['command_wall_s']} s): the plan is off by {figures['prediction_error']:+.1%}; "
        f"load average {run['load_average_before_after']}; RTF {plan.together.rtf:.4f} in the tuning run, "
        f"{run['cluster_rtf']:.4f} on the cluster's workers; their slowest model load {run['slowest_load_s']:.1f} s"
    )
    for host, node in run["nodes"].items():
        print(
            f"  {host}: {len(node['recordings'])} recordings, {node['units_computed']} units, {node['cpu_s']} s CPU, "
            f"peak {node['peak_rss_mb']} MB"
        )
    print(large.table())
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
