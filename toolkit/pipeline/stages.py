"""The stages the pipeline was built with: each one's config dataclass and its stage class.

enhance (waveform) -> vad (speech regions, merged into decode units) -> windows (overlapping
windows, inside VAD units when both are on) -> second_model (replace or combine the recognizer)
-> onset_repair (long words that run through a VAD pause cut back to the speech onset, on the
arm's final words, whatever stages made them). The registry (toolkit/pipeline/stage_registry.py)
lists them, and stages added since in their own modules, in pipeline order. Each stage's parameters
are parsed strictly (``toolkit.core.config.build_config``) into a dataclass whose fields are all
written out in the experiment file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toolkit.audio.vad import SileroVadConfig
from toolkit.core.config import build_config, require_non_negative
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Word
from toolkit.pipeline.onset_repair import clamp_onsets
from toolkit.pipeline.seam_records import SeamConfig
from toolkit.pipeline.stage import Finished, Speech, StageBase, StageConfig, subtable
from toolkit.pipeline.windows import PauseConfig, check_pause_layout

if TYPE_CHECKING:
    from toolkit.enhance.base import Enhancer


@dataclass(frozen=True)
class VadStageConfig(SileroVadConfig):
    """Silero's parameters plus the cut & merge of its regions into decode units.

    ``merge_max_s``: adjacent regions are joined into units spanning at most this many
    seconds, each decoded once with the audio between its regions kept (0: one unit per
    region). ``merge_max_gap_s``: a pause longer than this always starts a new unit (at least
    ``merge_max_s`` reproduces WhisperX, which has no pause limit). The merge never splits a
    region, so with merging on Silero's ``max_speech_duration_s`` may not exceed ``merge_max_s``:
    then no unit is longer than ``merge_max_s``.

    ``join_units``: false decodes each unit on its own (WhisperX); true puts the units back to back,
    the audio between them dropped, and decodes that as one stream with the recognizer's own long-form
    loop (faster-whisper's ``vad_filter`` does the same), so the sentence Whisper leaves unfinished at
    the end of a 30 s window goes on in the next window instead of being decoded again at every unit's end.

    ``redecode_skipped_s`` (joined units only): a run of units holding at least this many seconds of speech
    in which the stream's decode placed no word is decoded again on its own: Whisper's long-form loop can
    seek past speech (toolkit/pipeline/skipped_speech.py). 0 turns it off.
    """

    merge_max_s: float = 0.0
    merge_max_gap_s: float = 0.0
    join_units: bool = False
    redecode_skipped_s: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.merge_max_s < 0 or self.merge_max_gap_s < 0:
            raise ValueError(
                f"merge_max_s ({self.merge_max_s}) and merge_max_gap_s ({self.merge_max_gap_s}) must not be negative"
            )
        if self.redecode_skipped_s < 0 or (self.redecode_skipped_s > 0 and not self.join_units):
            raise ValueError(
                f"redecode_skipped_s ({self.redecode_skipped_s}) must be 0, or above 0 with join_units = true "
                "(units decoded apart are each decoded whole)"
            )
        if self.merge_max_s > 0 and self.max_speech_duration_s > self.merge_max_s:
            raise ValueError(
                f"max_speech_duration_s {self.max_speech_duration_s} must not exceed merge_max_s "
                f"{self.merge_max_s} (the merge never splits a region, so units would be longer)"
            )

    def silero(self) -> SileroVadConfig:
        """The Silero part alone: what the speech regions (and their cache entry) depend on."""
        return SileroVadConfig(**{f.name: getattr(self, f.name) for f in fields(SileroVadConfig)})


@dataclass(frozen=True)
class WindowsConfig:
    """Overlapping windows: ``placement = "grid"`` (fixed length and overlap, ``origin_s`` places
    the grid) or ``"vad_pauses"`` (each edge moved into a VAD pause, ``pauses``; toolkit/pipeline/windows.py).

    Each of ``shifted_origins_s`` reruns every arm that uses these windows with the grid moved
    there (arm ``NAME@<origin>s``), so the report can show how much results move with the seams.
    """

    length_s: float
    overlap_s: float
    origin_s: float
    shifted_origins_s: tuple[float, ...]
    placement: Literal["grid", "vad_pauses"]
    seam: SeamConfig
    pauses: PauseConfig | None  # placement = "vad_pauses" only

    def __post_init__(self) -> None:
        if self.length_s <= 0 or self.overlap_s < 0:
            raise ValueError(
                f"window length ({self.length_s}) must be positive and overlap ({self.overlap_s}) not negative"
            )
        if self.length_s <= self.overlap_s:
            raise ValueError(f"window length {self.length_s} s must be longer than its overlap {self.overlap_s} s")
        if self.overlap_s > self.length_s / 2:
            raise ValueError(
                f"overlap {self.overlap_s} s may be at most half the window length "
                f"{self.length_s} s (seams are decided between two windows)"
            )
        for origin in (self.origin_s, *self.shifted_origins_s):
            if not 0 <= origin < self.length_s - self.overlap_s:
                raise ValueError(f"origin {origin} s must lie in [0, length_s - overlap_s)")
        if len({self.origin_s, *self.shifted_origins_s}) != 1 + len(self.shifted_origins_s):
            raise ValueError("shifted_origins_s must differ from origin_s and from each other")
        if self.placement == "vad_pauses":
            if self.pauses is None:
                raise ValueError('placement = "vad_pauses" needs its pauses table')
            check_pause_layout(self.length_s, self.overlap_s, self.pauses.search_s)


@dataclass(frozen=True)
class SecondModelConfig:
    """Use another recognizer instead of the first (``replace``) or beside it (``combine``).

    ``pair_collar_s`` (``combine`` only, where it must be written out): a second-recognizer word
    may pair with a first-recognizer word only when its onset lies this close to that word's span
    (toolkit/pipeline/combine.py).
    """

    recognizer: str
    mode: Literal["replace", "combine"]
    pair_collar_s: float | None = None

    def __post_init__(self) -> None:
        if self.mode == "replace" and self.pair_collar_s is not None:
            raise ValueError('pair_collar_s applies only to mode = "combine"')
        if self.mode == "combine":
            if self.pair_collar_s is None:
                raise ValueError('mode = "combine" must write out pair_collar_s (seconds)')
            require_non_negative(self, "pair_collar_s")


@dataclass(frozen=True)
class OnsetRepairConfig:
    """The onset repair of toolkit/pipeline/onset_repair.py on an arm's final words: a word longer than
    ``clamp_word_s`` that runs through a pause (a gap of at least ``min_pause_s`` between speech
    regions of the Silero pass ``vad`` on the prepared audio) starts at the speech onset after it,
    but keeps at least ``clamp_word_s``."""

    min_pause_s: float
    clamp_word_s: float
    vad: SileroVadConfig

    def __post_init__(self) -> None:
        require_non_negative(self, "min_pause_s")
        if not math.isfinite(self.clamp_word_s) or self.clamp_word_s <= 0:
            raise ValueError(f"clamp_word_s must be a finite positive number, not {self.clamp_word_s!r}")


@dataclass(frozen=True)
class EnhanceConfig:
    """An enhancement method by name and its full, checked parameter table."""

    method: str
    params: dict[str, Any]


class EnhanceStage(StageBase[EnhanceConfig]):
    """Speech enhancement of the whole recording (toolkit/enhance), before resampling; the runner runs the
    enhancer in its own worker and caches its signal (with the enhancer's delay as its time map)."""

    name = "enhance"
    config_class = EnhanceConfig
    cause = "enhancement"
    sources = ("enhance", "audio/signal.py", "audio/timemap.py")

    def parse(self, table: dict[str, object], *, path: Path, where: str) -> EnhanceConfig:
        """``method`` plus a ``params`` table naming every parameter of that enhancer."""
        import dataclasses

        from toolkit.enhance import ENHANCERS

        extra = sorted(set(table) - {"method", "params"})
        if extra:
            raise InputError(path, f"[{where}] has unknown key(s) {', '.join(extra)}; use method and [{where}.params]")
        method = table.get("method")
        if not isinstance(method, str) or method not in ENHANCERS:
            raise InputError(path, f"[{where}] method must be one of {', '.join(ENHANCERS)}, not {method!r}")
        params = table.get("params")
        if not isinstance(params, dict):
            raise InputError(path, f"[{where}.params] must be a table of every {method} parameter")
        missing = [f.name for f in dataclasses.fields(ENHANCERS[method][1]) if f.name not in params]
        if missing:
            raise InputError(path, f"[{where}.params] must write out every parameter; missing {', '.join(missing)}")
        try:
            ENHANCERS[method][1].from_mapping(params)  # checks types and ranges, loads no model
        except InputError as error:
            raise InputError(path, f"[{where}.params] {error.problem}") from None
        return EnhanceConfig(method, dict(params))


class VadStage(StageBase[VadStageConfig]):
    """Silero's speech regions, cut & merged into the units decoded (toolkit/audio/vad.py)."""

    name = "vad"
    config_class = VadStageConfig

    def silero_passes(self, config: StageConfig) -> tuple[SileroVadConfig, ...]:
        return (self.own(config).silero(),)

    def silero_sites(self) -> tuple[tuple[str, ...], ...]:
        return ((),)


class WindowsStage(StageBase[WindowsConfig]):
    """Overlapping windows, their seams reconciled (toolkit/pipeline/windows.py, seams.py)."""

    name = "windows"
    config_class = WindowsConfig

    def parse(self, table: dict[str, object], *, path: Path, where: str) -> WindowsConfig:
        from toolkit.pipeline.seam_records import SeamConfig

        rest = dict(table)
        seam_config = subtable(rest, "seam", SeamConfig, "seam reconciliation parameters", path=path, where=where)
        pauses = _parse_pauses(rest.pop("pauses", None), rest.get("placement"), path=path, where=where)
        return build_config(WindowsConfig, {**rest, "seam": seam_config, "pauses": pauses}, path=path, where=where)

    def silero_passes(self, config: StageConfig) -> tuple[SileroVadConfig, ...]:
        pauses = self.own(config).pauses
        return () if pauses is None else (pauses.vad,)

    def silero_sites(self) -> tuple[tuple[str, ...], ...]:
        return (("pauses", "vad"),)


class SecondModelStage(StageBase[SecondModelConfig]):
    """Another recognizer in place of the primary, or beside it with the streams combined (combine.py)."""

    name = "second_model"
    config_class = SecondModelConfig

    def parse(self, table: dict[str, object], *, path: Path, where: str) -> SecondModelConfig:
        return build_config(SecondModelConfig, table, path=path, where=where, require_all=False)

    def recognizers(self, config: StageConfig) -> tuple[str, ...]:
        return (self.own(config).recognizer,)


class OnsetRepairStage(StageBase[OnsetRepairConfig]):
    """Long words that run through a pause moved to the speech onset, on the arm's final words."""

    name = "onset_repair"
    config_class = OnsetRepairConfig

    def parse(self, table: dict[str, object], *, path: Path, where: str) -> OnsetRepairConfig:
        rest = dict(table)
        vad = subtable(rest, "vad", SileroVadConfig, "the Silero parameters of the pause pass", path=path, where=where)
        return build_config(OnsetRepairConfig, {**rest, "vad": vad}, path=path, where=where)

    def silero_passes(self, config: StageConfig) -> tuple[SileroVadConfig, ...]:
        return (self.own(config).vad,)

    def silero_sites(self) -> tuple[tuple[str, ...], ...]:
        return (("vad",),)

    def finish(self, config: StageConfig, words: list[Word], speech: Speech) -> Finished:
        """The repair of toolkit/pipeline/onset_repair.py against the speech of the stage's own Silero pass."""
        own = self.own(config)
        repaired, moved = clamp_onsets(words, speech(own.vad), own.min_pause_s, own.clamp_word_s)
        return Finished(repaired, moved)


ENHANCE, VAD, WINDOWS, SECOND_MODEL, ONSET_REPAIR = (
    EnhanceStage(),
    VadStage(),
    WindowsStage(),
    SecondModelStage(),
    OnsetRepairStage(),
)


def _parse_pauses(table: object, placement: object, *, path: Path, where: str) -> PauseConfig | None:
    """``[where.pauses]`` (with its ``vad`` table) is required by ``placement = "vad_pauses"`` and refused otherwise."""
    if placement != "vad_pauses":
        if table is not None and placement == "grid":
            raise InputError(
                path, f'[{where}.pauses] applies only to placement = "vad_pauses", not placement = {placement!r}'
            )
        return None
    if not isinstance(table, dict) or not isinstance(table.get("vad"), dict):
        raise InputError(
            path,
            f'placement = "vad_pauses" needs a [{where}.pauses] table with its [{where}.pauses.vad] Silero parameters',
        )
    from toolkit.pipeline.windows import PauseConfig

    rest = dict(table)
    vad = build_config(SileroVadConfig, rest.pop("vad"), path=path, where=f"{where}.pauses.vad")
    return build_config(PauseConfig, {**rest, "vad": vad}, path=path, where=f"{where}.pauses")


def make_enhancer(config: EnhanceConfig) -> Enhancer:
    """The enhancer ``config`` names, built (its model loaded) for this machine."""
    from toolkit.enhance import build_enhancer

    return build_enhancer(config.method, config.params)


def check_recognizer(spec: Any, *, path: Path) -> None:
    """Refuse an unknown backend (one not in toolkit.asr.registry) or bad decoding parameters when the experiment
    is loaded."""
    from toolkit.asr.registry import BACKENDS

    if spec.backend not in BACKENDS:
        raise InputError(
            path, f"[recognizers.{spec.name}] backend must be one of {', '.join(BACKENDS)}, not {spec.backend!r}"
        )
    chosen = BACKENDS[spec.backend]
    where = f"recognizers.{spec.name}" if chosen.flat_table else f"recognizers.{spec.name}.decoding"
    build_config(chosen.config, spec.decoding, path=path, where=where)
