"""The encoder-only floor: what Whisper's encoder alone costs on some audio, on this machine, now.

Every arm encodes each 30 s window of the audio it decodes at least once; decoding tokens, beam search
and timestamps come on top. Encoding the audio's 30 s windows back to back with CTranslate2 (the bundled
model, int8, the recognizer's threads) and nothing else gives the lowest real-time factor any arm of that
recognizer can reach here: an arm's RTF over this floor says how much of its time is not the encoder.
"""

from __future__ import annotations

import time
from pathlib import Path

WINDOW_SAMPLES = 30 * 16_000  # Whisper's window at 16 kHz


def encoder_floor_rtf(wavs: list[Path], threads: int = 2) -> dict[str, float]:
    """Wall and CPU seconds of encoding every 30 s window of ``wavs`` (16 kHz mono), over their duration."""
    import ctranslate2
    import numpy as np
    import soundfile
    from faster_whisper.feature_extractor import FeatureExtractor

    from toolkit.asr.models import resolve_model

    model = ctranslate2.models.Whisper(
        resolve_model("whisper-base").path, device="cpu", compute_type="int8", intra_threads=threads
    )
    features = FeatureExtractor()
    duration = wall = cpu = 0.0
    for wav in wavs:
        samples, _ = soundfile.read(wav, dtype="float32")
        duration += len(samples) / 16_000
        for start in range(0, len(samples), WINDOW_SAMPLES):
            window = np.zeros(WINDOW_SAMPLES, dtype=np.float32)
            piece = samples[start : start + WINDOW_SAMPLES]
            window[: len(piece)] = piece
            mel = features(window)[:, :3000][np.newaxis]
            wall0, cpu0 = time.perf_counter(), time.process_time()
            model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(mel)), to_cpu=True)
            wall += time.perf_counter() - wall0
            cpu += time.process_time() - cpu0
    return {"rtf": wall / duration, "cpu_rtf": cpu / duration, "duration_s": duration}
