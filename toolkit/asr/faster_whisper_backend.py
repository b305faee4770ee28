"""Sequential long-form faster-whisper decoding with word timestamps: the baseline recognizer.

Every decoding parameter is a field of :class:`DecodingConfig` and is passed explicitly, so no
library default decides a result and the whole configuration goes into the run record.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from toolkit.asr.characters import RawWord, join_split_characters
from toolkit.asr.models import ModelInfo, feature_size
from toolkit.asr.segments import Transcript, classify, describe
from toolkit.asr.work_counts import counted
from toolkit.audio.signal import Signal, resample
from toolkit.core.devices import Device, check_setting, device_record, resolve
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import REPLACEMENT_CHARACTER, drop_contradicting_times

SAMPLE_RATE = 16000
DECODER = "faster-whisper sequential long-form"
# Every compute type CTranslate2 knows; whether this machine supports one is checked when the model loads.
COMPUTE_TYPES = (
    "default",
    "auto",
    "int8",
    "int8_float32",
    "int8_float16",
    "int8_bfloat16",
    "int16",
    "float16",
    "bfloat16",
    "float32",
)


@dataclass(frozen=True)
class DecodingConfig:
    """Whisper decoding parameters, all written out.

    Empty strings and zeros stand for "off" where TOML has no null: ``initial_prompt``,
    ``prefix`` and ``hotwords`` of ``""`` are not sent, ``max_new_tokens`` of 0 means no limit,
    ``hallucination_silence_threshold`` of 0 disables that skip; ``min_tail_s`` of 0 decodes every
    tail (``until_short_tail``). ``device`` ("auto", "cpu" or
    "cuda") and ``device_index`` say where CTranslate2 runs the model (toolkit.core.devices);
    ``compute_type = "float16"`` is for a GPU.
    """

    language: str = "pt"
    task: Literal["transcribe", "translate"] = "transcribe"
    beam_size: int = 5
    best_of: int = 5
    patience: float = 1.0
    length_penalty: float = 1.0
    temperature: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    compression_ratio_threshold: float = 2.4
    log_prob_threshold: float = -1.0
    no_speech_threshold: float = 0.6
    condition_on_previous_text: bool = True
    prompt_reset_on_temperature: float = 0.5
    repetition_penalty: float = 1.0
    no_repeat_ngram_size: int = 0
    initial_prompt: str = ""
    prefix: str = ""
    hotwords: str = ""
    suppress_blank: bool = True
    suppress_tokens: tuple[int, ...] = (-1,)
    without_timestamps: bool = False
    max_initial_timestamp: float = 1.0
    max_new_tokens: int = 0
    chunk_length: int = 30
    hallucination_silence_threshold: float = 0.0
    min_tail_s: float = 0.0
    prepend_punctuations: str = "\"'“¿([{-"
    append_punctuations: str = "\"'.。,，!！?？:：”)]}、"
    word_timestamps: bool = True
    vad_filter: bool = False
    compute_type: str = "int8"
    cpu_threads: int = 2
    device: Device = "cpu"
    device_index: int = 0

    def __post_init__(self) -> None:
        if self.language != "pt":
            raise ValueError(f"language must be 'pt' (the toolkit decodes Brazilian Portuguese), not {self.language!r}")
        if self.beam_size < 1 or self.best_of < 1:
            raise ValueError("beam_size and best_of must be at least 1")
        if self.patience <= 0 or self.length_penalty <= 0 or self.repetition_penalty <= 0:
            raise ValueError("patience, length_penalty and repetition_penalty must be positive")
        if not self.temperature or any(not 0.0 <= t <= 1.0 for t in self.temperature):
            raise ValueError("temperature must be a non-empty list of values in [0, 1]")
        if list(self.temperature) != sorted(self.temperature):
            raise ValueError("temperature fallback values must be in increasing order")
        if not 0.0 <= self.no_speech_threshold <= 1.0:
            raise ValueError("no_speech_threshold must lie in [0, 1]")
        counts = (self.no_repeat_ngram_size, self.max_new_tokens, self.hallucination_silence_threshold, self.min_tail_s)
        if min(counts) < 0:
            raise ValueError(
                "no_repeat_ngram_size, max_new_tokens, hallucination_silence_threshold and min_tail_s "
                "must not be negative"
            )
        if not 1 <= self.chunk_length <= 30:
            raise ValueError("chunk_length must lie in [1, 30] seconds")
        if not self.word_timestamps:
            raise ValueError("word_timestamps must be true: every hypothesis word needs its recognizer time")
        if self.vad_filter:
            raise ValueError(
                "vad_filter must be false: VAD is its own stage with pinned parameters (toolkit.audio.vad)"
            )
        if self.cpu_threads < 1:
            raise ValueError("cpu_threads must be at least 1")
        if self.compute_type not in COMPUTE_TYPES:
            raise ValueError(f"compute_type must be one of {', '.join(COMPUTE_TYPES)}, not {self.compute_type!r}")
        check_setting(self.device, self.device_index)

    def resolved_device(self) -> str:
        """``cpu`` or ``cuda:N`` as CTranslate2 sees this machine (NoCuda for a "cuda" it cannot use)."""
        return resolve(self.device, self.device_index, "ctranslate2")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def transcribe_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``WhisperModel.transcribe``, sentinels turned back into ``None`` (``min_tail_s``
        is the toolkit's own: ``until_short_tail``)."""
        return {
            "language": self.language,
            "task": self.task,
            "beam_size": self.beam_size,
            "best_of": self.best_of,
            "patience": self.patience,
            "length_penalty": self.length_penalty,
            "temperature": list(self.temperature),
            "compression_ratio_threshold": self.compression_ratio_threshold,
            "log_prob_threshold": self.log_prob_threshold,
            "no_speech_threshold": self.no_speech_threshold,
            "condition_on_previous_text": self.condition_on_previous_text,
            "prompt_reset_on_temperature": self.prompt_reset_on_temperature,
            "repetition_penalty": self.repetition_penalty,
            "no_repeat_ngram_size": self.no_repeat_ngram_size,
            "initial_prompt": self.initial_prompt or None,
            "prefix": self.prefix or None,
            "hotwords": self.hotwords or None,
            "suppress_blank": self.suppress_blank,
            "suppress_tokens": list(self.suppress_tokens),
            "without_timestamps": self.without_timestamps,
            "max_initial_timestamp": self.max_initial_timestamp,
            "max_new_tokens": self.max_new_tokens or None,
            "chunk_length": self.chunk_length,
            "hallucination_silence_threshold": self.hallucination_silence_threshold or None,
            "prepend_punctuations": self.prepend_punctuations,
            "append_punctuations": self.append_punctuations,
            "word_timestamps": self.word_timestamps,
            "vad_filter": self.vad_filter,
        }


