"""What a pipeline stage is: one class, found by the runner, the experiment loader, explain and the
protocol through the registry (toolkit/pipeline/stage_registry.py), never by its name.

A stage parses its ``[components.NAME]`` table into a frozen config dataclass, names the identity that goes
into run records and cache keys, names the cause explain gives a change it made, and says what it does:
a *signal* stage changes the prepared signal before it is cut into decode units (``prepare``: its time map
composes onto the signal's), a *word* stage changes the arm's final words in original time (``finish``);
the stages that cut the signal into units (vad, windows) or pick recognizers (second_model) are the
runner's own steps. ``StageBase`` gives the defaults, so a new stage writes only what it changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeVar

from toolkit.audio.signal import Signal
from toolkit.audio.vad import SileroVadConfig
from toolkit.core.config import build_config
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Word

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    StageConfig = DataclassInstance  # every stage's config is a frozen dataclass
else:
    StageConfig = object

C = TypeVar("C", bound="StageConfig")
JsonRecord = dict[str, object]  # a JSON object written into a run record or cache key
# Silero's speech regions of the arm's prepared signal for these parameters, in original time (cached).
Speech = Callable[[SileroVadConfig], list[tuple[float, float]]]


@dataclass(frozen=True)
class Prepared:
    """A signal stage's result: the new signal (its time map leads back to the input's time) and what the
    run records of it (in the arm's output, under the stage's name)."""

    signal: Signal
    record: JsonRecord


@dataclass(frozen=True)
class Finished:
    """A word stage's result: the arm's words, still in original time, and how many starts it moved later
    (added to the arm output's ``retimed_onsets``)."""

    words: list[Word]
    retimed_onsets: int


class Stage(Protocol):
    """The interface every stage implements, with its config type erased (the registry holds all of them)."""

    @property
    def name(self) -> str:
        """The ``stage = "NAME"`` of a component table; also the stage's key in run records."""
        ...

    @property
    def cause(self) -> str | None:
        """The cause explain gives a change when the arm has this stage and the baseline has not, and no
        cause read from the run's records (VAD regions, seams, fallbacks, forms) applies; None for a stage
        whose effects those records show, or that changes no word."""
        ...

    @property
    def sources(self) -> tuple[str, ...]:
        """The code of the stage's own step, as paths under toolkit/ (toolkit/pipeline/code_version.py): what a
        signal stage's or cached stage's results are keyed by; () for a stage counted in the arm's code only."""
        ...

    def parse(self, table: dict[str, object], *, path: Path, where: str) -> StageConfig:
        """The stage's config from its component table (``stage`` removed); one InputError per mistake."""
        ...

    def identity(self, config: StageConfig) -> JsonRecord:
        """The configured stage as JSON, for run records and cache keys."""
        ...

    def recognizers(self, config: StageConfig) -> tuple[str, ...]:
        """The recognizers (by experiment name) this stage decodes with besides the primary."""
        ...

    def silero_passes(self, config: StageConfig) -> tuple[SileroVadConfig, ...]:
        """The Silero VAD passes the stage runs (where each runs goes into the run record)."""
        ...

    def silero_sites(self) -> tuple[tuple[str, ...], ...]:
        """Where in the component table Silero parameters go (a ``vad_profile`` may fill them): key paths,
        ``()`` for the table itself."""
        ...

    def prepare(self, config: StageConfig, signal: Signal) -> Prepared | None:
        """A signal stage's work on the prepared 16 kHz signal before segmentation; None for other stages."""
        ...

    def finish(self, config: StageConfig, words: list[Word], speech: Speech) -> Finished | None:
        """A word stage's work on the arm's final words (after seams and combine), with ``speech`` to ask for a
        Silero pass; None for other stages."""
        ...


class StageBase(Generic[C]):
    """Defaults for a stage whose config is ``config_class`` built strictly from its table: no recognizer,
    no Silero pass, no cause, no signal work. ``own`` narrows an erased config back to ``C``."""

    name: ClassVar[str]
    config_class: type[C]
    cause: str | None = None
    sources: tuple[str, ...] = ()

    def own(self, config: StageConfig) -> C:
        """``config`` as this stage's config type (a config of another stage is a programming error)."""
        if not isinstance(config, self.config_class):
            raise TypeError(f"stage {self.name} got a {type(config).__name__}, not a {self.config_class.__name__}")
        return config

    def parse(self, table: dict[str, object], *, path: Path, where: str) -> StageConfig:
        return build_config(self.config_class, table, path=path, where=where)

    def identity(self, config: StageConfig) -> JsonRecord:
        return asdict(self.own(config))

    def recognizers(self, config: StageConfig) -> tuple[str, ...]:
        return ()

    def silero_passes(self, config: StageConfig) -> tuple[SileroVadConfig, ...]:
        return ()

    def silero_sites(self) -> tuple[tuple[str, ...], ...]:
        return ()

    def prepare(self, config: StageConfig, signal: Signal) -> Prepared | None:
        return None

    def finish(self, config: StageConfig, words: list[Word], speech: Speech) -> Finished | None:
        return None


def subtable(table: dict[str, object], key: str, config_class: type[C], what: str, *, path: Path, where: str) -> C:
    """Take the required nested table ``[where.key]`` out of ``table`` and build its configuration."""
    sub = table.pop(key, None)
    if not isinstance(sub, dict):
        raise InputError(path, f"[{where}.{key}] must be a table of {what}")
    return build_config(config_class, sub, path=path, where=f"{where}.{key}")
