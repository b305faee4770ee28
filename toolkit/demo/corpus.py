"""Build the deterministic pt-BR long-form demo corpus with exact references from its construction.

Each recording concatenates trimmed per-sentence synthesis with short pauses and 2-8 s non-speech
stretches (silence, noise bursts, tone melodies); some recordings get pink background noise at a
stated SNR. Utterance times, boundary-word times and non-speech intervals are known to the sample.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import soundfile
import soxr

from toolkit.core.errors import ToolkitError
from toolkit.core.files import atomic_write_bytes, atomic_write_json, atomic_write_text, machine_cache, sha256_file
from toolkit.core.transcripts import NONSPEECH, SPEECH, Interval, Reference, Utterance, Word
from toolkit.demo import sounds
from toolkit.demo.sentences import SENTENCES, Sentence
from toolkit.demo.synth import SPEAKERS, SpeakerStyle, Voice, detect_voice, synthesize_many
from toolkit.formats import write_names, write_reference_textgrid

SAMPLE_RATE = 16000
SPEECH_DBFS = -20.0  # RMS level of the speech track over its utterances
NONSPEECH_DB = {"silence": None, "pink-noise": -8.0, "white-noise": -14.0, "tones": -6.0}  # re speech
SNR_CYCLE: tuple[float | None, ...] = (None, 10.0, 20.0)  # background noise, in recording order
PAUSE_SECONDS = (0.5, 1.0)  # unlabelled pauses between utterances (turn breaks per the convention)
COMMA_SECONDS = (0.12, 0.28)  # pauses between the phrases of one utterance
STRETCH_SECONDS = (2.0, 8.0)  # labelled non-speech stretches
EDGE_SECONDS = 0.5  # unlabelled silence at the start and end of each recording
PEAK_LIMIT = 0.95
_BATCH = 6
_PUNCTUATION = re.compile(r"^\W+|\W+$")


@dataclass(frozen=True)
class NonSpeechStretch:
    """A constructed non-speech interval and what it contains."""

    start: float
    end: float
    kind: str


@dataclass(frozen=True)
class RecordingInfo:
    """One built recording: its files, split, conditions and exact reference."""

    recording_id: str
    split: str
    speaker: str
    strata: str
    snr_db: float | None
    duration: float
    audio: Path
    textgrid: Path
    names: Path
    reference: Reference
    stretches: tuple[NonSpeechStretch, ...]


@dataclass(frozen=True)
class CorpusInfo:
    """What :func:`build_corpus` wrote and with which synthesizer voice."""

    out_dir: Path
    voice: Voice
    seed: int
    recordings: tuple[RecordingInfo, ...]
    splits: Path
    metadata: Path
    readme: Path

    @property
    def total_duration(self) -> float:
        return sum(r.duration for r in self.recordings)


@dataclass(frozen=True)
class _Plan:
    recording_id: str
    split: str
    speaker: SpeakerStyle
    snr_db: float | None

    @property
    def strata(self) -> str:
        return "clean" if self.snr_db is None else f"noisy-{self.snr_db:g}dB"


@dataclass
class _SentenceStream:
    """Sentences in seeded random order, reshuffled when exhausted; unused ones can be put back."""

    rng: np.random.Generator
    queue: list[Sentence] = field(default_factory=list)

    def take(self, count: int) -> list[Sentence]:
        while len(self.queue) < count:
            self.queue.extend(SENTENCES[i] for i in self.rng.permutation(len(SENTENCES)))
        taken, self.queue = self.queue[:count], self.queue[count:]
        return taken

    def put_back(self, sentences: list[Sentence]) -> None:
        self.queue[:0] = sentences


@dataclass
class _Tracks:
    """The pieces of one recording before mixing, in samples at :data:`SAMPLE_RATE`."""

    speech: list[np.ndarray] = field(default_factory=list)
    other: list[np.ndarray] = field(default_factory=list)
    length: int = 0
    utterances: list[tuple[int, int, Sentence]] = field(default_factory=list)
    phrases: list[tuple[int, int, str]] = field(default_factory=list)
    stretches: list[tuple[int, int, str]] = field(default_factory=list)

    def add(self, speech: np.ndarray | None = None, other: np.ndarray | None = None) -> int:
        given = speech if speech is not None else other
        if given is None:
            raise ValueError("add() needs speech or other audio")
        n = len(given)
        self.speech.append(speech if speech is not None else np.zeros(n))
        self.other.append(other if other is not None else np.zeros(n))
        start, self.length = self.length, self.length + n
        return start


def default_cache_dir() -> Path:
    """Synthesis cache: ``$ABLATE_CACHE/tts`` or ``~/.cache/ptbr-ablate/tts``."""
    return machine_cache("tts")


def _plans(count: int) -> list[_Plan]:
    tuning = max(1, count // 2)
    plans = []
    for index in range(count):
        split = "tuning" if index < tuning else "holdout"
        order = index if split == "tuning" else index - tuning
        speaker = SPEAKERS[0] if split == "tuning" else SPEAKERS[1 + order % (len(SPEAKERS) - 1)]
        plans.append(_Plan(f"demo{index + 1:02d}", split, speaker, SNR_CYCLE[index % len(SNR_CYCLE)]))
    return plans


def _phrase_clips(
    sentences: list[Sentence], speaker: SpeakerStyle, voice: Voice, cache_dir: Path, workers: int
) -> list[list[tuple[str, np.ndarray]]]:
    """Per sentence, its phrases with their synthesized, resampled and trimmed audio."""
    phrases = [p for s in sentences for p in s.phrases]
    outputs = iter(synthesize_many([(p, speaker) for p in phrases], voice, cache_dir, workers))
    clips = []
    for sentence in sentences:
        sentence_clips = []
        for phrase in sentence.phrases:
            out = next(outputs)
            audio = soxr.resample(out.samples, out.sample_rate, SAMPLE_RATE, quality="HQ")
            clip = sounds.trim_silence(audio.astype(np.float64), SAMPLE_RATE)
            if len(clip) == 0:
                raise ToolkitError(f"{voice.label} produced silence for {phrase!r}")
            sentence_clips.append((phrase, clip))
        clips.append(sentence_clips)
    return clips


def _assemble(
    plan: _Plan,
    seconds: float,
    rng: np.random.Generator,
    stream: _SentenceStream,
    voice: Voice,
    cache_dir: Path,
    workers: int,
) -> _Tracks:
    """Lay out utterances, pauses and non-speech stretches until ``seconds`` of audio are reached."""
    tracks = _Tracks()
    target = round(seconds * SAMPLE_RATE)
    kinds = ["silence", *rng.permutation(sounds.NONSPEECH_KINDS[1:]).tolist()]
    speech_level = 10 ** (SPEECH_DBFS / 20)
    tracks.add(speech=np.zeros(round(EDGE_SECONDS * SAMPLE_RATE)))
    pending: list[tuple[Sentence, list[tuple[str, np.ndarray]]]] = []
    until_break = int(rng.integers(3, 6))
    while tracks.length < target:
        if not pending:
            batch = stream.take(_BATCH)
            pending = list(zip(batch, _phrase_clips(batch, plan.speaker, voice, cache_dir, workers)))
        sentence, clips = pending.pop(0)
        start = tracks.length
        for index, (phrase, clip) in enumerate(clips):
            if index:
                tracks.add(speech=np.zeros(round(rng.uniform(*COMMA_SECONDS) * SAMPLE_RATE)))
            phrase_start = tracks.add(speech=clip)
            tracks.phrases.append((phrase_start, tracks.length, phrase))
        tracks.utterances.append((start, tracks.length, sentence))
        tracks.add(speech=np.zeros(round(rng.uniform(*PAUSE_SECONDS) * SAMPLE_RATE)))
        until_break -= 1
        if until_break == 0 and tracks.length < target:
            kind = kinds[len(tracks.stretches) % len(kinds)]
            n = round(rng.uniform(*STRETCH_SECONDS) * SAMPLE_RATE)
            level_db = NONSPEECH_DB[kind]
            level = 0.0 if level_db is None else speech_level * 10 ** (level_db / 20)
            start = tracks.add(other=sounds.nonspeech(kind, n, SAMPLE_RATE, level, rng))
            tracks.stretches.append((start, tracks.length, kind))
            tracks.add(speech=np.zeros(round(rng.uniform(*PAUSE_SECONDS) * SAMPLE_RATE)))
            until_break = int(rng.integers(4, 8))
    stream.put_back([sentence for sentence, _ in pending])
    tracks.add(speech=np.zeros(round(EDGE_SECONDS * SAMPLE_RATE)))
    return tracks


def _mix(tracks: _Tracks, snr_db: float | None, rng: np.random.Generator) -> np.ndarray:
    """Level the speech, add non-speech stretches and background noise, and quantize to PCM16."""
    speech = np.concatenate(tracks.speech)
    in_speech = np.zeros(len(speech), dtype=bool)
    for start, end, _ in tracks.utterances:
        in_speech[start:end] = True
    speech *= 10 ** (SPEECH_DBFS / 20) / sounds.rms(speech[in_speech])
    mix = speech + np.concatenate(tracks.other)
    if snr_db is not None:
        noise = sounds.pink_noise(len(mix), SAMPLE_RATE, rng)
        mix += sounds.scale_to_snr(noise, float(np.mean(np.square(speech[in_speech]))), snr_db, in_speech)
    peak = float(np.max(np.abs(mix)))
    if peak > PEAK_LIMIT:
        mix *= PEAK_LIMIT / peak
    return np.round(mix * 32767).astype(np.int16)


def _reference(recording_id: str, speaker: str, tracks: _Tracks) -> Reference:
    """Utterances and their speech intervals; timed words are the one-word phrases, exact at both edges."""
    utterances, speech = [], []
    for start, end, sentence in tracks.utterances:
        t0, t1 = start / SAMPLE_RATE, end / SAMPLE_RATE
        utterances.append(Utterance(t0, t1, sentence.text, speaker))
        speech.append(Interval(t0, t1, SPEECH))
    words = [
        Word(_PUNCTUATION.sub("", phrase), start / SAMPLE_RATE, end / SAMPLE_RATE)
        for start, end, phrase in tracks.phrases
        if len(phrase.split()) == 1
    ]
    speech += [Interval(s / SAMPLE_RATE, e / SAMPLE_RATE, NONSPEECH) for s, e, _ in tracks.stretches]
    names = list(dict.fromkeys(n for _, _, sentence in tracks.utterances for n in sentence.names))
    return Reference(recording_id, utterances, words, sorted(speech, key=lambda i: i.start), [], names)


def _wav_bytes(samples: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, SAMPLE_RATE, subtype="PCM_16", format="WAV")
    return buffer.getvalue()


def _remove_stale(out_dir: Path, keep: set[str]) -> None:
    """Delete demo files of recordings an earlier, larger build made and this one does not."""
    for path in [*out_dir.glob("audio/demo*.wav"), *out_dir.glob("refs/demo*")]:
        if path.name.split(".")[0] not in keep:
            path.unlink()


def _readme(voice: Voice, seed: int, infos: list[RecordingInfo]) -> str:
    rows = "\n".join(
        f"| {r.recording_id} | {r.split} | {r.speaker} | {r.strata} | {r.duration:.1f} | "
        f"{len(r.reference.utterances)} | {len(r.stretches)} |"
        for r in infos
    )
    return f"""# pt-BR demo corpus (synthetic, built by `toolkit.demo.build_corpus`, seed {seed})

