"""Every stage an arm can use, in pipeline order: the one list the experiment loader, the runner, explain
and the protocol ask (a new stage is its module and one line here)."""

from __future__ import annotations

from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.pipeline.loudness import LOUDNESS
from toolkit.pipeline.stage import Stage
from toolkit.pipeline.stages import ENHANCE, ONSET_REPAIR, SECOND_MODEL, VAD, WINDOWS

STAGES: tuple[Stage, ...] = (ENHANCE, LOUDNESS, VAD, WINDOWS, SECOND_MODEL, ONSET_REPAIR)


def stage_named(name: object, *, path: Path, where: str) -> Stage:
    """The stage a component table names with ``stage = "NAME"``; an unknown name is one InputError."""
    found = next((s for s in STAGES if s.name == name), None)
    if found is None:
        raise InputError(path, f"[{where}] has unknown stage {name!r}; stages are {', '.join(names())}")
    return found


def names() -> tuple[str, ...]:
    """The stage names, in pipeline order."""
    return tuple(s.name for s in STAGES)


def position(name: str) -> int:
    """Where the stage ``name`` runs in the pipeline (its place in STAGES)."""
    return names().index(name)


def presence_causes(stage_names: list[str]) -> tuple[str, ...]:
    """The explain causes of the named stages that are blamed by their presence alone, in pipeline order
    (a name no stage has, from an older run record, has none)."""
    return tuple(s.cause for s in STAGES if s.name in stage_names and s.cause is not None)


def all_presence_causes() -> tuple[str, ...]:
    """Every cause a stage can be blamed for by its presence, in pipeline order."""
    return tuple(s.cause for s in STAGES if s.cause is not None)
