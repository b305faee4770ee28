"""``ablate demo``: build the synthetic pt-BR corpus, freeze its manifest and run the demo experiment.

Goes through the whole protocol: every arm runs on the tuning split, the arm with the lowest
tuning WER is frozen as the challenger with the template gates (``protocol/gates.toml``),
the holdout is opened once for the baseline and that challenger only, and the gate verdict
is printed last. An arm that fails (a stage bug) is named and left out of the choice; the
demo still goes through the protocol and exits 1. A second demo reuses everything and prints
the same verdict. When the demo experiment file or the scorer (its signature) changed since the
demo's protocol record began (a new version of the project), the old record is kept aside and a
new one starts: the demo corpus is rebuilt identically, so its holdout stands in for fresh test
data; a real experiment is refused instead.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.pipeline.experiment import Experiment
    from toolkit.protocol.gates import GateReport

DEFAULT_FOLDER = Path("experiments") / "demo"  # under the current directory: in a checkout, the tracked demo
VERSION_EVENT = "demo version"  # the audit log entry naming the demo version a protocol record began with


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="build the demo corpus and run experiments/demo end to end",
        description="Build the synthetic demo corpus in FOLDER/corpus and go through the whole protocol with "
        "FOLDER/experiment.toml (written from the shipped demo experiment when FOLDER has none).",
    )
    parser.add_argument(
        "folder",
        nargs="?",
        type=Path,
        default=DEFAULT_FOLDER,
        metavar="FOLDER",
        help=f"the demo's experiment folder (default {DEFAULT_FOLDER}, under the current directory)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument(
        "--experiment-only",
        action="store_true",
        help="write FOLDER/experiment.toml (the shipped demo experiment) and stop: a start for your own experiment",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.cli.run import report_arm_failures
    from toolkit.core.json_records import record_to_json
    from toolkit.corpus.freeze import freeze
    from toolkit.demo.corpus import build_corpus
    from toolkit.evaluate import Evaluation, evaluate_run
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.calibration import calibrate
    from toolkit.protocol.challenger import freeze_challenger
    from toolkit.protocol.gates_file import TEMPLATE, load_gates
    from toolkit.protocol.planning import calibration_text
    from toolkit.protocol.report_sections import report_sections
    from toolkit.protocol.testsplit import run_split

    place_experiment_file(args.folder)
    if args.experiment_only:
        return 0
    corpus_dir = args.folder / "corpus"
    print(f"demo: building the synthetic corpus in {corpus_dir}")
    corpus = build_corpus(corpus_dir)
    print(f"demo: {len(corpus.recordings)} recordings, {corpus.total_duration:.0f} s, voice {corpus.voice.label}")
    manifest = corpus_dir / "manifest.json"
    manifest.unlink(missing_ok=True)  # the corpus was just rebuilt: freeze what is there now
    freeze(corpus_dir / "audio", corpus_dir / "refs", manifest, splits_csv=corpus_dir / "splits.csv")
    experiment = load_experiment(args.folder)
    _protocol_for_this_version(experiment)
    # Only the corpus the demo just built is the demo's synthetic test data (toolkit.protocol.ledger).
    demo_data = experiment.manifest_path.resolve() == manifest.resolve()

    failed: list[str] = []

    def show(split: str) -> Evaluation:
        summary = run_split(experiment, split, None, progress=not args.quiet, demo=demo_data)
        evaluation = evaluate_run(summary.folder, experiment.score_options(), report_sections(summary.folder))
        print(f"\n== {experiment.name} / {split}: {summary.describe()} ==")
        print(evaluation.table_text)
        print(f"report: {evaluation.report_markdown}\n        {evaluation.report_html}")
        report_arm_failures(summary)
        failed.extend(arm for arm in summary.failed_arms if arm not in failed)
        return evaluation

    tuning = show("tuning")
    declared = [
        a.name
        for a in experiment.arms.values()
        if a.variant_of is None and a.name != tuning.reference_arm and a.name not in failed
    ]
    overall = tuning.aggregate[(tuning.aggregate["stratum"] == "all") & tuning.aggregate["arm"].isin(declared)]
    if overall.empty:
        print(
            f"demo: every arm but the baseline failed ({', '.join(failed)}); no challenger to freeze", file=sys.stderr
        )
        return 1
    challenger = str(overall.sort_values(["wer", "arm"]).iloc[0]["arm"])
    print(f"\ndemo: calibrating the gates for {challenger} on the tuning split (the baseline re-decoded under dither)")
    calibration = calibrate(experiment, challenger, load_gates(TEMPLATE), progress=not args.quiet)
    print(calibration_text(record_to_json(calibration)))
    # The demo's holdout is two short recordings: too small to detect the template's 0.5-point threshold, which
    # the freeze would refuse; the demo allows it explicitly, and its verdict says so.
    frozen, recorded = freeze_challenger(experiment, challenger, TEMPLATE, allow_underpowered=True)
    print(
        f"\ndemo: challenger = {challenger} (lowest tuning WER among the arms), "
        f"{'frozen' if recorded else 'already frozen, identical'} with {TEMPLATE} "
        f"(config sha256 {frozen.config_sha256[:16]}…, gates sha256 {frozen.gates_sha256[:16]}…)"
    )
    show("holdout")
    print()
    print(_verdict_after_dither(experiment, quiet=args.quiet).text())
    print(
        f"\ndemo: review and adjudicate in the app: {ablate_command()} app {args.folder} (then open http://127.0.0.1:8501)"
    )
    if failed:
        print(
            f"demo: arm(s) {', '.join(failed)} FAILED (lines above): a bug in a stage; please report it",
            file=sys.stderr,
        )
        return 1
    return 0


def _verdict_after_dither(experiment: Experiment, quiet: bool) -> GateReport:
    """The gate verdict; when every other gate passes and the gates pre-register the verdict's stability under
    dither, the holdout is re-decoded that many times first (as a study would: see protocol/gates.toml)."""
    from toolkit.protocol.challenger import gates_copy
    from toolkit.protocol.gates import PROMOTE
    from toolkit.protocol.gates_file import DITHER_GATE, load_gates
    from toolkit.protocol.stability import measure_stability
    from toolkit.protocol.verdict import gate_verdict

    report = gate_verdict(experiment)
    gate = load_gates(gates_copy(experiment)).gates[DITHER_GATE]
    result = next(g for g in report.gates if g.name == DITHER_GATE)
    if gate.reruns and result.value is None and report.others_verdict == PROMOTE:
        print(f"demo: every other gate passes; re-decoding the holdout {gate.reruns} times under inaudible dither")
        measure_stability(experiment, "holdout", gate.reruns, progress=not quiet)
        report = gate_verdict(experiment)
    return report


def ablate_command() -> str:
    """How to call ablate again as this process was called: ``ablate`` when that is what the PATH finds,
    else the path it was called by (``.venv/bin/ablate`` from ``make demo``, the virtualenv not activated)."""
    import shutil

    called = Path(sys.argv[0])
    if called.name != "ablate":
        return f"{sys.executable} -m toolkit"
    found = shutil.which("ablate")
    return "ablate" if found is not None and Path(found).resolve() == called.resolve() else str(called)


def place_experiment_file(folder: Path) -> None:
    """FOLDER/experiment.toml: the shipped demo experiment when there is none; one already there is run as it is."""
    from toolkit.core.files import atomic_write_bytes
    from toolkit.demo import DEMO_EXPERIMENT

    target = folder / "experiment.toml"
    shipped = DEMO_EXPERIMENT.read_bytes()
    if not target.exists():
        atomic_write_bytes(target, shipped)
        print(f"demo: wrote the demo experiment to {target}")
    elif target.read_bytes() != shipped:
        print(
            f"demo: {target} differs from the shipped demo experiment; running it as it is "
            "(delete it for the shipped one)"
        )


def version_stamp(experiment: Experiment) -> str:
    """The demo version a protocol record is for: the experiment file, the scorer, the pipeline code, the gates."""
    from toolkit.core.files import sha256_file
    from toolkit.pipeline.code_version import code_digest
    from toolkit.protocol.gates_file import TEMPLATE
    from toolkit.scorer.signature import scorer_signature

    return (
        f"{sha256_file(experiment.path)} scorer {scorer_signature(experiment.score_options()).hash} "
        f"code {code_digest('arm')} gates {sha256_file(TEMPLATE)}"
    )


def _protocol_for_this_version(experiment: Experiment) -> None:
    """Keep the demo's protocol record only while the demo version it began with (``version_stamp``, as its own
    audit log recorded it) is this one; else keep it aside, with its test-split runs and the openings ledger beside
    the manifest. What the record began with is read from the verified log, never from a side file, so no edit
    outside the log sets an opened record aside."""
    from datetime import datetime

    from toolkit.protocol.audit import AuditLog
    from toolkit.protocol.challenger import protocol_dir
    from toolkit.protocol.ledger import ledger_path
    from toolkit.protocol.state import TEST_SPLITS, verified_log

    folder = protocol_dir(experiment)
    current = version_stamp(experiment)
    log = AuditLog(experiment.folder)
    entries = verified_log(experiment.folder, whole=False).entries()
    stamps = [entry.other.get("stamp") for entry in entries if entry.event == VERSION_EVENT]
    began_with = stamps[-1] if stamps else None
    if folder.is_dir() and any(folder.iterdir()) and began_with != current:
        kept = folder.with_name(f"protocol-before-{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}")
        folder.rename(kept)
        for path in [
            ledger_path(experiment.manifest_path),
            *(run for split in TEST_SPLITS for run in experiment.folder.glob(f"runs/{split}-*")),
        ]:
            if path.exists():
                path.rename(kept / path.name)
        print(
            "demo: the demo experiment file, the scorer, the pipeline code or the gates template changed since its "
            f"protocol record began; that record (with its test-split runs) is kept in {kept} and a new one starts "
            "(a real experiment would need fresh test data)"
        )
    if began_with != current:
        log.append(VERSION_EVENT, stamp=current)
