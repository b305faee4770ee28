"""``ablate run``: run an experiment's arms on one split, then score them and write the report."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.pipeline.engine import RunSummary


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("run", help="run arms on a split of the frozen manifest, score and report")
    parser.add_argument("experiment", help="experiment file or folder")
    parser.add_argument("--split", required=True, help="manifest split to run (tuning, holdout, challenge)")
    parser.add_argument("--arms", help="comma-separated arm names (default: every arm)")
    parser.add_argument("--no-score", action="store_true", help="only produce hypotheses")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="decode this many recordings at once on a local Dask cluster (default 1: in this process)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="send the recordings to the workers of this existing Dask scheduler",
    )
    parser.add_argument(
        "--oversubscribe",
        action="store_true",
        help="allow more decoding threads (tasks at once x the recognizers' cpu_threads) than cores",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.testsplit import run_split

    experiment = load_experiment(args.experiment)
    arms = None if args.arms is None else [a.strip() for a in args.arms.split(",")]
    summary = run_split(  # holdout/challenge: the frozen challenger, once, under the protocol lock
        experiment,
        args.split,
        arms,
        progress=not args.quiet,
        workers=args.workers,
        scheduler=args.scheduler,
        oversubscribe=args.oversubscribe,
    )
    print(f"run: {summary.folder.root}")
    print(f"     {summary.describe()}")
    if summary.failures:  # not logged as finished and not scored: a rerun completes them
        for failure in summary.failures:
            print(f"ablate: {failure.recording} failed: {failure.error}", file=sys.stderr)
        print(
            f"ablate: {len(summary.failures)} of {len(summary.recordings)} recordings failed (listed in "
            f"{summary.folder.record}); fix them and rerun the same command: finished results are kept",
            file=sys.stderr,
        )
        return 1
    report_arm_failures(summary)
    status = 1 if summary.arm_failures else 0
    if args.no_score:
        return status
    from toolkit.evaluate import evaluate_run
    from toolkit.protocol.report_sections import report_sections

    evaluation = evaluate_run(summary.folder, experiment.score_options(), report_sections(summary.folder))
    print(evaluation.table_text)
    print(f"report: {evaluation.report_markdown}")
    print(f"        {evaluation.report_html}")
    return status


def report_arm_failures(summary: RunSummary) -> None:
    """One line per (arm, recording) a stage failed on, then what it means for the scores."""
    for failure in summary.arm_failures:
        print(f"ablate: {failure.error}", file=sys.stderr)
    if summary.arm_failures:
        print(
            f"ablate: arm(s) {', '.join(summary.failed_arms)} failed (listed in {summary.folder.record}); the other "
            f"arms finished; a failed arm's recordings are scored as failures (no words), so they stay in "
            f"every denominator",
            file=sys.stderr,
        )
