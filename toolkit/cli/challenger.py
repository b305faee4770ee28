"""``ablate challenger freeze``: the challenger's configuration with the gates, before the holdout; ``template``."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "challenger",
        help="freeze the challenger arm and the gates before the holdout",
        description="Freeze the challenger arm and the gates file before the holdout.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    freeze = actions.add_parser(
        "freeze",
        help="hash and record the arm's configuration, gates, manifest, scorer",
        description="Record the arm's full resolved configuration, the gates file's "
        "sha256, the manifest sha256 and the scorer signature.",
    )
    freeze.add_argument("experiment", help="experiment file or folder")
    freeze.add_argument("--arm", required=True, help="the challenger arm (chosen on the tuning split)")
    freeze.add_argument(
        "--gates",
        required=True,
        metavar="GATES.toml",
        help="pre-registered gates (template: ablate challenger template)",
    )
    freeze.add_argument(
        "--allow-underpowered",
        action="store_true",
        help="freeze even when the tuning run shows the holdout too small to detect the gates' own WER threshold "
        "(recorded; the verdict says so)",
    )
    freeze.set_defaults(func=_freeze)
    template = actions.add_parser(
        "template",
        help="print the gates template (every gate written out) to start a gates file from",
        description="Print the gates template: every gate with its rule and the toolkit's default threshold. "
        "Save it beside your experiment, set the tolerances you will accept, then freeze it with the challenger.",
    )
    template.set_defaults(func=_template)


def _template(args: argparse.Namespace) -> int:
    from toolkit.protocol.gates_file import TEMPLATE

    sys.stdout.write(TEMPLATE.read_text(encoding="utf-8"))
    return 0


def _freeze(args: argparse.Namespace) -> int:
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.challenger import challenger_file, freeze_challenger, tuning_note
    from toolkit.protocol.planning import planning, planning_text
    from toolkit.protocol.state import replay, verified_log

    experiment = load_experiment(args.experiment)
    frozen, recorded = freeze_challenger(experiment, args.arm, args.gates, allow_underpowered=args.allow_underpowered)
    done = "froze" if recorded else "already frozen, identical:"
    print(
        f"{done} challenger {frozen.arm!r} (config sha256 {frozen.config_sha256[:16]}…, gates sha256 "
        f"{frozen.gates_sha256[:16]}…, manifest sha256 {frozen.manifest_sha256[:16]}…, scorer {frozen.signature_hash}) "
        f"in {challenger_file(experiment)}"
    )
    note = tuning_note(experiment, frozen.arm)
    if note:
        print(note)
    log = verified_log(experiment.folder)
    state = replay(log)
    print(planning_text(planning(state.frozen_entry)))
    opened = state.finished
    if "holdout" not in opened:
        print(
            f"audit head: {log.published_head()} (publish it before the holdout opens: commit it, send it, print it; "
            f"'ablate audit verify {experiment.folder} --head {log.published_head()}' later shows the log still "
            "holds this freeze unchanged)"
        )
    if "holdout" in opened:
        print(f"next: ablate gate {experiment.folder}   (the holdout was already run for this challenger)")
    else:
        print(f"next: ablate run {experiment.folder} --split holdout   (runs baseline and {frozen.arm} once)")
    return 0
