"""``ablate audit verify|repair``: check an experiment's audit log, or drop a line a crash tore."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="verify the experiment's append-only protocol audit log (or repair a torn last line)",
        description="Verify the experiment's append-only protocol audit log.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    verify = actions.add_parser(
        "verify",
        help="check the hash chain, its head, every hash the log names and the opened test files against the disk",
        description="Exit 0 when the chain, its head, every named hash and the audio and references of every test "
        "split the log opened hold; else 2, naming the first thing that does not. A tool on your own machine cannot "
        "tell a log rewritten whole with its head: publish the head before the holdout opens and pass it as --head.",
    )
    verify.add_argument("experiment", help="experiment folder (or its experiment.toml)")
    verify.add_argument(
        "--head",
        metavar="ENTRIES:SHA256",
        help="a head published earlier (printed by 'challenger freeze' and 'gate'): exit 2 unless the log still "
        "holds that very entry, and so every entry before it, unchanged",
    )
    verify.set_defaults(func=_verify)
    repair = actions.add_parser(
        "repair",
        help="drop a last line torn by a crash, complete a head a crash left behind (nothing else), and log it",
        description="Drop the log's last line when a crash left it torn (no end of line), and move the head onto a "
        "last entry that a command killed between its two writes had named as pending. Nothing else is ever "
        "repaired: an edited, reordered, deleted or hand-appended entry stays an error.",
    )
    repair.add_argument("experiment", help="experiment folder (or its experiment.toml)")
    repair.set_defaults(func=_repair)


def _experiment_folder(given: str) -> Path:
    from toolkit.core.errors import InputError

    folder = Path(given)
    folder = folder.parent if folder.is_file() else folder
    if not (folder / "experiment.toml").is_file():
        raise InputError(folder, "not an experiment folder (no experiment.toml here)")
    return folder


def _verify(args: argparse.Namespace) -> int:
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.audit import AuditLog, verify, verify_published
    from toolkit.protocol.heldout_inputs import require_test_inputs
    from toolkit.protocol.state import current_hash, replay, require_whole

    folder = _experiment_folder(args.experiment)
    log = AuditLog(folder)
    count = verify(log, current_hash)
    state = replay(log)
    require_whole(log, state)
    opened = require_test_inputs(load_experiment(folder).manifest_path, state.opened) if state.opened else 0
    print(f"OK: {count} entries in {log.path}; the chain, its head and every hash it names hold")
    if opened:
        print(f"OK: the {opened} recordings of the opened test split(s) still hash to the manifest")
    if args.head:
        entry = verify_published(log, args.head)
        print(f"OK: the published head {args.head} is entry {entry} of this log, unchanged with all before it")
        since = log.entries()[entry:]
        repairs = sum(e.event == "log repaired" for e in since)
        print(
            f"since it: {len(since)} entries ({', '.join(dict.fromkeys(e.event for e in since)) or 'none'})"
            + (
                f"; {repairs} 'log repaired' among them: each completed a head a crash left (or one written by "
                "hand), so read the entry before each"
                if repairs
                else ""
            )
        )
    print(f"head to publish: {log.published_head()}")
    return 0


def _repair(args: argparse.Namespace) -> int:
    from toolkit.core.errors import InputError
    from toolkit.protocol.audit import AuditLog, repair

    log = AuditLog(_experiment_folder(args.experiment))
    if not log.path.is_file():
        raise InputError(log.path, "no audit log here to repair")
    done = repair(log)
    print(f"repaired {log.path}: {done}" if done else f"nothing to repair: {log.path} has no torn last line")
    return 0
