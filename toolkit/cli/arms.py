"""``ablate arms``: list arms, expand combinations and leave-one-out arms, import hypotheses made elsewhere."""

from __future__ import annotations

import argparse
from pathlib import Path

from toolkit.core.files import atomic_write_text

IMPORT = "import"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "arms",
        help="list arms; expand component combinations and leave-one-out arms; import hypotheses made elsewhere",
        description="List an experiment's arms, expand combinations (--combine), or import a folder of "
        "per-recording hypothesis files made elsewhere as an arm: 'ablate arms import EXP --arm NAME DIR'.",
    )
    parser.add_argument(
        "experiment", nargs="+", metavar="EXPERIMENT", help="experiment file or folder; or: import EXPERIMENT DIR"
    )
    parser.add_argument("--combine", help="comma-separated component names to combine into one arm")
    parser.add_argument("--leave-one-out", action="store_true", help="also each arm with one component removed")
    parser.add_argument("--write", action="store_true", help="append the new arms to the experiment file")
    # argparse ends the positionals at the first option, so the folder after --arm NAME is read as --arm's second
    # value: 'import EXP --arm NAME DIR' and 'import EXP DIR --arm NAME' both work.
    parser.add_argument(
        "--arm",
        nargs="+",
        metavar="NAME",
        help="with import: the imported arm's name (its files go to EXPERIMENT/imported/NAME), then DIR",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.core.errors import InputError, ToolkitError
    from toolkit.pipeline.expand import arms_toml, expand_arms
    from toolkit.pipeline.experiment import load_experiment

    if args.experiment[0] == IMPORT and len(args.experiment) in (2, 3):
        given = [*args.experiment[2:], *(args.arm or [])[1:]]
        if args.combine or args.leave_one_out or args.write:
            raise ToolkitError(f"ablate arms {IMPORT} takes --arm NAME only, not --combine, --leave-one-out or --write")
        if args.arm is None or len(given) != 1:
            raise ToolkitError(f"usage: ablate arms {IMPORT} EXPERIMENT --arm NAME DIR (one arm name, one folder)")
        return _import(args.experiment[1], args.arm[0], Path(given[0]))
    if len(args.experiment) != 1:
        raise ToolkitError(f"expected one experiment, or: ablate arms {IMPORT} EXPERIMENT --arm NAME DIR")
    if args.arm is not None:
        raise ToolkitError(f"--arm names the arm of 'ablate arms {IMPORT} EXPERIMENT --arm NAME DIR'")
    experiment = load_experiment(args.experiment[0])
    if not args.combine:
        for arm in experiment.arms.values():
            if arm.imported is not None:
                record = arm.imported.record
                print(f"{arm.name}: imported from {record.source} ({len(record.files)} files, {record.imported_at})")
                continue
            print(f"{arm.name}: {' + '.join(c.name for c in arm.components) or '(baseline pipeline)'}")
        return 0
    arms = expand_arms(experiment, [c.strip() for c in args.combine.split(",") if c.strip()], args.leave_one_out)
    clashes = [
        f"{name} (declared as {' + '.join(c.name for c in experiment.arms[name].components) or 'baseline'})"
        for name, members in arms.items()
        if name in experiment.arms and {c.name for c in experiment.arms[name].components} != set(members)
    ]
    if clashes:  # a leave-one-out arm must run what its name says, not an older arm of that name
        raise InputError(
            experiment.path,
            f"arm name(s) already declared with other components: "
            f"{', '.join(clashes)}; rename them or combine other components",
        )
    new = {name: members for name, members in arms.items() if name not in experiment.arms}
    text = arms_toml(arms)
    if not args.write:
        print(text, end="")
        return 0
    if not new:
        print("all these arms are already in the experiment file")
        return 0
    original = experiment.path.read_text(encoding="utf-8")
    headers = [line.strip() for line in original.splitlines() if line.lstrip().startswith("[")]
    if not headers or headers[-1] != "[arms]":
        raise InputError(experiment.path, "--write appends to the [arms] table, which must be the file's last table")
    updated = original.rstrip("\n") + "\n" + arms_toml(new)
    _require_loadable(experiment.path, updated)
    atomic_write_text(experiment.path, updated)
    print(f"added {', '.join(new)} to {experiment.path}")
    return 0


def _require_loadable(path: Path, text: str) -> None:
    """Refuse to write an experiment file that would not load (checked on a copy beside it, then removed)."""
    from toolkit.core.errors import InputError
    from toolkit.pipeline.experiment import load_experiment

    check = path.with_name(f".{path.name}.check")
    atomic_write_text(check, text)
    try:
        load_experiment(check)
    except InputError as error:
        raise InputError(
            path, f"--write refused, nothing written: with these arms the file would not load ({error.problem})"
        ) from None
    finally:
        check.unlink(missing_ok=True)


def _import(given: str, arm: str, source: Path) -> int:
    """Import ``source`` as arm ``arm``; refused for an arm any freeze of this experiment named, since its files are
    what that freeze (and any holdout opened under it) rests on."""
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.pipeline.import_arm import import_arm
    from toolkit.protocol.lock import protocol_lock
    from toolkit.protocol.state import frozen_arms, refuse, verified_log

    experiment = load_experiment(given)
    with protocol_lock(experiment.folder, f"ablate arms {IMPORT}"):
        log = verified_log(experiment.folder)
        if arm in frozen_arms(log):
            raise refuse(
                log,
                f"arms {IMPORT}",
                experiment.folder / "imported" / arm,
                f"arm {arm!r} was frozen as a challenger: its imported files cannot be replaced, added or removed "
                "(import the new files under another name and freeze that arm)",
            )
        record = import_arm(experiment, arm, source)
    print(
        f"imported {len(record.files)} hypothesis files from {record.source} as arm {arm!r} in "
        f"{experiment.folder / 'imported' / arm} (each hashed; the arm is declared in {experiment.path})"
    )
    return 0
