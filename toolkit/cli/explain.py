"""``ablate explain EXP --arm ARM``: why the arm changed WER against the baseline, split by cause, exactly.

``ablate explain EXP --stability K``: whether each arm's result survives K reruns with inaudible dither.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolkit.audio.dither import DEFAULT_LEVEL_DBFS, LOUDEST_LEVEL_DBFS
from toolkit.core.errors import InputError, ToolkitError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="split an arm's ΔWER against the baseline by cause (VAD cut, seam, non-speech, fallback, ...)",
        description="Every reference word whose outcome differs between the arm and the baseline, and every "
        "insertion only one of them made, gets one cause; the causes add up to ΔWER exactly.",
    )
    parser.add_argument("experiment", help="experiment folder (or its experiment.toml)")
    parser.add_argument("--arm", help="the arm to explain (with --stability: the arms to rerun, comma-separated)")
    parser.add_argument("--against", help="the arm to compare with (default: the run's baseline)")
    parser.add_argument(
        "--split",
        default="tuning",
        help="the split whose run to read (default tuning): its latest finished run that ran the arm and the one "
        "it is compared with (stability reruns never count); for a test split, the run the audit log recorded",
    )
    parser.add_argument(
        "--run", metavar="RUN", help="read this run instead (a folder name under the experiment's runs/, or a path)"
    )
    parser.add_argument("--format", choices=("text", "json", "csv"), default="text", help="output format")
    parser.add_argument(
        "--stability",
        type=int,
        metavar="K",
        help="re-decode the split K times with seeded inaudible TPDF dither and show, per arm, the spread of WER "
        "and ΔWER beside the paired bootstrap interval, and whether the arm's direction flips",
    )
    parser.add_argument(
        "--dither-dbfs",
        type=float,
        default=DEFAULT_LEVEL_DBFS,
        help=f"peak level of the dither, dBFS (default {DEFAULT_LEVEL_DBFS:g}; at most {LOUDEST_LEVEL_DBFS:g})",
    )
    parser.add_argument("--workers", type=int, default=1, help="decode this many recordings at once (Dask)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.evaluate import score_run
    from toolkit.explain import explain
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.recorded_runs import split_run

    experiment = load_experiment(args.experiment)
    if args.stability is not None:
        return _stability(args, experiment)
    if not args.arm:
        raise ToolkitError("ablate explain: name the arm to explain with --arm ARM (or pass --stability K)")
    folder = _chosen_run(experiment, args.run) if args.run else split_run(experiment, args.split, _arms(args))
    explanation = explain(score_run(folder, experiment.score_options()), args.arm, args.against)
    if args.format == "json":
        json.dump(explanation.to_json(), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    elif args.format == "csv":
        sys.stdout.write(explanation.to_csv())
    else:
        print(explanation.text())
    return 0


def _arms(args: argparse.Namespace) -> list[str]:
    """The arms the run must have: the explained one and, when named, the one it is compared with."""
    return [args.arm, *([args.against] if args.against else [])]


def _chosen_run(experiment: Any, run: str) -> Any:
    """The run ``--run`` names, in the experiment's runs/; a test split's only when the audit log recorded it."""
    from pathlib import Path

    from toolkit.protocol.recorded_runs import split_run
    from toolkit.protocol.state import TEST_SPLITS
    from toolkit.runs.folder import RunFolder

    path = Path(run) if ("/" in run or Path(run).is_absolute()) else experiment.folder / "runs" / run
    folder = RunFolder(path)
    if path.resolve().parent != (experiment.folder / "runs").resolve():
        raise InputError(path, f"not a run of {experiment.folder} (its runs are in {experiment.folder / 'runs'})")
    record = folder.read_record()
    if record.split in TEST_SPLITS and split_run(experiment, record.split).root.resolve() != path.resolve():
        raise InputError(path, f"not the {record.split} run the audit log recorded")
    return folder


def _stability(args: argparse.Namespace, experiment: Any) -> int:
    from toolkit.core.json_records import record_to_json
    from toolkit.protocol.stability import measure_stability, stability_text

    if args.format == "csv":
        raise ToolkitError("ablate explain --stability: --format is text or json")
    arms = [name.strip() for name in args.arm.split(",")] if args.arm else None
    stability = measure_stability(
        experiment,
        args.split,
        args.stability,
        level_dbfs=args.dither_dbfs,
        arm_names=arms,
        workers=args.workers,
        progress=sys.stderr.isatty(),
    )
    if args.format == "json":
        json.dump(record_to_json(stability), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print(stability_text(stability))
    return 0
