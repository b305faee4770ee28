"""What running a recognizer as an external command costs per unit: whisper-ctranslate2 (docs/command-recognizer.md's
worked example: the bundled weights, as a separate program) against the toolkit's own in-process faster-whisper
decode of the same weights, on the same synthesized sentences.

A command starts afresh for every decoded unit (its program start, imports and model load are paid each time);
the in-process recognizer is loaded once, apart from any unit. Both decode ``--repeats`` times; the wall time
per unit, the command's own CPU time, and the words each wrote are printed with the machine. Run:
``.venv/bin/python benchmarks/bench_command_recognizer.py [--repeats N]`` (needs the dev extra's
whisper-ctranslate2 beside that python).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
from machine import describe

from toolkit.asr import make_recognizer
from toolkit.audio.signal import Signal
from toolkit.demo.synth import SPEAKERS, detect_voice, synthesize

PAGE = Path(__file__).resolve().parents[1] / "docs" / "command-recognizer.md"
TEXT = "Maria Aparecida não concordou com a proposta. A reunião começou às dez horas."


def documented_settings() -> dict[str, Any]:
    """The settings of the page's ``[recognizers.whisper_cli]`` table."""
    blocks = re.findall(r"^```toml\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    table = tomllib.loads(next(b for b in blocks if "[recognizers.whisper_cli]" in b))["recognizers"]["whisper_cli"]
    return {k: v for k, v in table.items() if k not in ("backend", "label", "model")}


def timed(recognizer: Any, signal: Signal, repeats: int) -> tuple[list[float], list[float], int]:
    """Wall seconds per decode, the external command's CPU seconds per decode (0 in process), and the word count."""
    walls, cpus, words = [], [], 0
    for _ in range(repeats):
        begin = time.perf_counter()
        words = len(recognizer.transcribe(signal).words)
        walls.append(time.perf_counter() - begin)
        cpus.append(float(recognizer.notes.get("external_cpu_s", 0.0)))
    return walls, cpus, words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    with tempfile.TemporaryDirectory() as folder:
        command = make_recognizer(
            {"backend": "command", "model": "whisper-base", "folder": folder, "decoding": documented_settings()}
        )
        own = make_recognizer(
            {
                "backend": "faster-whisper",
                "model": "whisper-base",
                "decoding": {"cpu_threads": 2, "compute_type": "int8"},
            }
        )
        own.load()
        clip = synthesize(TEXT, detect_voice(), SPEAKERS[0], Path(folder))
        signal = Signal.original(clip.samples.astype(np.float32), clip.sample_rate)
        print(f"{signal.duration:.2f} s of synthesized speech, {args.repeats} decodes each; {describe()}")
        for name, recognizer in (("whisper-ctranslate2 (command)", command), ("faster-whisper (in process)", own)):
            walls, cpus, words = timed(recognizer, signal, args.repeats)
            print(
                f"{name}: wall per unit median {statistics.median(walls):.2f} s (min {min(walls):.2f}, "
                f"max {max(walls):.2f}); command CPU median {statistics.median(cpus):.2f} s; {words} words"
            )


if __name__ == "__main__":
    main()
