"""WhisperX-style batched decoding: VAD speech chunks decoded in batches, with real word times.

WhisperX's own pipeline (``whisperx.load_model(...).transcribe``) returns one text per VAD
chunk timed only by the chunk's edges: measured on LapsBM clips, five sentences over 28 s came
back as a single segment (1.26-29.21 s) with no word times, and word times then exist only via
a wav2vec2 aligner, which is not reachable offline. So this backend keeps WhisperX's VAD stage
(its bundled pyannote segmentation model, or Silero from the ``silero-vad`` wheel, merged into
chunks of at most ``chunk_size_s`` by WhisperX's cut & merge) and decodes those chunks with
faster-whisper's ``BatchedInferencePipeline`` (``clip_timestamps``), whose cross-attention word
timestamps are the recognizer's own. A wav2vec2 aligner is tried only when configured; if it
cannot be loaded or run, ``notes`` says so and the recognizer's times are kept. Times are never
interpolated: a word the aligner cannot time keeps its recognizer time. Batched decoding has
no timestamps and can end a chunk's text at a long pause; ``tail_redecode_gap_s`` decodes such
a chunk's remaining speech regions again in a second batched pass.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from toolkit.asr.faster_whisper_backend import (
    DecodingConfig,
    ctranslate2_runtime,
    load_whisper,
    recognizer_identity,
    segment_words,
    to_16k,
    true_text_decoder,
)
from toolkit.asr.models import ModelInfo
from toolkit.asr.segments import NO_FALLBACK, Transcript, describe
from toolkit.asr.work_counts import counted
from toolkit.audio.signal import Signal
from toolkit.audio.vad import LIBRARY_DEFAULTS, SileroVadConfig, merge_regions, silero_device, silero_speech_regions
from toolkit.core.config import build_config
from toolkit.core.devices import resolve
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import drop_contradicting_times

DECODER = "faster-whisper BatchedInferencePipeline on whisperx VAD chunks"


@dataclass(frozen=True)
class WhisperXConfig(DecodingConfig):
    """Decoding plus the batched pipeline's VAD, batch size and optional aligner.

    Batched decoding has no temperature fallback and no conditioning on previous text (the
    library fixes both), so those fields must say so. ``silero`` is used when ``vad_method``
    is ``silero``; ``aligner`` of ``""`` means none, ``"default"`` whisperx's pt model;
    ``tail_redecode_gap_s`` of 0 turns the tail re-decode off (``unfinished_tails``).
    """

    temperature: tuple[float, ...] = (0.0,)
    condition_on_previous_text: bool = False
    without_timestamps: bool = True
    max_initial_timestamp: float = 0.0
    batch_size: int = 4
    vad_method: Literal["pyannote", "silero"] = "pyannote"
    chunk_size_s: float = 30.0
    pyannote_onset: float = 0.5
    pyannote_offset: float = 0.363
    silero: SileroVadConfig = LIBRARY_DEFAULTS
    aligner: str = ""
    tail_redecode_gap_s: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.silero, dict):
            try:
                object.__setattr__(
                    self, "silero", build_config(SileroVadConfig, self.silero, path="decoding", where="silero")
                )
            except InputError as error:
                raise ValueError(error.problem) from None
        if len(self.temperature) != 1:
            raise ValueError("batched decoding uses a single temperature (no fallback); give one value")
        if self.condition_on_previous_text:
            raise ValueError("batched decoding cannot condition on previous text; set it false")
        fixed = (
            self.hallucination_silence_threshold,
            self.max_initial_timestamp,
            self.prompt_reset_on_temperature,
            self.min_tail_s,
        )
        if fixed != (0.0, 0.0, 0.5, 0.0):
            raise ValueError(
                "batched decoding fixes hallucination_silence_threshold 0, max_initial_timestamp 0, "
                "prompt_reset_on_temperature 0.5 and min_tail_s 0 (one window per chunk: no tail window)"
            )
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if not 0.0 < self.chunk_size_s <= 30.0:
            raise ValueError("chunk_size_s must lie in (0, 30] seconds (Whisper's window)")
        if not 0.0 < self.pyannote_offset <= self.pyannote_onset < 1.0:
            raise ValueError("pyannote thresholds need 0 < pyannote_offset <= pyannote_onset < 1")
        if self.tail_redecode_gap_s < 0.0:
            raise ValueError("tail_redecode_gap_s must be at least 0 (0 turns the re-decode off)")
        if self.silero.max_speech_duration_s > self.chunk_size_s:
            raise ValueError("silero.max_speech_duration_s must not exceed chunk_size_s")


@dataclass(frozen=True)
class Chunk:
    """One decoded span and the VAD speech regions it was merged from (seconds)."""

    start: float
    end: float
    regions: tuple[tuple[float, float], ...]


def unfinished_tails(chunks: list[Chunk], words: list[Word], gap_s: float) -> list[tuple[float, float]]:
    """Spans to decode again: in a chunk with words, its regions starting over ``gap_s`` after its last word.

    Batched decoding has no timestamps to carry it over a long pause, so a chunk's text can
    end at the first one (an early end-of-text); the speech after it then has no words. A
    chunk whose words stop more than ``gap_s`` before one of its regions starts gets a new
    span from that region's start to the chunk's end. A chunk with no words is not redone:
    its span would be the same audio again.
    """
    tails = []
    for chunk in chunks:
        inside = [word.span[1] for word in words if word.timed and chunk.start <= word.span[0] < chunk.end]
        if not inside:
            continue
        last = max(inside)
        later = [start for start, _ in chunk.regions if start > last + gap_s]
        if later:
            tails.append((min(later), chunk.end))
    return tails


class WhisperXRecognizer:
    """Batched decoding of VAD chunks (pyannote or Silero) with recognizer word times."""

    backend = "whisperx"

    def __init__(self, model: ModelInfo, config: WhisperXConfig) -> None:
        self.model = model
        self.config = config
        self._pipeline: Any = None
        self._vad: Any = None
        self._aligner: tuple[Any, Any] | None = None
        self.notes: dict[str, Any] = {
            "decoder": DECODER,
            "word_times": "recognizer",
            "aligner": "not configured" if not config.aligner else "not loaded yet",
            "temperature_fallback": f"none: batched decoding decodes once at temperature {config.temperature[0]}",
        }

    def speech_chunks(self, signal: Signal) -> list[tuple[float, float]]:
        """VAD regions merged as WhisperX merges them, chunks of at most ``chunk_size_s``, in ``signal``'s seconds."""
        return [(chunk.start, chunk.end) for chunk in self._chunks(signal)]

    def _chunks(self, signal: Signal) -> list[Chunk]:
        """The merged chunks with the VAD regions each one holds.

        Silero's regions are merged by ``merge_regions`` with no pause limit, which gives exactly
        ``whisperx.vads.Vad.merge_chunks``'s chunks (tests/test_vad_merge.py) without importing
        ``whisperx.vads``: that package imports pyannote.audio, about 370 MB of resident memory and
        5 s that a Silero run never uses.
        """
        audio = to_16k(signal)
        if len(audio.samples) == 0:
            return []
        config = self.config
        chunks: list[dict[str, Any]]
        if config.vad_method == "silero":
            regions = silero_speech_regions(audio, config.silero)
            spans = merge_regions(regions, config.chunk_size_s, config.chunk_size_s)
            chunks = [
                {"start": a, "end": b, "segments": [r for r in regions if a <= r[0] and r[1] <= b]} for a, b in spans
            ]
        else:
            from whisperx.vads import Pyannote

            self._load_vad()
            scores = self._vad({"waveform": Pyannote.preprocess_audio(audio.samples), "sample_rate": audio.sample_rate})
            chunks = Pyannote.merge_chunks(
                scores, config.chunk_size_s, onset=config.pyannote_onset, offset=config.pyannote_offset
            )
        return [
            Chunk(
                float(c["start"]),
                min(float(c["end"]), audio.duration),
                tuple((float(a), float(b)) for a, b in c["segments"]),
            )
            for c in chunks
            if c["end"] > c["start"]
        ]

    def load(self) -> None:
        """Load the weights and the VAD model now (decoding would otherwise load them on first use).

        With pyannote's VAD, importing whisperx's VAD helpers takes about 5 s; done here, it is counted
        with the model load, not in the first recording's decode time.
        """
        self._load_vad()
        if self._pipeline is None:
            from faster_whisper import BatchedInferencePipeline

            self._pipeline = BatchedInferencePipeline(load_whisper(self.model, self.config))

    def _load_vad(self) -> None:
        if self.config.vad_method == "silero":
            from toolkit.audio.vad import load_silero

            load_silero()
        elif self._vad is None:
            import torch
            from whisperx.vads import Pyannote

            self._vad = Pyannote(torch.device(self._torch_device()), vad_onset=self.config.pyannote_onset)

    def _torch_device(self) -> str:
        """Where pyannote's VAD and the aligner run: the recognizer's device as torch sees this machine."""
        return resolve(self.config.device, self.config.device_index, "torch")

    def transcribe(self, signal: Signal) -> Transcript:
        """Words with times in ``signal``'s own seconds; segment ids number the decoded chunks.

        Segments carry the decoder's figures; their outcome is always "no fallback (batched)".
        """
        audio = to_16k(signal)
        chunks = self._chunks(audio)
        if not chunks:
            return Transcript([], [], decoded=[])
        self.load()
        true_text = true_text_decoder(self._pipeline.model)
        with counted(self._pipeline.model) as work:
            segments = self._decode(audio, [(c.start, c.end) for c in chunks])
            if self.config.tail_redecode_gap_s > 0.0:
                words, _ = segment_words(segments, audio.duration, true_text)
                tails = unfinished_tails(chunks, words, self.config.tail_redecode_gap_s)
                self.notes["tails_redecoded"] = len(tails)
                if tails:
                    segments = sorted(segments + self._decode(audio, tails), key=lambda s: (s.start, s.end))
        words, counts = segment_words(segments, audio.duration, true_text)
        if self.config.aligner:
            words, counts["contradicting_aligner_times_dropped"] = drop_contradicting_times(
                self._align(words, segments, audio)
            )
        self.notes.update(counts, **asdict(work))
        decoded = [(chunk.start, chunk.end) for chunk in chunks]
        return Transcript(words, describe(segments, lambda _segment: NO_FALLBACK), decoded)

    def _decode(self, audio: Signal, spans: list[tuple[float, float]]) -> list[Any]:
        """Segments of one batched pass over ``spans`` (seconds of ``audio``), the pipeline loaded."""
        segments, _ = self._pipeline.transcribe(
            audio.samples,
            **self.config.transcribe_kwargs(),
            batch_size=self.config.batch_size,
            clip_timestamps=[{"start": a, "end": b} for a, b in spans],
        )
        return list(segments)

    def _load_aligner(self) -> tuple[Any, Any] | None:
        if self._aligner is None and self.notes["aligner"] == "not loaded yet":
            import whisperx

            name = None if self.config.aligner == "default" else self.config.aligner
            try:
                self._aligner = whisperx.load_align_model(
                    language_code="pt", device=self._torch_device(), model_name=name
                )
                self.notes["aligner"] = f"loaded {self.config.aligner}"
            except Exception as error:  # offline hub, missing weights: many unrelated types
                self.notes["aligner"] = f"unavailable ({type(error).__name__}: {error}); recognizer word times kept"
        return self._aligner

    def _align(self, words: list[Word], segments: list[Any], audio: Signal) -> list[Word]:
        """Replace recognizer times by aligner times word for word; keep recognizer times otherwise."""
        loaded = self._load_aligner()
        if loaded is None:
            return words
        import whisperx

        transcript = [
            {"start": s.start, "end": s.end, "text": " ".join(w.word.strip() for w in s.words or [])} for s in segments
        ]
        try:
            result = whisperx.align(
                transcript, loaded[0], loaded[1], audio.samples, self._torch_device(), interpolate_method="ignore"
            )
        except Exception as error:  # e.g. nltk's sentence splitter data missing offline
            self.notes["word_times"] = f"recognizer (alignment failed: {type(error).__name__}: {error})"
            return words
        aligned = result["word_segments"]
        if len(aligned) != len(words):
            self.notes["word_times"] = f"recognizer (aligner returned {len(aligned)} words for {len(words)})"
            return words
        timed = [a for a in aligned if "start" in a and "end" in a]
        self.notes["word_times"] = f"aligner for {len(timed)} of {len(words)} words, recognizer for the rest"
        return [
            replace(w, start=float(a["start"]), end=float(a["end"])) if "start" in a and "end" in a else w
            for w, a in zip(words, aligned)
        ]

    def runtime(self) -> dict[str, Any]:
        """CTranslate2's device and code (as the sequential backend), and where the torch models run when
        there are any (pyannote's VAD, an aligner)."""
        runtime = ctranslate2_runtime(self.model, self.config)
        if self.config.vad_method == "pyannote" or self.config.aligner:
            runtime["torch_device"] = self._torch_device()
        if self.config.vad_method == "silero":
            runtime["silero_device"] = silero_device(self.config.silero)
        return runtime

    def identity(self) -> dict[str, Any]:
        """Backend, decoder, model name and weight hash, and the full decoding and VAD configuration."""
        return recognizer_identity(self.backend, DECODER, self.model, self.config)
