"""``ablate calibrate``: the gates' false-PROMOTE rate and power on the tuning split, before the freeze."""

from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="measure the gates' false-PROMOTE rate (A/A) and power (planted gains) on the tuning split",
        description="Run the gates about to be frozen on recording-level resamples of the tuning split at the "
        "holdout's size: the baseline against itself re-decoded under inaudible dither (how often a challenger "
        "that is no better is promoted) and planted gains of 0.5, 1 and 2 WER points (how often a real gain is). "
        "Written to the tuning run's scores/calibration.json and shown in its report; a freeze with the same arm "
        "and gates records it in the audit log and the verdict quotes it.",
    )
    parser.add_argument("experiment", help="experiment file or folder")
    parser.add_argument("--arm", help="the challenger to be frozen (default: the frozen one, else the best on tuning)")
    parser.add_argument(
        "--gates",
        metavar="GATES.toml",
        help="the gates about to be frozen (default: the frozen copy, else the template)",
    )
    parser.add_argument("--resamples", type=int, default=200, help="recording-level resamples per pair (default 200)")
    parser.add_argument(
        "--reruns", type=int, default=2, help="dithered re-decodes of the baseline on tuning (default 2; cached)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the resamples and the planted corrections")
    parser.add_argument(
        "--isa",
        help="also decode the baseline with CTranslate2 forced to this instruction set (GENERIC, AVX, AVX2, AVX512): "
        "another machine's words, one more A/A pair with each decode",
    )
    parser.add_argument(
        "--holdout-recordings",
        type=int,
        help="resample at this many recordings instead of the manifest's holdout (to plan a holdout's size)",
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes for the re-decodes")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.core.json_records import record_to_json
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.calibration import calibrate
    from toolkit.protocol.chosen import chosen_arm, chosen_gates
    from toolkit.protocol.gates_file import load_gates
    from toolkit.protocol.planning import calibration_text

    experiment = load_experiment(args.experiment)
    arm = args.arm or chosen_arm(experiment)
    gates = load_gates(args.gates or chosen_gates(experiment))
    calibration = calibrate(
        experiment,
        arm,
        gates,
        resamples=args.resamples,
        reruns=args.reruns,
        seed=args.seed,
        workers=args.workers,
        progress=args.format == "text",
        holdout_recordings=args.holdout_recordings,
        isa=args.isa,
    )
    data = record_to_json(calibration)
    if args.format == "json":
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(f"challenger {arm!r}, gates {gates.path} (sha256 {gates.sha256[:16]}…)")
        print(calibration_text(data))
        print(f"written to {experiment.folder / 'runs' / calibration.tuning_run / 'scores' / 'calibration.json'}")
    return 0