Voice: {voice.label}.

Each sentence is one utterance (turn). Its phrases (the text split after commas) are synthesized
separately, resampled to {SAMPLE_RATE} Hz, trimmed where the 5 ms energy envelope falls 40 dB below
its peak, and placed at known samples with a short comma pause between them, so utterance and
phrase edges are exact. Speakers are the same voice at different pitch/rate settings; tuning and
holdout use different speakers.

- `audio/<id>.wav`: 16 kHz mono PCM16. Speech is levelled to {SPEECH_DBFS:g} dBFS RMS.
- `refs/<id>.TextGrid`: `utterances/<speaker>` (verbatim text, numbers as spoken), `words` (only
  words whose both edges the construction knows: every one-word phrase, e.g. "Não," in
  "Não, não, não, ..." or "Sim."; an utterance's first-word onset is its start and its last-word
  offset its end, other word edges are unknown and not given), `speech` (`speech` for every utterance,
  `nonspeech` for the constructed 2-8 s stretches of silence, pink/white noise or tone melodies).
  Pauses between utterances ({PAUSE_SECONDS[0]:g}-{PAUSE_SECONDS[1]:g} s, long enough to be turn
  breaks under `protocol/transcription-convention.md`) and the {EDGE_SECONDS:g} s edges are silence
  but left unlabelled (not annotated), as a listener would not mark a pause between sentences;
  in noisy recordings they contain the background noise.
