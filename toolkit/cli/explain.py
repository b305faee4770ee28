"""``ablate explain EXP --arm ARM``: why the arm changed WER against the baseline, split by cause, exactly."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="split an arm's ΔWER against the baseline by cause (VAD cut, seam, non-speech, fallback, ...)",
        description="Every reference word whose outcome differs between the arm and the baseline, and every "
        "insertion only one of them made, gets one cause; the causes add up to ΔWER exactly.",
    )
    parser.add_argument("experiment", help="experiment folder (or its experiment.toml)")
    parser.add_argument("--arm", required=True, help="the arm to explain")
    parser.add_argument("--against", help="the arm to compare with (default: the run's baseline)")
    parser.add_argument("--split", default="tuning", help="the split whose latest run to read (default tuning)")
    parser.add_argument("--format", choices=("text", "json", "csv"), default="text", help="output format")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from toolkit.evaluate import score_run
    from toolkit.explain import explain
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.verdict import split_run

    experiment = load_experiment(args.experiment)
    folder = split_run(experiment, args.split)
    explanation = explain(score_run(folder, experiment.score_options()), args.arm, args.against)
    if args.format == "json":
        json.dump(explanation.to_json(), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    elif args.format == "csv":
        sys.stdout.write(explanation.to_csv())
    else:
        print(explanation.text())
    return 0
