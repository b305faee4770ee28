"""``ablate plan``: the wall time and core- (GPU-) hours a full run will take, from a tuning run's measurements."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plan", help="estimate a full run's wall time and core- or GPU-hours per arm from a tuning run"
    )
    parser.add_argument("experiment", help="experiment file or folder")
    parser.add_argument("--hours", type=float, required=True, help="hours of audio the full run will decode")
    parser.add_argument("--nodes", type=int, help="nodes of the cluster (with --cores; default: this machine)")
    parser.add_argument("--cores", type=int, help="cores per node (with --nodes)")
    parser.add_argument("--gpus", type=int, help="GPUs, one worker each (instead of --nodes/--cores)")
    parser.add_argument("--split", default="tuning", help="the split whose latest complete run measured the arms")
    parser.add_argument("--run", help="plan from this run folder instead")
    parser.add_argument(
        "--recording-minutes", type=float, help="length of the full run's recordings (default: the measured run's mean)"
    )
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.core.errors import ToolkitError
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.pipeline.planner import Resources, make_plan
    from toolkit.runs.folder import latest_run

    if args.gpus is not None and (args.nodes is not None or args.cores is not None):
        raise ToolkitError("--gpus plans GPU workers; --nodes and --cores plan CPU workers: give one or the other")
    for name in ("nodes", "cores", "gpus"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ToolkitError(f"--{name} must be at least 1, not {value}")
    if args.gpus:
        resources = Resources(gpus=args.gpus)
    else:
        resources = Resources(nodes=args.nodes or 1, cores=args.cores or len(os.sched_getaffinity(0)))
    experiment = load_experiment(args.experiment)
    source = Path(args.run) if args.run else latest_run(experiment.folder, args.split, complete=True).root
    plan = make_plan(source, args.hours, resources, args.recording_minutes)
    print(json.dumps(plan.to_json(), indent=2) if args.json else plan.table())
    return 0
