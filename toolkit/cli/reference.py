"""``ablate reference apply EXP [--out REF_DIR]``: write a new reference version from settled decisions."""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reference",
        help="reference versions: apply adjudication decisions",
        description="Reference versions made from the experiment's decisions.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    apply = actions.add_parser(
        "apply",
        help="write a new reference version (TextGrids, manifest, record of decisions)",
        description="Apply every span's effective decision to the experiment's current references and write "
        "a new reference version: new TextGrid files, a new manifest with their hashes, and "
        "adjudication.json naming the decisions that went in, into the experiment's references/ folder "
        "under a generated version name (vNNN-<UTC time>) unless --out names another. Open conflicts block "
        "it; decisions made on another reference version are listed and never applied.",
    )
    apply.add_argument("experiment", type=Path, metavar="EXP", help="experiment folder")
    apply.add_argument(
        "--out",
        type=Path,
        metavar="REF_DIR",
        help="new, empty folder to write (default: EXP/references/vNNN-<UTC time>)",
    )
    apply.add_argument(
        "--manifest",
        type=Path,
        metavar="MANIFEST",
        help="the reference version to start from (default: the experiment's manifest)",
    )
    apply.add_argument("--by", default=None, metavar="NAME", help="who applies (default: the login name)")
    apply.set_defaults(func=_apply)


def _apply(args: argparse.Namespace) -> int:
    from toolkit.adjudication.apply import MANIFEST_NAME, apply_decisions
    from toolkit.adjudication.context import open_experiment

    adjudication = open_experiment(args.experiment, args.manifest)
    result = apply_decisions(adjudication, args.by or getpass.getuser(), args.out)
    for decision in result.stale:
        print(
            f"not applied (made on reference version {decision.reference_sha256[:12]}, not this one): "
            f"#{decision.id} {decision.recording_id} {decision.start:g}-{decision.end:g} s {decision.action}"
        )
    print(
        f"applied {len(result.applied)} decisions to {len(result.changed)} recordings "
        f"({', '.join(result.changed)}) into {result.out_dir}"
    )
    print(
        f"new manifest {result.out_dir / MANIFEST_NAME} (manifest sha256 {result.manifest.sha256}); "
        f"point the experiment's 'manifest =' at it to score against this version"
    )
    return 0
