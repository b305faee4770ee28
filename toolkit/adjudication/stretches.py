"""Stretches for blind transcription, cut at pauses: where the experiment's VAD hears nobody speak.

The speech regions are Silero's, with the experiment's own VAD parameters (the first VAD stage
of an arm without enhancement; else the toolkit's pinned defaults), on the original audio.
They are read from the experiment's result cache when a run already computed them, else
computed once and put there, so a later run reuses them (no text is read: only where speech is).

Regions closer than :data:`JOIN_PAUSE_S` join into one stretch of at most :data:`MAX_STRETCH_S`
(the transcription convention's turn: up to about 15 s between pauses of about half a second);
a region is never split. Every cut lies in a pause: a pause of at least :data:`LONG_PAUSE_S` is
a stretch of its own (to confirm non-speech, or to transcribe what the VAD missed), the speech
stretches beside it keep :data:`EDGE_S` of it; a shorter pause is cut at its middle (or joins the
stretch beside it at the recording's start and end). The
stretches tile the recording, so nothing is skipped. Without Silero (a light install), the
recording is cut every :data:`FALLBACK_S` seconds and the page says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.audio.vad import LIBRARY_DEFAULTS, SAMPLE_RATE, SileroVadConfig, merge_regions
from toolkit.corpus.manifest import RecordingEntry
from toolkit.pipeline.cache import ResultCache, read_vad_entry, unenhanced_lineage, vad_key, write_vad_entry
from toolkit.pipeline.experiment import Experiment
from toolkit.pipeline.stages import ENHANCE, VAD

MAX_STRETCH_S = 15.0
JOIN_PAUSE_S = 0.5
LONG_PAUSE_S = 2.0
EDGE_S = 0.2
FALLBACK_S = 10.0
SPEECH, PAUSE = "speech", "pause"
CACHE_FOLDER = "cache"


@dataclass(frozen=True)
class Stretch:
    """A stretch of the recording to transcribe: ``speech`` (the VAD hears speech) or ``pause``."""

    start: float
    end: float
    kind: str


@dataclass(frozen=True)
class Stretches:
    """A recording's stretches and where their cuts came from (shown to the listener)."""

    items: list[Stretch]
    source: str  # "vad": Silero regions; "fixed": every FALLBACK_S seconds (no Silero here)


def from_regions(regions: list[tuple[float, float]], duration: float) -> list[Stretch]:
    """Stretches tiling ``0..duration`` with every cut in a pause between speech ``regions``."""
    units = merge_regions(
        sorted((max(0.0, s), min(duration, e)) for s, e in regions if e > s), MAX_STRETCH_S, JOIN_PAUSE_S
    )
    if not units:
        return [Stretch(0.0, round(duration, 3), PAUSE)] if duration > 0 else []
    cuts: list[tuple[float, float, bool]] = []  # per pause: where the speech before ends, after starts, pause kept
    edges = [0.0, *[x for unit in units for x in unit], duration]
    for k in range(0, len(edges), 2):
        lo, hi = edges[k], edges[k + 1]  # a pause (before the first unit, between units, after the last)
        first, last = k == 0, k == len(edges) - 2
        if hi - lo >= LONG_PAUSE_S:
            before = lo if first else min(hi, lo + EDGE_S)
            after = hi if last else max(lo, hi - EDGE_S)
            cuts.append((before, after, True))
        else:
            middle = lo if first else hi if last else (lo + hi) / 2
            cuts.append((middle, middle, False))
    stretches = []
    for k in range(len(units)):
        before_pause, after_pause = cuts[k], cuts[k + 1]
        if before_pause[2] and before_pause[1] > before_pause[0]:
            stretches.append(Stretch(before_pause[0], before_pause[1], PAUSE))
        stretches.append(Stretch(before_pause[1], after_pause[0], SPEECH))
    final_cut = cuts[-1]
    if final_cut[2] and final_cut[1] > final_cut[0]:
        stretches.append(Stretch(final_cut[0], final_cut[1], PAUSE))
    return [Stretch(round(s.start, 3), round(s.end, 3), s.kind) for s in stretches if s.end > s.start]


def fixed(duration: float, length: float = FALLBACK_S) -> list[Stretch]:
    """Cuts every ``length`` seconds (used only where no speech regions can be had)."""
    count = max(1, int(-(-duration // length)))
    return [Stretch(round(k * length, 3), round(min(duration, (k + 1) * length), 3), SPEECH) for k in range(count)]


def vad_config(experiment: Experiment) -> SileroVadConfig:
    """The Silero parameters of the experiment's first VAD stage in an arm without enhancement."""
    for arm in experiment.arms.values():
        vad = arm.config(VAD)
        if vad is not None and arm.component(ENHANCE) is None:
            return vad.silero()
    return LIBRARY_DEFAULTS


def recording_stretches(experiment: Experiment, entry: RecordingEntry) -> Stretches:
    """The stretches of one recording (speech regions from the cache, computed and cached if absent)."""
    config = vad_config(experiment)
    cache = ResultCache(experiment.folder / CACHE_FOLDER)
    key = vad_key(unenhanced_lineage(entry.sha256, SAMPLE_RATE), config)
    cached = read_vad_entry(cache, key)
    if cached is None:
        try:
            from toolkit.audio.vad import silero_speech_regions
            from toolkit.pipeline.measure import measure

            with measure() as spent:
                regions = silero_speech_regions(entry.load_audio(), config)
        except ImportError:  # a light install has no torch or silero-vad
            return Stretches(fixed(entry.duration), "fixed")
        cached = write_vad_entry(cache, key, regions, spent)
    return Stretches(from_regions([(float(s), float(e)) for s, e in cached.regions], entry.duration), "vad")
