"""Arm algebra: combinations of named components and leave-one-out removals.

Arms are named by their components joined with ``+`` (the empty arm is ``baseline``), so
the name of a leave-one-out arm says exactly what it runs.
"""

from __future__ import annotations

from toolkit.core.errors import InputError, Mistakes
from toolkit.core.names import unknown_name
from toolkit.pipeline.experiment import Experiment


def arm_name(components: list[str]) -> str:
    return "+".join(components) if components else "baseline"


def expand_arms(experiment: Experiment, combine: list[str], leave_one_out: bool) -> dict[str, list[str]]:
    """The combination of ``combine`` and, optionally, each arm with one of them removed."""
    mistakes = Mistakes()
    for name in combine:
        if name not in experiment.components:
            mistakes.add(experiment.path, unknown_name("component", name, list(experiment.components)))
    mistakes.raise_found()
    if len(set(combine)) != len(combine):
        raise InputError(experiment.path, f"--combine names a component twice: {', '.join(combine)}")
    arms = {arm_name(combine): list(combine)}
    if leave_one_out:
        for removed in combine:
            rest = [c for c in combine if c != removed]
            arms[arm_name(rest)] = rest
    return arms


def arms_toml(arms: dict[str, list[str]]) -> str:
    """TOML lines for the ``[arms]`` table."""
    lines = []
    for name, members in arms.items():
        items = ", ".join(f'"{m}"' for m in members)
        lines.append(f'"{name}" = [{items}]')
    return "\n".join(lines) + "\n"
