"""``ablate audit verify``: check an experiment's audit log chain and every hash it names."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="verify the experiment's append-only protocol audit log",
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


def _verify(args: argparse.Namespace) -> int:
    from pathlib import Path

    from toolkit.protocol.audit import AuditLog, verify
    from toolkit.protocol.state import current_hash

    folder = Path(args.experiment)
    folder = folder.parent if folder.is_file() else folder
    log = AuditLog(folder)
    count = verify(log, current_hash)
    print(f"OK: {count} entries in {log.path}; the chain and every hash it names hold")
    return 0
