"""``ablate gate``: evaluate the pre-registered gates on the holdout run.

Exit 0 PROMOTE, 1 RETAIN BASELINE, 2 bad input.
"""

from __future__ import annotations

import argparse

from toolkit.core.json_text import indented_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gate",
        help="evaluate the gates on the holdout: PROMOTE or RETAIN BASELINE",
        description="Evaluate every pre-registered gate on the holdout run of the frozen "
        "challenger. Exit 0 PROMOTE, 1 RETAIN BASELINE, 2 input error.",
    )
    parser.add_argument("experiment", help="experiment file or folder")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.gates import PROMOTE
    from toolkit.protocol.verdict import gate_verdict

    report = gate_verdict(load_experiment(args.experiment))
    if args.format == "json":
        print(indented_json(report.to_json()))
    else:
        print(report.text())
    return 0 if report.verdict == PROMOTE else 1
