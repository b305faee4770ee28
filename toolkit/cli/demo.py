"""``ablate demo``: build the synthetic pt-BR corpus, freeze its manifest and run the demo experiment."""

from __future__ import annotations

import argparse
from pathlib import Path

DEMO_EXPERIMENT = Path(__file__).resolve().parents[2] / "experiments" / "demo"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="build the demo corpus and run experiments/demo end to end")
    parser.add_argument("--experiment", type=Path, default=DEMO_EXPERIMENT, help="demo experiment folder")
    parser.add_argument("--splits", default="tuning,holdout", help="splits to run, in order")
    parser.add_argument("--arms", help="comma-separated arm names (default: every arm)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.arms.engine import run_experiment
    from toolkit.demo.corpus import build_corpus
    from toolkit.evaluate import evaluate_run
    from toolkit.experiment import load_experiment
    from toolkit.manifest import freeze

    corpus_dir = args.experiment / "corpus"
    print(f"demo: building the synthetic corpus in {corpus_dir}")
    corpus = build_corpus(corpus_dir)
    print(f"demo: {len(corpus.recordings)} recordings, voice {corpus.voice}")
    freeze(corpus_dir / "audio", corpus_dir / "refs", corpus_dir / "manifest.json",
           splits_csv=corpus_dir / "splits.csv")
    experiment = load_experiment(args.experiment)
    arms = [a.strip() for a in args.arms.split(",")] if args.arms else None
    for split in [s.strip() for s in args.splits.split(",") if s.strip()]:
        summary = run_experiment(experiment, split, arms, progress=not args.quiet)
        evaluation = evaluate_run(summary.folder)
        print(f"\n== {experiment.name} / {split}: {summary.computed} computed, {summary.reused} reused ==")
        print(evaluation.table_text)
        print(f"report: {evaluation.report_markdown}\n        {evaluation.report_html}")
    return 0
