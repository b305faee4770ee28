"""``ablate run``: run an experiment's arms on one split, then score them and write the report."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from toolkit.core.errors import ToolkitError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.pipeline.engine import RunSummary
    from toolkit.runs.record import RecordingFailure


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
        "--cluster",
        choices=["slurm"],
        help="submit SLURM jobs whose Dask workers decode the recordings (dask-jobqueue; see --cluster-config)",
    )
    parser.add_argument(
        "--cluster-config",
        metavar="FILE",
        help="the [slurm] table: queue, cores, memory, walltime, jobs, scale, ... (default: slurm.toml beside "
        "the experiment file)",
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
    slurm = None
    if args.cluster_config is not None and args.cluster is None:
        raise ToolkitError("--cluster-config describes the jobs of --cluster slurm; add --cluster slurm")
    if args.cluster == "slurm":
        from toolkit.pipeline.slurm import load_cluster_file

        slurm = load_cluster_file(args.cluster_config or experiment.folder / "slurm.toml")
    arms = None if args.arms is None else [a.strip() for a in args.arms.split(",")]
    summary = run_split(  # holdout/challenge: the frozen challenger, once, under the protocol lock
        experiment,
        args.split,
        arms,
        progress=not args.quiet,
        workers=args.workers,
        scheduler=args.scheduler,
        oversubscribe=args.oversubscribe,
        slurm=slurm,
    )
    print(f"run: {summary.folder.root}")
    print(f"     {summary.describe()}")
    if summary.failures:  # not logged as finished and not scored: a rerun completes them
        report_failures(summary.failures)
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


def report_failures(failures: Sequence[RecordingFailure]) -> None:
    """One line per failed recording; recordings that failed for the same reason (no SLURM job ran, say)
    share one line, so a run of hundreds of recordings does not print hundreds of copies."""
    by_error: dict[str, list[str]] = {}
    for failure in failures:
        by_error.setdefault(failure.error, []).append(failure.recording)
    for error, recordings in by_error.items():
        if len(recordings) <= 3:
            for recording in recordings:
                print(f"ablate: {recording} failed: {error}", file=sys.stderr)
        else:
            shown = ", ".join(recordings[:3])
            print(f"ablate: {len(recordings)} recordings ({shown}, ...) failed: {error}", file=sys.stderr)


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