- `refs/<id>.names.txt`: the names occurring in the recording's sentences.
- `splits.csv`: id, split, strata (`clean` or `noisy-<SNR>dB`), speaker.
- `corpus.json`: voice, seed, SNRs and every utterance and non-speech interval.

Noisy recordings add pink noise (50 Hz - 8 kHz) over the whole recording, scaled so that speech
power over noise power, both measured on the utterance samples, equals the stated SNR.

| id | split | speaker | strata | seconds | utterances | non-speech stretches |
|---|---|---|---|---|---|---|
{rows}
"""


def _metadata(voice: Voice, seed: int, infos: list[RecordingInfo], out_dir: Path) -> dict[str, Any]:
    return {
        "voice": {"engine": voice.engine, "name": voice.name, "version": voice.version},
        "seed": seed,
        "sample_rate": SAMPLE_RATE,
        "speech_dbfs": SPEECH_DBFS,
        "nonspeech_db_re_speech": NONSPEECH_DB,
        "snrs_db": sorted({r.snr_db for r in infos if r.snr_db is not None}),
        "noise": "pink, 50 Hz - 8 kHz, SNR measured on utterance samples",
        "recordings": [
            {
                "id": r.recording_id,
                "split": r.split,
                "speaker": r.speaker,
                "strata": r.strata,
                "snr_db": r.snr_db,
                "duration": r.duration,
                "audio": r.audio.relative_to(out_dir).as_posix(),
                "audio_sha256": sha256_file(r.audio),
                "names": r.reference.names,
                "utterances": [
                    {"start": u.start, "end": u.end, "text": u.text, "speaker": u.speaker}
                    for u in r.reference.utterances
                ],
                "nonspeech": [{"start": s.start, "end": s.end, "kind": s.kind} for s in r.stretches],
            }
            for r in infos
        ],
    }


def build_corpus(
    out_dir: Path,
    seed: int = 0,
    recordings: int = 4,
    recording_seconds: float = 120.0,
    cache_dir: Path | None = None,
    workers: int = 2,
    engine: str | None = None,
) -> CorpusInfo:
    """Build ``recordings`` recordings of about ``recording_seconds`` each into ``out_dir``.

    The same seed and voice give byte-identical files; synthesis is cached in ``cache_dir``
    (default :func:`default_cache_dir`), so rebuilding costs only the mixing. ``engine`` forces
    "rhvoice" or "espeak-ng" instead of the best installed one.
    """
    if recordings < 1 or recording_seconds <= 0:
        raise ToolkitError("the demo corpus needs at least one recording of positive length")
    out_dir = Path(out_dir)
    cache_dir = default_cache_dir() if cache_dir is None else Path(cache_dir)
    voice = detect_voice(engine)
    seeds = np.random.SeedSequence(seed).spawn(recordings + 1)
    stream = _SentenceStream(np.random.default_rng(seeds[0]))
    infos = []
    for plan, seed_seq in zip(_plans(recordings), seeds[1:]):
        rng = np.random.default_rng(seed_seq)
        tracks = _assemble(plan, recording_seconds, rng, stream, voice, cache_dir, workers)
        samples = _mix(tracks, plan.snr_db, rng)
        duration = len(samples) / SAMPLE_RATE
        reference = _reference(plan.recording_id, plan.speaker.tag, tracks)
        audio = atomic_write_bytes(out_dir / "audio" / f"{plan.recording_id}.wav", _wav_bytes(samples))
        textgrid = out_dir / "refs" / f"{plan.recording_id}.TextGrid"
        write_reference_textgrid(reference, textgrid, duration)
        names = write_names(reference.names, out_dir / "refs" / f"{plan.recording_id}.names.txt")
        stretches = tuple(NonSpeechStretch(s / SAMPLE_RATE, e / SAMPLE_RATE, k) for s, e, k in tracks.stretches)
        infos.append(
            RecordingInfo(
                plan.recording_id,
                plan.split,
                plan.speaker.tag,
                plan.strata,
                plan.snr_db,
                duration,
                audio,
                textgrid,
                names,
                reference,
                stretches,
            )
        )
    _remove_stale(out_dir, {r.recording_id for r in infos})
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerow(["id", "split", "strata", "speaker"])
    writer.writerows([r.recording_id, r.split, r.strata, r.speaker] for r in infos)
    splits = atomic_write_text(out_dir / "splits.csv", table.getvalue())
    metadata = atomic_write_json(out_dir / "corpus.json", _metadata(voice, seed, infos, out_dir))
    readme = atomic_write_text(out_dir / "README.md", _readme(voice, seed, infos))
    return CorpusInfo(out_dir, voice, seed, tuple(infos), splits, metadata, readme)
