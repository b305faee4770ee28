"""One long recording of real pt-BR speech with known onsets: every shared clip (``ptbr-dev``: Common Voice,
LapsBM, UFPAlign), trimmed to its speech (librosa, 35 dB below peak) and joined with pauses drawn from 0.8 to 5 s,
with a TextGrid of its utterances and its speech and non-speech. The benchmarks and the onset tests build it."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from shared_data import PTBR_DEV

from toolkit.core.transcripts import NONSPEECH, SPEECH, Interval, Reference, Utterance
from toolkit.formats.textgrid import write_textgrid

SAMPLE_RATE = 16000
RECORDING = "ptbr-long"


def _clips() -> list[tuple[Path, str]]:
    """Every shared clip with its transcript, in a fixed order."""
    clips = []
    with open(PTBR_DEV / "commonvoice-pt" / "validated.tsv", encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            clips.append((PTBR_DEV / "commonvoice-pt" / "clips" / row["path"], row["sentence"].replace('"', "")))
    for folder in ("lapsbm", "ufpalign"):
        for wav in sorted((PTBR_DEV / folder).glob("*.wav")):
            clips.append((wav, wav.with_suffix(".txt").read_text(encoding="utf-8").strip()))
    return clips


def build_recording(out: Path, minutes: float, seed: int = 13) -> None:
    """One long recording and its TextGrid (utterances and speech/non-speech at the trimmed clip edges)."""
    import librosa
    import soundfile

    rng = np.random.default_rng(seed)
    clips = _clips()
    order = rng.permutation(len(clips))
    pieces, utterances, speech = [np.zeros(int(1.0 * SAMPLE_RATE))], [], []
    cursor = len(pieces[0])
    for index in order:
        path, text = clips[index]
        if not text.strip(" ?"):
            continue
        audio, _ = librosa.load(path, sr=SAMPLE_RATE, mono=True)
        audio, _ = librosa.effects.trim(audio, top_db=35)
        audio = 0.1 * audio / max(1e-6, float(np.sqrt(np.mean(audio**2))))
        t0 = cursor / SAMPLE_RATE
        pieces.append(audio)
        cursor += len(audio)
        utterances.append(Utterance(t0, cursor / SAMPLE_RATE, text, "reader"))
        speech.append(Interval(t0, cursor / SAMPLE_RATE, SPEECH))
        pause = np.zeros(int(rng.uniform(0.8, 5.0) * SAMPLE_RATE))
        speech.append(Interval(cursor / SAMPLE_RATE, (cursor + len(pause)) / SAMPLE_RATE, NONSPEECH))
        pieces.append(pause)
        cursor += len(pause)
        if cursor >= minutes * 60 * SAMPLE_RATE:
            break
    samples = np.clip(np.concatenate(pieces), -1, 1)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    (out / "refs").mkdir(parents=True, exist_ok=True)
    soundfile.write(out / "audio" / f"{RECORDING}.wav", samples, SAMPLE_RATE, subtype="PCM_16")
    write_textgrid(
        Reference(RECORDING, utterances, [], speech, [], []),
        out / "refs" / f"{RECORDING}.TextGrid",
        len(samples) / SAMPLE_RATE,
    )
    (out / "splits.csv").write_text(f"id,split\n{RECORDING},tuning\n", encoding="utf-8")
