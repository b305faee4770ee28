"""``ablate arms``: list an experiment's arms, or expand combinations and leave-one-out arms."""

from __future__ import annotations

import argparse
from pathlib import Path

from toolkit.core.files import atomic_write_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("arms", help="list arms; expand component combinations and leave-one-out arms")
    parser.add_argument("experiment", help="experiment file or folder")
    parser.add_argument("--combine", help="comma-separated component names to combine into one arm")
    parser.add_argument("--leave-one-out", action="store_true", help="also each arm with one component removed")
    parser.add_argument("--write", action="store_true", help="append the new arms to the experiment file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.core.errors import InputError
    from toolkit.pipeline.expand import arms_toml, expand_arms
    from toolkit.pipeline.experiment import load_experiment

    experiment = load_experiment(args.experiment)
    if not args.combine:
        for arm in experiment.arms.values():
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
