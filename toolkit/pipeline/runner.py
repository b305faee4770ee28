"""Run one arm on one recording: enhance, resample, the signal stages (loudness), segment, decode, map back,
reconcile, combine, repair onsets; each stage is found through its object in the stage registry, never its name.

Every word leaves this module in original recording time: each decoded unit is a Signal
whose composed time map leads back to the original, and a recognizer time that cannot be
mapped (beyond the experiment's ``time_tolerance_s``), or that contradicts the words before it
once mapped, is left untimed and counted. After every stage the words must be a valid stream
(``toolkit.core.wordstream``); a stage that breaks that, or fails in any other way, raises
:class:`StageError` naming itself, so the run can fail that arm alone.
Decoding, VAD and enhancement results are cached by content, so arms that share work
(baseline and +second-model combine, say) decode it once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from toolkit.audio.dither import Dither
from toolkit.audio.signal import Signal, crop, cut, resample
from toolkit.audio.timemap import Lean, TimeMap
from toolkit.audio.vad import SileroVadConfig, merge_regions, silero_device
from toolkit.core.errors import InputError, ToolkitError
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import StreamError, check_stream, drop_contradicting_times
from toolkit.pipeline.cache import ResultCache, dither_identity, read_vad_entry, vad_key, write_vad_entry
from toolkit.pipeline.code_version import code_digest
from toolkit.pipeline.experiment import Arm, Experiment
from toolkit.pipeline.measure import Measurement
from toolkit.pipeline.recognizers import RecognizerPool
from toolkit.pipeline.skipped_speech import inserted, skipped_stretches
from toolkit.pipeline.stage import Speech
from toolkit.pipeline.stages import ENHANCE, SECOND_MODEL, VAD, WINDOWS, WindowsConfig, make_enhancer
from toolkit.pipeline.workers import Workers, WorkNeeded

if TYPE_CHECKING:
    from toolkit.enhance.base import EnhancementResult, Enhancer
    from toolkit.pipeline.stages import EnhanceConfig

SAMPLE_RATE = 16_000
UNIT_KINDS = ("decode", "vad", "enhance")  # the cached units of work, counted computed or reused


class StageError(ToolkitError):
    """A stage of an arm failed on one recording: its invalid word stream or its error, as one line."""

    def __init__(self, stage: str, problem: str) -> None:
        self.stage = stage
        self.problem = problem
        super().__init__(f"stage {stage}: {problem}")


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Turn any failure inside stage ``name`` into a :class:`StageError` (bad input, work a coordinator may
    not start, and Ctrl-C pass through)."""
    try:
        yield
    except (StageError, InputError, WorkNeeded):
        raise
    except StreamError as error:
        raise StageError(name, error.problem) from error
    except Exception as error:
        detail = " ".join(str(error).split()) or "no message"
        raise StageError(name, f"{type(error).__name__}: {detail}") from error


def reuse_counts() -> dict[str, dict[str, int]]:
    """Zeroed computed/reused counts for each kind of unit of work."""
    return {kind: {"computed": 0, "reused": 0} for kind in UNIT_KINDS}


@dataclass
class DecodeUnit:
    """A piece of the prepared signal decoded on its own (the whole file, a VAD unit, a window)."""

    unit_id: str
    signal: Signal
    region: tuple[float, float]
    placement: dict[str, str] | None = None  # a window's edges: in a pause, on the grid, at the recording's edge
    joined: tuple[tuple[float, float], ...] = ()  # a joined VAD stream's units, back to back (else one stretch)

    @property
    def original_span(self) -> tuple[float, float]:
        """The stretch of the original recording this unit's audio comes from."""
        span = self.signal.timemap.origin_span
        if span is None:
            raise ValueError(f"decode unit {self.unit_id} is empty")
        return span