def load_whisper(model: ModelInfo, config: DecodingConfig) -> Any:
    """A faster-whisper model from a verified local directory (never a download), on the configured
    device; a model or compute type that cannot load is an InputError naming the model folder."""
    from faster_whisper import WhisperModel

    device, _, index = config.resolved_device().partition(":")
    try:
        return WhisperModel(
            model.path,
            device=device,
            device_index=int(index or 0),
            compute_type=config.compute_type,
            cpu_threads=config.cpu_threads,
            local_files_only=True,
        )
    except (RuntimeError, ValueError, OSError) as error:  # CTranslate2 reports bad weights and types this way
        raise cannot_load(model, config, str(error).splitlines()[0] if str(error) else type(error).__name__) from None


def cannot_load(model: ModelInfo, config: DecodingConfig, detail: str) -> InputError:
    """The one-line refusal of a model or compute type CTranslate2 cannot load, naming the model folder."""
    return InputError(
        model.path, f"model '{model.name}' cannot be loaded with compute_type {config.compute_type!r}: {detail}"
    )


def ctranslate2_runtime(model: ModelInfo, config: DecodingConfig) -> dict[str, Any]:
    """Where and how CTranslate2 runs this model here: on a CPU, the code it selects (toolkit.asr.cpu);
    on a GPU, which one and the compute types it offers. Both change the words."""
    from toolkit.asr.cpu import CannotLoad, ctranslate2_cpu

    device = config.resolved_device()
    if device != "cpu":
        import ctranslate2

        index = int(device.split(":")[1])
        supported = sorted(ctranslate2.get_supported_compute_types("cuda", index))
        if config.compute_type not in ("default", "auto", *supported):
            raise cannot_load(model, config, f"this GPU supports {', '.join(supported)}")
        return {**device_record(device), "compute_type": config.compute_type, "supported_compute_types": supported}
    try:
        found = ctranslate2_cpu(model.path, config.compute_type)
    except CannotLoad as error:
        raise cannot_load(model, config, error.detail) from None
    mels = found.pop("n_mels", None)
    if mels is not None and int(mels) != feature_size(Path(model.path)):
        raise InputError(
            model.path,
            f"model '{model.name}' reads {mels} mel bins, but faster-whisper would compute "
            f"{feature_size(Path(model.path))} (no preprocessor_config.json saying {mels}); copy the original "
            "model's preprocessor_config.json beside model.bin (ct2-transformers-converter --copy_files)",
        )
    return {"device": "cpu", **found}


def to_16k(signal: Signal) -> Signal:
    """The recognizer's input rate; seconds are unchanged by resampling."""
    return resample(signal, SAMPLE_RATE)


