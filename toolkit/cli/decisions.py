"""``ablate decisions export EXP``: every adjudication decision with its provenance, as JSON or CSV.

CSV cells that a spreadsheet would read as a formula (starting with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return) get a leading apostrophe, so opening the export never runs
anything a listener typed; JSON keeps the text as it is.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "decisions",
        help="adjudication decisions: export them with provenance",
        description="Read the experiment's decision store (adjudication.sqlite).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="print every decision (current and superseded) with provenance",
        description="Print every decision: span, old and new text, annotator, time, "
        "role, reference sha256, and whether a later decision superseded it.",
    )
    export.add_argument("experiment", type=Path, metavar="EXP", help="experiment folder (holds adjudication.sqlite)")
    export.add_argument("--format", choices=("json", "csv"), default="json", help="output format (default json)")
    export.set_defaults(func=_export)


def _export(args: argparse.Namespace) -> int:
    from toolkit.adjudication.store import EXPORT_COLUMNS, STORE_NAME, DecisionStore
    from toolkit.core.errors import InputError

    path = args.experiment / STORE_NAME
    if not path.is_file():
        raise InputError(path, "no decision store here yet (nobody has decided anything in `ablate app`)")
    rows = [row.to_json() for row in DecisionStore(path).export()]
    if args.format == "json":
        json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        writer = csv.DictWriter(sys.stdout, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({key: spreadsheet_safe(value) for key, value in row.items()} for row in rows)
    return 0


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A text cell a spreadsheet would take for a formula, prefixed with an apostrophe; other values as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
