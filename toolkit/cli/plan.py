"""``ablate plan``: the wall time and core- (GPU-) hours a full run will take, from a tuning run's measurements;
with ``--power``, the WER reduction the planned holdout can detect and the holdout an effect needs."""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="estimate a full run's wall time and core- or GPU-hours per arm from a tuning run; --power: the "
        "holdout's power",
    )
    parser.add_argument("experiment", help="experiment file or folder")
    parser.add_argument("--hours", type=float, help="hours of audio the full run will decode (the time plan)")
    parser.add_argument(
        "--power",
        action="store_true",
        help="instead: the smallest WER reduction the manifest's holdout detects with 80%% power, from the tuning "
        "run's paired spread, and the holdout --effect needs",
    )
    parser.add_argument(
        "--effect",
        type=float,
        help="with --power: the WER reduction in points to size the holdout for (default: "
        "the gates' wer_reduction_points threshold)",
    )
    parser.add_argument("--arm", help="with --power: the challenger (default: the frozen one, else the best on tuning)")
    parser.add_argument(
        "--gates", metavar="GATES.toml", help="with --power: the gates (default: frozen, else template)"
    )
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

    timing = [f"--{n}" for n in ("hours", "nodes", "cores", "gpus") if getattr(args, n) is not None]
    powering = [f"--{n}" for n in ("effect", "arm", "gates") if getattr(args, n) is not None]
    if args.power and timing:
        raise ToolkitError(f"--power plans the holdout's power; {', '.join(timing)} plan time: give one or the other")
    if powering and not args.power:
        raise ToolkitError(f"{', '.join(powering)} go with --power")
    if args.power:
        return _power(args)
    if args.hours is None:
        raise ToolkitError("give --hours (the time plan) or --power (the holdout's power)")
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


def _power(args: argparse.Namespace) -> int:
    """The holdout's power plan for the challenger against the baseline, as text or JSON."""
    from dataclasses import replace

    from toolkit.core.errors import InputError, ToolkitError
    from toolkit.core.names import unknown_name
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.chosen import chosen_arm, chosen_gates
    from toolkit.protocol.gates_file import WER_GATE, load_gates
    from toolkit.protocol.power_check import holdout_power
    from toolkit.runs.record import BASELINE
    from toolkit.scorer.power import power_text

    experiment = load_experiment(args.experiment)
    gates = load_gates(args.gates or chosen_gates(experiment))
    arm = args.arm or chosen_arm(experiment)
    if arm not in experiment.arms or arm == BASELINE:
        raise InputError(
            experiment.path, unknown_name("challenger arm", arm, [a for a in experiment.arms if a != BASELINE])
        )
    if args.effect is not None:
        if not (math.isfinite(args.effect) and args.effect > 0):
            raise ToolkitError(f"--effect must be a finite WER reduction above 0 points, not {args.effect}")
        declared = replace(gates.gates[WER_GATE], applicable=True, threshold=args.effect)
        gates = replace(gates, gates={**gates.gates, WER_GATE: declared})
    data = holdout_power(experiment, arm, gates).to_json()
    if args.effect is not None and data["estimated"]:  # sized for the asked effect, not the gates' threshold
        data = {**data, "sized_for": "an effect", "gate_passes_80_at_points": None}
    print(json.dumps(data, indent=2) if args.json else power_text(data))
    return 0