@dataclass
class ArmOutput:
    """Everything an arm produced for one recording, in original time."""

    words: list[Word]
    vad_segments: Sequence[tuple[float | None, float | None]] | None = None  # None: a time that maps nowhere
    seams: list[dict[str, Any]] = field(default_factory=list)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    units: list[dict[str, Any]] = field(default_factory=list)
    enhancement: dict[str, Any] | None = None
    segments: list[dict[str, Any]] = field(default_factory=list)
    compute: Measurement = field(default_factory=Measurement)
    worker_cpu_s: float = 0.0
    reuse: dict[str, dict[str, int]] = field(default_factory=reuse_counts)
    recognizer_notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    unmapped_times: int = 0  # recognizer times that map nowhere, or contradict the words before them
    # Per recognizer, the original-time spans it decoded; partly_decoded when one decoded less than its units.
    decoded: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    partly_decoded: bool = False
    retimed_onsets: int = 0  # words whose start the onset repair moved later (toolkit/pipeline/onset_repair.py)
    # What each signal stage (StageBase.prepare) did to the recording, by stage name (a loudness gain).
    prepared: dict[str, dict[str, object]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Each unit of work by its cache key, with its kind and measured cost: arms that share a decode,
    # a VAD pass or an enhancement name the same key, so a run's cost counts it once (ablate plan).
    work: dict[str, dict[str, Any]] = field(default_factory=dict)

    def count(self, kind: str, key: str, measurement: dict[str, float], computed: bool) -> Measurement:
        """Charge one unit of work at its measured cost (now or when cached) and count it computed or reused.

        ``worker_cpu_s`` adds up the CPU time of units computed now, spent in worker processes
        and so not in this process's CPU time.
        """
        spent = Measurement(**measurement)
        self.work[key] = {"kind": kind, "wall_s": spent.wall_s, "cpu_s": spent.cpu_s}
        self.compute.add(spent)
        if computed:
            self.worker_cpu_s += spent.cpu_s
        self.reuse[kind]["computed" if computed else "reused"] += 1
        return spent

    def stored(
        self, unit_key: str, code: str, arm: str, recording: str, duration: float, this_run: dict[str, float]
    ) -> dict[str, Any]:
        """The output as its run folder stores it (toolkit.runs.arm_output_file), with the unit key and code
        that made it and what this run spent on it."""
        rtf = round(self.compute.wall_s / duration, 4) if duration > 0 else None
        fields = asdict(self)
        if not self.prepared:  # an arm without a signal stage stores what it stored before there were any
            del fields["prepared"]
        return {
            "unit_key": unit_key,
            "code": code,
            "arm": arm,
            "recording": recording,
            "duration": duration,
            "this_run": this_run,
            **fields,
            "compute": self.compute.to_json(),  # rounded
            "real_time_factor": rtf,
        }


def _enhancer_service(config: EnhanceConfig) -> Callable[[Signal], EnhancementResult]:
    """In a worker: build the enhancer (loading its model); each request enhances one signal."""
    return make_enhancer(config).run


def _vad_service(config: Any) -> Any:
    """In a worker: load Silero now; each request is a signal, answered with its speech regions."""
    from toolkit.audio.vad import load_silero, silero_device, silero_speech_regions

    load_silero(silero_device(config))
    return lambda signal: silero_speech_regions(signal, config)


class ArmRunner:
    """Runs arms of one experiment, sharing recognizers and the result cache."""

    def __init__(
        self,
        experiment: Experiment,
        cache: ResultCache,
        recognizers: RecognizerPool,
        arms: list[Arm],
        dither: Dither | None = None,
    ) -> None:
        self.experiment = experiment
        self.dither = dither
        self.cache = cache
        self.recognizers = recognizers
        self.arms = arms
        # Enhancement and VAD run in their own workers too, so their memory is theirs alone.
        self.stages = Workers()
        # Built once, before any decoding, so a model that cannot load (or a device this machine
        # lacks) stops the run up front.
        self._enhancers: dict[str, Enhancer] = {}
        for component in (c for arm in arms for c in arm.components if c.stage is ENHANCE):
            try:
                self._enhancers[component.name] = make_enhancer(ENHANCE.own(component.config))
            except InputError as error:
                raise InputError(experiment.path, f"[components.{component.name}] {error.problem}") from None

    # --- the arm ------------------------------------------------------------------------
    def run(self, arm: Arm, audio_sha256: str, original: Signal) -> ArmOutput:
        """Every stage of ``arm`` on one recording; the words are checked after each stage (StageError)."""
        output = ArmOutput(words=[])
        duration = original.duration
        source: dict[str, Any] = {"audio_sha256": audio_sha256}
        if self.dither is not None:
            original = self.dither.apply(original, audio_sha256)
            source["dither"] = dither_identity(self.dither)
        with stage(ENHANCE.name):
            prepared, lineage = self._enhance(arm, source, original, output)
            prepared = resample(prepared, SAMPLE_RATE)
        lineage = {**lineage, "sample_rate": SAMPLE_RATE}
        prepared = self._prepare(arm, prepared, lineage, output)
        with stage(VAD.name if arm.component(VAD) else "segment"):
            groups = self._segment(arm, prepared, lineage, output)

        names = self.recognizers_for(arm)
        streams = [self._recognize(arm, name, groups, lineage, output, duration) for name in names]

        if len(streams) == 2:
            from toolkit.pipeline.combine import combine_streams

            config = arm.config(SECOND_MODEL)
            collar = None if config is None else config.pair_collar_s
            if collar is None:  # the experiment loader refuses a combine without it
                raise ValueError('mode = "combine" needs pair_collar_s')
            with stage(f"{SECOND_MODEL.name} combine"):
                output.words, output.disagreements = combine_streams(
                    streams[0], streams[1], labels=(names[0], names[1]), pair_collar_s=collar
                )
                check_stream(output.words, duration, "combined words")
            output.notes.append(
                f"combined {names[0]} with {names[1]}: words paired within {collar} s; each "
                "disagreement run goes to the side with the higher mean word confidence (ties keep the first), "
                "grown where needed so the words stay in time order"
            )
        else:
            output.words = streams[0]
        if output.partly_decoded:  # a recognizer dropped audio itself (batched: its VAD chunks only)
            output.vad_segments = dropped_audio_kept(output, duration)
        for component in arm.components:  # the word stages, on the arm's final words
            with stage(component.stage.name):
                speech = self._speech(component.name, prepared, lineage, output)
                done = component.stage.finish(component.config, output.words, speech)
                if done is not None:
                    output.words = done.words
                    output.retimed_onsets += done.retimed_onsets
                    check_stream(output.words, duration, f"words after {component.stage.name}")
        return output

    def stage_devices(self) -> dict[str, dict[str, Any]]:
        """Where each VAD pass and enhancer of the run's arms runs on this machine (for the run record);
        a "cuda" this machine cannot use is refused here, naming the component."""
        from toolkit.core.devices import device_record

        devices: dict[str, dict[str, Any]] = {}
        for arm in self.arms:
            for component in arm.components:
                for silero in component.stage.silero_passes(component.config):
                    try:
                        devices[component.name] = device_record(silero_device(silero))
                    except ValueError as error:
                        raise InputError(self.experiment.path, f"[components.{component.name}] {error}") from None
                if component.stage is ENHANCE:
                    devices[component.name] = self._enhancers[component.name].identity()["runs_on"]
        return devices

    def started_wall_s(self) -> float:
        """Wall time spent so far starting this runner's model services (recognizers, enhancers, VAD)."""
        return self.recognizers.started_wall_s() + self.stages.started_wall_s()

    def cache_only(self, only: bool) -> None:
        """With ``only``, a unit whose result is not cached raises WorkNeeded instead of starting a model."""
        self.recognizers.may_start = self.stages.may_start = not only

    def recognizers_for(self, arm: Arm) -> list[str]:
        """The recognizers ``arm`` decodes with, in combine order (none for an imported arm)."""
        if arm.imported is not None:
            return []
        config = arm.config(SECOND_MODEL)
        if config is None:
            return [self.experiment.primary]
        return [config.recognizer] if config.mode == "replace" else [self.experiment.primary, config.recognizer]

    # --- stages -------------------------------------------------------------------------
    def _enhance(
        self, arm: Arm, source: dict[str, Any], original: Signal, output: ArmOutput
    ) -> tuple[Signal, dict[str, Any]]:
        """The arm's enhanced signal (cached) and its lineage: ``source`` (the audio, and its dither if any)
        and the enhancer."""
        component = arm.component(ENHANCE)
        lineage: dict[str, Any] = {**source, ENHANCE.name: None}
        if component is None:
            return original, lineage
        enhancer = self._enhancers[component.name]
        identity = enhancer.identity()
        key = self.cache.key_for({"kind": "enhance", **source, "enhancer": identity, "code": code_digest(ENHANCE.name)})
        cached, samples = self.cache.get(key), self.cache.get_array(key)
        if samples is None:  # an entry is complete only with its array
            cached = None
        computed = cached is None
        if cached is None or samples is None:
            worker = self.stages.get(f"enhance {component.name}", _enhancer_service, (ENHANCE.own(component.config),))
            result, spent = worker.call(original)
            samples = result.signal.samples
            cached = {
                "sample_rate": result.signal.sample_rate,
                "timemap": result.signal.timemap.to_json(),
                "meta": result.meta(),
                "measurement": spent.to_json(),
            }
            self.cache.put_array(key, samples)
            self.cache.put(key, cached)
        output.count("enhance", key, cached["measurement"], computed)
        output.enhancement = {**identity, **cached["meta"], "measurement": cached["measurement"]}
        enhanced = Signal(samples, cached["sample_rate"], TimeMap.from_json(cached["timemap"]))
        lineage[ENHANCE.name] = identity
        return enhanced, lineage

    def _prepare(self, arm: Arm, prepared: Signal, lineage: dict[str, Any], output: ArmOutput) -> Signal:
        """The arm's signal stages (those with a ``prepare``), in pipeline order, on the 16 kHz signal: each one's
        identity and code join the lineage (so every later cache key holds them: none is keyed without one) and
        its record the arm's output."""
        for component in arm.components:
            name = component.stage.name
            with stage(name):
                done = component.stage.prepare(component.config, prepared)
            if done is not None:
                prepared = done.signal
                lineage[name] = {"config": component.stage.identity(component.config), "code": code_digest(name)}
                output.prepared[name] = done.record
        return prepared

    def _segment(
        self, arm: Arm, prepared: Signal, lineage: dict[str, Any], output: ArmOutput
    ) -> list[list[DecodeUnit]]:
        """Units to decode, grouped: units in one group are overlapping windows to reconcile."""
        vad, vad_config = arm.component(VAD), arm.config(VAD)
        windows, windows_config = arm.component(WINDOWS), arm.config(WINDOWS)
        if vad is None or vad_config is None:
            streams = [("full", [(0.0, prepared.duration)], False)]
        else:
            speech = self._vad_regions(vad.name, vad_config.silero(), prepared, lineage, output)
            output.vad_segments = self._original_spans(prepared, speech)
            # Cut & merge: each unit is cropped whole (pauses between its regions kept), so its time map is
            # the prepared signal's, offset by the unit's start; joined, the units go back to back in one stream.
            regions = merge_regions(speech, vad_config.merge_max_s, vad_config.merge_max_gap_s)
            if vad_config.join_units and regions:
                streams = [("vadjoined", regions, True)]
            else:
                streams = [(f"vad{i:03d}", [unit], False) for i, unit in enumerate(regions)]
        groups = []
        for prefix, pieces, joined in streams:
            kept = tuple(pieces) if joined else ()
            if windows is None or windows_config is None:
                groups.append([DecodeUnit(prefix, cut(prepared, pieces), (pieces[0][0], pieces[-1][1]), joined=kept)])
                continue
            # A unit's windows are cropped from (and keyed by their span of) the prepared signal, a joined
            # stream's from the stream (only that one is cut out whole first).
            source, offset = (cut(prepared, pieces), 0.0) if joined else (prepared, pieces[0][0])
            groups.append(
                [
                    DecodeUnit(
                        f"{prefix}.win{i:03d}",
                        crop(source, offset + a, offset + b),
                        (offset + a, offset + b),
                        placement,
                        kept,
                    )
                    for i, (a, b, placement) in enumerate(
                        self._windows(windows.name, windows_config, prepared, pieces, lineage, output)
                    )
                ]
            )
        return groups

    def _windows(
        self,
        name: str,
        config: WindowsConfig,
        prepared: Signal,
        pieces: list[tuple[float, float]],
        lineage: dict[str, Any],
        output: ArmOutput,
    ) -> list[tuple[float, float, dict[str, str] | None]]:
        """Window spans over the stream of ``pieces`` of ``prepared`` put back to back (one piece: a unit or the
        whole file), in the stream's seconds: on the grid, or with edges in the pauses of a VAD pass."""
        duration = sum(end - start for start, end in pieces)
        if config.placement == "grid":
            from toolkit.pipeline.windows import plan_windows

            return [(a, b, None) for a, b in plan_windows(duration, config.length_s, config.overlap_s, config.origin_s)]
        from toolkit.pipeline.windows import plan_pause_windows

        if config.pauses is None:  # WindowsConfig refuses vad_pauses without its pauses table
            raise ValueError('placement = "vad_pauses" needs its pauses table')
        regions = self._vad_regions(f"{name.split('@')[0]}.pauses", config.pauses.vad, prepared, lineage, output)
        placed = plan_pause_windows(
            duration, config.length_s, config.overlap_s, config.origin_s, in_stream(regions, pieces), config.pauses
        )
        return [(w.start, w.end, w.to_json()) for w in placed]

    def _speech(self, name: str, prepared: Signal, lineage: dict[str, Any], output: ArmOutput) -> Speech:
        """How component ``name`` asks for the speech of a Silero pass on ``prepared``: its regions in original
        time, cached and counted as every VAD pass is (a region that maps nowhere is left out)."""

        def speech(silero: SileroVadConfig) -> list[tuple[float, float]]:
            regions = self._vad_regions(name, silero, prepared, lineage, output)
            spans = self._original_spans(prepared, regions)
            return [(a, b) for a, b in spans if a is not None and b is not None and b > a]

        return speech

    def _original_spans(
        self, prepared: Signal, spans: list[tuple[float, float]]
    ) -> list[tuple[float | None, float | None]]:
        """``spans`` of ``prepared`` in original recording time (None where a time maps nowhere)."""
        tm, tol = prepared.timemap, self.experiment.time_tolerance_s
        return [(tm(a, tolerance=tol), tm(b, tolerance=tol)) for a, b in spans]

    def _vad_regions(
        self, name: str, silero: SileroVadConfig, prepared: Signal, lineage: dict[str, Any], output: ArmOutput
    ) -> list[tuple[float, float]]:
        """Silero's speech regions of ``prepared`` (cached on the Silero parameters alone, so a merge
        setting or the windows' pause pass with the same parameters shares them)."""
        key = vad_key(lineage, silero)
        entry = read_vad_entry(self.cache, key)
        computed = entry is None
        if entry is None:
            worker = self.stages.get(f"vad {name}", _vad_service, (silero,))
            regions, spent = worker.call(prepared)
            entry = write_vad_entry(self.cache, key, regions, spent)
        output.count("vad", key, entry.measurement, computed)
        return list(entry.regions)

    def _recognize(
        self,
        arm: Arm,
        name: str,
        groups: list[list[DecodeUnit]],
        lineage: dict[str, Any],
        output: ArmOutput,
        duration: float,
    ) -> list[Word]:
        """Each group decoded, its windows reconciled, the groups joined in order: checked at each step."""
        words: list[Word] = []
        for group in groups:
            decoded = []
            for unit in group:
                with stage(f"decode ({name}, unit {unit.unit_id})"):
                    unit_words = self._decode(name, unit, lineage, output)
                    check_stream(unit_words, duration, "decoded words")
                decoded.append(unit_words)
            merged = decoded[0]
            if len(group) > 1:
                from toolkit.pipeline.seam_records import WindowResult
                from toolkit.pipeline.seams import reconcile

                windows = arm.config(WINDOWS)
                if windows is None:  # only the windows stage puts more than one unit in a group
                    raise ValueError(f"decode units of {name} overlap without a windows stage")
                with stage(f"{WINDOWS.name} (seams of {name})"):
                    results = [
                        WindowResult(window_id=unit.unit_id, start=span[0], end=span[1], words=unit_words)
                        for unit, unit_words in zip(group, decoded)
                        for span in [unit.original_span]
                    ]
                    merged, reports = reconcile(results, windows.seam)
                    check_stream(merged, duration, "reconciled words")
                output.seams.extend({"recognizer": name, **report.to_json()} for report in reports)
            vad = arm.config(VAD)
            if len(group) == 1 and group[0].joined and vad is not None and vad.redecode_skipped_s > 0:
                with stage(f"{VAD.name} (skipped speech of {name})"):
                    merged = self._redecode_skipped(name, group[0], merged, vad.redecode_skipped_s, lineage, output)
                    check_stream(merged, duration, "words with skipped speech decoded again")
            words.extend(merged)
        if len(groups) > 1:
            with stage(f"{VAD.name} (cut & merge join of {name})"):
                check_stream(words, duration, "joined words")
        return words

    def _redecode_skipped(
        self, name: str, unit: DecodeUnit, words: list[Word], min_s: float, lineage: dict[str, Any], output: ArmOutput
    ) -> list[Word]:
        """The speech of a joined stream that lies in a gap between its decoded words, where a gap holds at least
        ``min_s`` of it, decoded again on its own and its words put in the gap (toolkit/pipeline/skipped_speech.py).
        """
        streamed = in_stream(list(unit.joined), list(unit.joined))
        pieces = [unit.signal.timemap.span(a, b) or (math.nan, math.nan) for a, b in streamed]
        stretches = skipped_stretches(pieces, words, min_s)

        def inside(spans: Sequence[tuple[float, float]], clip: tuple[int, float, float]) -> tuple[float, float]:
            """The clip's part of piece ``clip[0]`` in ``spans``' seconds (a piece maps linearly)."""
            index, a, b = clip
            (o0, o1), (s0, s1) = pieces[index], spans[index]
            scale = (s1 - s0) / (o1 - o0) if o1 > o0 else 0.0
            return s0 + (a - o0) * scale, s0 + (b - o0) * scale

        for k, clips in enumerate(stretches):
            piece = DecodeUnit(
                f"{unit.unit_id}.skipped{k:03d}",
                cut(unit.signal, [inside(streamed, c) for c in clips]),
                (inside(unit.joined, clips[0])[0], inside(unit.joined, clips[-1])[1]),
                joined=tuple(inside(unit.joined, c) for c in clips),
            )
            words = inserted(words, self._decode(name, piece, lineage, output), clips[0][1], clips[-1][2])
        if stretches:
            seconds = sum(b - a for clips in stretches for _, a, b in clips)
            output.recognizer_notes[name]["skipped_speech_redecoded"] = len(stretches)
            output.notes.append(
                f"{name}: {len(stretches)} stretch(es) of VAD speech ({seconds:.1f} s) between two decoded words of "
                "the joined stream were decoded again on their own"
            )
        return words

    def _decode(self, name: str, unit: DecodeUnit, lineage: dict[str, Any], output: ArmOutput) -> list[Word]:
        identity = self.recognizers.identity(name)
        region = [round(unit.region[0], 6), round(unit.region[1], 6)]
        joined = {"joined": [[round(a, 6), round(b, 6)] for a, b in unit.joined]} if unit.joined else {}
        # The CPU code CTranslate2 runs is part of the key: a cache shared by two machines must not
        # hand one machine's words to the other.
        key = self.cache.key_for(
            {
                "kind": "decode",
                "lineage": lineage,
                "region": region,
                **joined,
                "recognizer": identity,
                "runtime": self.recognizers.runtime(name),
                "code": code_digest("decode"),
            }
        )
        cached = self.cache.get(key)
        # Entries from before segments and decoded spans were recorded are decoded again.
        if cached is not None and ("segments" not in cached or "decoded" not in cached):
            cached = None
        computed = cached is None
        if cached is None:
            decoded = self.recognizers.transcribe(name, unit.signal)
            cached = {
                "words": [asdict(w) for w in decoded.transcript.words],
                "segments": [s.to_json() for s in decoded.transcript.segments],
                "measurement": decoded.measurement.to_json(),
                "notes": decoded.notes,
                "decoded": decoded.transcript.decoded,
            }
            self.cache.put(key, cached)
        spent = output.count("decode", key, cached["measurement"], computed)
        notes = cached.get("notes", {})
        counts = {k: v for k, v in notes.items() if isinstance(v, int) and not isinstance(v, bool)}
        so_far = output.recognizer_notes.get(name, {})
        output.recognizer_notes[name] = {**notes, **{k: so_far.get(k, 0) + v for k, v in counts.items()}}
        start, end = unit.original_span
        output.units.append(
            {
                "unit": unit.unit_id,
                "recognizer": name,
                "original_start": start,
                "original_end": end,
                "cached": not computed,
                **spent.to_json(),
                **({"placement": unit.placement} if unit.placement else {}),
                **counts,
            }
        )
        output.segments.extend(self._segments_to_original(name, unit, cached["segments"]))
        partly = cached["decoded"] is not None
        spans = self._original_spans(unit.signal, cached["decoded"]) if partly else [unit.original_span]
        output.decoded.setdefault(name, []).extend((a, b) for a, b in spans if a is not None and b is not None)
        output.partly_decoded |= partly
        return self._to_original(unit, [Word(**w) for w in cached["words"]], output)

    def _segments_to_original(
        self, name: str, unit: DecodeUnit, segments: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Segment records in original time (``None`` where unmappable), with their decoded seconds."""
        tm, tol, length = unit.signal.timemap, self.experiment.time_tolerance_s, unit.signal.duration

        def original(local: float) -> float | None:
            mapped = tm(local, tolerance=tol)
            return None if mapped is None else round(mapped, 4)

        records = []
        for segment in segments:
            start = min(max(segment["start"], 0.0), length)
            end = min(max(segment["end"], start), length)
            records.append(
                {
                    **segment,
                    "recognizer": name,
                    "segment_id": f"{unit.unit_id}/{segment['segment_id']}",
                    "start": original(start),
                    "end": original(end),
                    "seconds": round(end - start, 3),
                }
            )
        return records

    def _to_original(self, unit: DecodeUnit, local: list[Word], output: ArmOutput) -> list[Word]:
        mapped, unmapped = to_original(
            unit.unit_id, unit.signal.timemap, local, self.experiment.time_tolerance_s, joined=bool(unit.joined)
        )
        output.unmapped_times += unmapped
        return mapped


def in_stream(regions: list[tuple[float, float]], pieces: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """``regions`` of the prepared signal in the seconds of the stream that puts ``pieces`` of it back to back:
    each cut to the pieces it overlaps (what lies between pieces is not in the stream)."""
    found, offset = [], 0.0
    for start, end in pieces:
        found += [
            (offset + max(a, start) - start, offset + min(b, end) - start) for a, b in regions if b > start and a < end
        ]
        offset += end - start
    return found


def dropped_audio_kept(output: ArmOutput, duration: float) -> list[tuple[float, float]]:
    """What audio reached a recognizer, in original time: the VAD stage's regions (or everything), cut to
    what the recognizers decoded (their union, when two are combined). Whatever drops audio before the
    recognizer counts as VAD for the speech-recall gate."""
    from toolkit.scorer.metrics.intervals import intersect, merge

    stage = (
        merge([(a, b) for a, b in output.vad_segments if a is not None and b is not None])
        if (output.vad_segments is not None)
        else merge([(0.0, duration)])
    )
    decoded = merge([span for spans in output.decoded.values() for span in spans])
    return [(round(float(a), 4), round(float(b), 4)) for a, b in intersect(stage, decoded)]


def segment_edges(words: list[Word]) -> list[Lean]:
    """Where each word's times slip, by its place in its recognizer segment: Whisper starts a segment's first word
    early and ends its last word late, into whatever lies beside it. In a joined VAD stream what lies beside it
    is the next piece, so a first word across a join belongs to the piece after it ("later"), a last word to the
    one before ("earlier"); a one-word segment, or a word inside one, to the piece nearest its midpoint (None)."""
    ids = [word.segment_id for word in words]
    leans: list[Lean] = []
    for k, segment in enumerate(ids):
        opens = k == 0 or ids[k - 1] != segment
        closes = k == len(ids) - 1 or ids[k + 1] != segment
        leans.append("later" if opens and not closes else "earlier" if closes and not opens else None)
    return leans


def to_original(
    unit_id: str, timemap: TimeMap, local: list[Word], tolerance: float, joined: bool = False
) -> tuple[list[Word], int]:
    """A decoded unit's words in original time, segment ids prefixed with ``unit_id``, and how many lost
    their times: those that map nowhere (beyond ``tolerance``), and those whose mapped times contradict
    the words before them (a map can squeeze times together at a piece's edge). A ``joined`` unit's word
    is mapped whole through one run of pieces (``TimeMap.span``), never across the audio dropped between two
    pieces: the run nearest its midpoint, or for a segment's first or last word across a join, the run its
    segment lies in (``segment_edges``)."""
    mapped, unmapped = [], 0
    for word, lean in zip(local, segment_edges(local)):
        if joined and word.start is not None and word.end is not None:
            start, end = timemap.span(word.start, word.end, lean) or (None, None)
        else:
            start, end = timemap(word.start, tolerance=tolerance), timemap(word.end, tolerance=tolerance)
        if start is None or end is None:
            unmapped += word.start is not None
            start = end = None
        segment = f"{unit_id}/{word.segment_id}" if word.segment_id else unit_id
        mapped.append(Word(word.text, start, end, word.confidence, segment))
    ordered, contradicting = drop_contradicting_times(mapped)
    return ordered, unmapped + contradicting
