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
        help="check the hash chain and every hash the log names against the disk",
        description="Exit 0 when the chain and every named hash hold; else 2, naming the first entry that does not.",
    )
    verify.add_argument("experiment", help="experiment folder (or its experiment.toml)")
    verify.set_defaults(func=_verify)
    repair = actions.add_parser(
        "repair",
        help="drop a last line torn by a crash (nothing else), and log that it did",
        description="Drop the log's last line when a crash left it torn (no end of line). Nothing else is ever "
        "repaired: an edited, reordered or deleted entry stays an error.",
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
    from toolkit.protocol.audit import AuditLog, verify
    from toolkit.protocol.state import current_hash, replay, require_whole

    log = AuditLog(_experiment_folder(args.experiment))
    count = verify(log, current_hash)
    require_whole(log, replay(log))
    print(f"OK: {count} entries in {log.path}; the chain and every hash it names hold")
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
