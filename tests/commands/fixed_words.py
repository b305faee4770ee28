"""A recognizer of fixed rules for the command-recognizer tests: standard library only, run as an external program.

``fixed_words.py [--mode MODE] [--format json|ctm] [--threshold RMS] [--pids FILE] AUDIO OUTPUT`` reads a 16-bit
mono WAV and writes one word for each half second whose RMS is above the threshold, the words of a fixed
Portuguese sentence in turn, at 0.05-0.45 s into that half second. MODE ``ok`` does that; the others fail the way
an external recognizer can: ``fail`` (exit 3), ``hang`` (sleeps, and starts a child that sleeps too, their pids in
FILE), ``nothing`` (no file), ``empty`` (an empty file), ``bad-json``, ``nan``, ``past-end`` (a word after the
audio's end), ``backwards`` (a word ending before it starts), ``crash`` (killed by SIGSEGV).
"""

from __future__ import annotations

import argparse
import array
import json
import math
import os
import signal
import subprocess
import sys
import time
import wave

SENTENCE = "eu não vou sair hoje de casa".split()
STEP_S = 0.5


def _samples(path: str) -> tuple[list[float], int]:
    with wave.open(path, "rb") as audio:
        if audio.getnchannels() != 1 or audio.getsampwidth() != 2:
            raise SystemExit("expected 16-bit mono WAV")
        frames = array.array("h", audio.readframes(audio.getnframes()))
        return [f / 32768 for f in frames], audio.getframerate()


def _words(samples: list[float], rate: int, threshold: float) -> list[dict[str, object]]:
    step = int(STEP_S * rate)
    words: list[dict[str, object]] = []
    for k in range(len(samples) // step):
        piece = samples[k * step : (k + 1) * step]
        if math.sqrt(sum(x * x for x in piece) / len(piece)) > threshold:
            start = k * STEP_S
            words.append({"text": SENTENCE[len(words) % len(SENTENCE)], "start": start + 0.05, "end": start + 0.45})
    return words


def _hang(pids: str | None) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    if pids:
        with open(pids, "w", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--format", default="json", choices=("json", "ctm"))
    parser.add_argument("--threshold", type=float, default=0.005)
    parser.add_argument("--pids")
    parser.add_argument("audio")
    parser.add_argument("output")
    args = parser.parse_args()
    print(f"fixed_words: {args.mode} on {os.path.basename(args.audio)}", file=sys.stderr)
    if args.mode == "hang":  # first, so the pids are written long before any timeout
        _hang(args.pids)
    samples, rate = _samples(args.audio)
    duration = len(samples) / rate
    words = _words(samples, rate, args.threshold)
    mode = args.mode
    if mode == "fail":
        print("fixed_words: giving up on purpose", file=sys.stderr)
        sys.exit(3)
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "nothing":
        return
    if mode == "empty":
        open(args.output, "w").close()
        return
    if mode == "bad-json":
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write('{"words": [{"text": "eu", "start": 0.1')
        return
    if mode == "nan":
        words = [{"text": "eu", "start": float("nan"), "end": 0.5}]
    elif mode == "past-end":
        words = [*words, {"text": "depois", "start": duration + 1.0, "end": duration + 1.5}]
    elif mode == "backwards":
        words = [{"text": "eu", "start": 0.4, "end": 0.2}]
    with open(args.output, "w", encoding="utf-8") as handle:
        if args.format == "json":
            json.dump({"words": words}, handle, ensure_ascii=False)
        else:
            for word in words:
                start, end = float(word["start"]), float(word["end"])  # type: ignore[arg-type]
                handle.write(f"unit 1 {start:.3f} {end - start:.3f} {word['text']}\n")


if __name__ == "__main__":
    main()