def segment_words(
    segments: Sequence[Any], duration: float, true_text: Callable[[list[int]], str] | None = None
) -> tuple[list[Word], dict[str, int]]:
    """Words of faster-whisper segments as a valid word stream (``toolkit.core.wordstream``), and what it took.

    Words are ``seg0000``-numbered and clamped to ``[0, duration]`` (Whisper's 20 ms frames can
    overrun the last sample). A character split across words comes back whole, by
    ``toolkit.asr.characters`` against ``true_text`` of the segments' tokens (when given); a word
    whose times contradict the words before it keeps its text and loses its times. The counts say
    how many words were joined, replacement characters removed, words dropped and times dropped.
    """
    raw = [
        RawWord(word.word, float(word.start), float(word.end), float(word.probability), index)
        for index, segment in enumerate(segments)
        for word in segment.words or []
    ]
    split = true_text is not None and any(REPLACEMENT_CHARACTER in w.text for w in raw)
    joined = true_text([t for s in segments for t in s.tokens]) if split and true_text is not None else None
    repaired = join_split_characters(raw, joined)
    words: list[Word] = []
    for word in repaired.words:
        text = word.text.strip()
        if not text:
            continue
        start = min(max(word.start, 0.0), duration)
        end = min(max(word.end, start), duration)
        words.append(Word(text, start, end, word.confidence, f"seg{word.segment:04d}"))
    ordered, untimed = drop_contradicting_times(words)
    return ordered, {
        "split_characters_joined": repaired.joined,
        "replacement_characters_removed": repaired.removed,
        "words_dropped_without_text": repaired.dropped,
        "contradicting_times_dropped": untimed,
    }


def until_short_tail(segments: Generator[Any, None, None], duration: float, min_tail_s: float) -> Iterator[Any]:
    """Whisper's segments until one whose words end within ``min_tail_s`` of the audio's ``duration``.

    The next window would hold less than ``min_tail_s`` of audio and 30 s of padding, where Whisper
    can run away (224 repeated tokens at each of five temperatures: 29 s of CPU for 0.35 s of a +VAD
    unit's end under one instruction set, an instant end under another). whisper.cpp stops 1 s
    before the end likewise. Closing the generator is what skips that decode; 0 decodes every tail.
    """
    for segment in segments:
        yield segment
        words = segment.words or []
        if min_tail_s > 0 and duration - float(words[-1].end if words else segment.end) < min_tail_s:
            segments.close()
            return


def true_text_decoder(whisper: Any) -> Callable[[list[int]], str]:
    """The text of a token sequence decoded whole by ``whisper``'s own tokenizer (timestamps left out)."""
    from faster_whisper.tokenizer import Tokenizer

    tokenizer = Tokenizer(whisper.hf_tokenizer, whisper.model.is_multilingual, task="transcribe", language="pt")
    decode: Callable[[list[int]], str] = tokenizer.decode
    return decode


def recognizer_identity(backend: str, decoder: str, model: ModelInfo, config: DecodingConfig) -> dict[str, Any]:
    """What a run records of a CTranslate2 recognizer (both backends alike): backend, decoder, weights, settings."""
    return {
        "backend": backend,
        "decoder": decoder,
        "model": model.name,
        "weights_sha256": model.weights_sha256,
        "model_source": model.source,
        "decoding": config.to_json(),
    }


class FasterWhisperRecognizer:
    """Sequential long-form decoding (Whisper's own 30 s windowing) with word timestamps."""

    backend = "faster-whisper"

    def __init__(self, model: ModelInfo, config: DecodingConfig) -> None:
        self.model = model
        self.config = config
        self._whisper: Any = None
        self.notes: dict[str, Any] = {
            "decoder": DECODER,
            "word_times": "recognizer",
            "temperature_fallback": f"sequential: temperatures {list(config.temperature)}",
        }

    def load(self) -> None:
        """Load the weights now (decoding would otherwise load them on first use)."""
        if self._whisper is None:
            self._whisper = load_whisper(self.model, self.config)

    def transcribe(self, signal: Signal) -> Transcript:
        """Words with times in ``signal``'s own seconds and word probabilities as confidence,
        and each segment's temperature, log-probability, compression ratio and no-speech probability."""
        audio = to_16k(signal)
        if len(audio.samples) == 0:
            return Transcript([], [])
        self.load()
        config = self.config
        with counted(self._whisper) as work:
            decoded, _ = self._whisper.transcribe(audio.samples, **config.transcribe_kwargs())
            segments = list(until_short_tail(decoded, audio.duration, config.min_tail_s))

        def outcome(segment: Any) -> str:
            return classify(
                segment,
                config.temperature,
                config.compression_ratio_threshold,
                config.log_prob_threshold,
                config.no_speech_threshold,
            )

        words, counts = segment_words(segments, audio.duration, true_text_decoder(self._whisper))
        self.notes.update(counts, **asdict(work))
        return Transcript(words, describe(segments, outcome))

    def runtime(self) -> dict[str, Any]:
        return ctranslate2_runtime(self.model, self.config)

    def identity(self) -> dict[str, Any]:
        """Backend, model name and weight hash, and the full decoding configuration."""
        return recognizer_identity(self.backend, DECODER, self.model, self.config)
