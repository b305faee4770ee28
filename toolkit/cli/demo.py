"""``ablate demo``: build the synthetic pt-BR corpus, freeze its manifest and run the demo experiment.

Follows the protocol in miniature: every arm runs on the tuning split, the arm with the
lowest tuning WER becomes the challenger, and only the baseline and that challenger are
then run on the holdout split.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEMO_EXPERIMENT = Path(__file__).resolve().parents[2] / "experiments" / "demo"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="build the demo corpus and run experiments/demo end to end")
    parser.add_argument("--experiment", type=Path, default=DEMO_EXPERIMENT, help="demo experiment folder")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.arms.engine import run_experiment
    from toolkit.demo.corpus import build_corpus
    from toolkit.evaluate import Evaluation, evaluate_run
    from toolkit.experiment import load_experiment
    from toolkit.manifest import freeze

    corpus_dir = args.experiment / "corpus"
    print(f"demo: building the synthetic corpus in {corpus_dir}")
    corpus = build_corpus(corpus_dir)
    print(f"demo: {len(corpus.recordings)} recordings, {corpus.total_duration:.0f} s, voice {corpus.voice.label}")
    manifest = corpus_dir / "manifest.json"
    manifest.unlink(missing_ok=True)  # the corpus was just rebuilt: freeze what is there now
    freeze(corpus_dir / "audio", corpus_dir / "refs", manifest, splits_csv=corpus_dir / "splits.csv")
    experiment = load_experiment(args.experiment)

    def show(split: str, arms: list[str] | None) -> Evaluation:
        summary = run_experiment(experiment, split, arms, progress=not args.quiet)
        evaluation = evaluate_run(summary.folder)
        print(f"\n== {experiment.name} / {split}: {summary.describe()} ==")
        print(evaluation.table_text)
        print(f"report: {evaluation.report_markdown}\n        {evaluation.report_html}")
        return evaluation

    tuning = show("tuning", None)
    declared = [a.name for a in experiment.arms.values() if a.variant_of is None and a.name != tuning.reference_arm]
    overall = tuning.aggregate[(tuning.aggregate["stratum"] == "all") & tuning.aggregate["arm"].isin(declared)]
    challenger = str(overall.sort_values(["wer", "arm"]).iloc[0]["arm"])
    print(f"\ndemo: challenger for the holdout = {challenger} (lowest tuning WER among the arms)")
    show("holdout", [tuning.reference_arm, challenger])
    return 0
