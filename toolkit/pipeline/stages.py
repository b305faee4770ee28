"""The stage types an arm can combine, in pipeline order, and how each is configured.

enhance (waveform) -> vad (speech regions, merged into decode units) -> windows (overlapping
windows, inside VAD units when both are on) -> second_model (replace or combine the recognizer)
-> onset_repair (long words that run through a VAD pause cut back to the speech onset, on the
arm's final words, whatever stages made them). Each
stage's parameters are parsed strictly (``toolkit.core.config.build_config``) into a dataclass
whose fields are all written out in the experiment file.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

from toolkit.audio.vad import SileroVadConfig
from toolkit.core.config import build_config, require_non_negative
from toolkit.core.errors import InputError

STAGES = ("enhance", "vad", "windows", "second_model", "onset_repair")


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
    seam: Any
    pauses: Any

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
            from toolkit.pipeline.windows import check_pause_layout

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


def _subtable(table: dict[str, Any], key: str, config_class: type, what: str, *, path: Path, where: str) -> Any:
    """Take the required nested table ``[where.key]`` out of ``table`` and build its configuration."""
    sub = table.pop(key, None)
    if not isinstance(sub, dict):
        raise InputError(path, f"[{where}.{key}] must be a table of {what}")
    return build_config(config_class, sub, path=path, where=f"{where}.{key}")


def parse_stage(stage: str, params: dict[str, Any], *, path: Path, where: str) -> Any:
    """Build a stage's configuration, refusing unknown, missing or ill-typed parameters."""
    if stage == "vad":
        return build_config(VadStageConfig, params, path=path, where=where)
    if stage == "windows":
        from toolkit.pipeline.seam_records import SeamConfig

        table = dict(params)
        seam_config = _subtable(table, "seam", SeamConfig, "seam reconciliation parameters", path=path, where=where)
        pauses = _parse_pauses(table.pop("pauses", None), table.get("placement"), path=path, where=where)
        return build_config(WindowsConfig, {**table, "seam": seam_config, "pauses": pauses}, path=path, where=where)
    if stage == "second_model":
        return build_config(SecondModelConfig, params, path=path, where=where, require_all=False)
    if stage == "enhance":
        return _parse_enhance(params, path=path, where=where)
    if stage == "onset_repair":
        table = dict(params)
        vad_config = _subtable(
            table, "vad", SileroVadConfig, "the Silero parameters of the pause pass", path=path, where=where
        )
        return build_config(OnsetRepairConfig, {**table, "vad": vad_config}, path=path, where=where)
    raise InputError(path, f"[{where}] has unknown stage {stage!r}; stages are {', '.join(STAGES)}")


def _parse_pauses(table: Any, placement: Any, *, path: Path, where: str) -> Any:
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
    from toolkit.audio.vad import SileroVadConfig
    from toolkit.pipeline.windows import PauseConfig

    rest = dict(table)
    vad = build_config(SileroVadConfig, rest.pop("vad"), path=path, where=f"{where}.pauses.vad")
    return build_config(PauseConfig, {**rest, "vad": vad}, path=path, where=f"{where}.pauses")


def stage_identity(config: Any) -> dict[str, Any]:
    """A JSON description of a configured stage, for run records and cache keys."""
    return asdict(config)


def make_enhancer(config: EnhanceConfig) -> Any:
    from toolkit.enhance import build_enhancer

    return build_enhancer(config.method, config.params)


def _parse_enhance(params: dict[str, Any], *, path: Path, where: str) -> EnhanceConfig:
    """``method`` plus a ``params`` table naming every parameter of that enhancer."""
    import dataclasses

    from toolkit.enhance import ENHANCERS

    extra = sorted(set(params) - {"method", "params"})
    if extra:
        raise InputError(path, f"[{where}] has unknown key(s) {', '.join(extra)}; use method and [{where}.params]")
    method = params.get("method")
    if method not in ENHANCERS:
        raise InputError(path, f"[{where}] method must be one of {', '.join(ENHANCERS)}, not {method!r}")
    table = params.get("params")
    if not isinstance(table, dict):
        raise InputError(path, f"[{where}.params] must be a table of every {method} parameter")
    missing = [f.name for f in dataclasses.fields(ENHANCERS[method][1]) if f.name not in table]
    if missing:
        raise InputError(path, f"[{where}.params] must write out every parameter; missing {', '.join(missing)}")
    try:
        ENHANCERS[method][1].from_mapping(table)  # checks types and ranges, loads no model
    except InputError as error:
        raise InputError(path, f"[{where}.params] {error.problem}") from None
    return EnhanceConfig(method, dict(table))


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
