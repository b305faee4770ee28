"""The scorer's command, not only its library call: ``ablate score`` on a 9,000-word pt-BR pair, minus start-up.

Writes the pair of ``bench_scorer.build_pair`` as files (reference TextGrid, hypothesis JSON words,
VAD segments), times ``ablate score --format json`` on it and on a 20-word pair of the same files'
kind (its start-up: interpreter, imports, reading), and prints the difference against bare
``jiwer.process_words`` + ``jiwer.cer`` on the same texts. Names the CPU; run on a quiet machine.
Run: ``.venv/bin/python benchmarks/bench_score_command.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jiwer
from bench_scorer import build_pair
from machine import describe

from toolkit.core.transcripts import Hypothesis, Reference
from toolkit.formats import write_hypothesis_json, write_reference_textgrid

ABLATE = Path(sys.executable).parent / "ablate"


def write_pair(folder: Path, reference: Reference, hypothesis: Hypothesis, vad: list) -> list[str]:
    """The pair as the files a user scores, and the command's arguments for them."""
    folder.mkdir(parents=True, exist_ok=True)
    ends = [reference.utterances[-1].end, *(i.end for i in reference.speech), *(e for _, e in vad)]
    duration = max(*ends, hypothesis.words[-1].end or 0.0) + 1.0
    write_reference_textgrid(reference, folder / "bench.TextGrid", duration)
    # The bench pair jitters onsets, so a few words are out of order: a file must hold them in time order.
    ordered = sorted(hypothesis.words, key=lambda w: (w.start or 0.0, w.end or 0.0))
    write_hypothesis_json(Hypothesis(hypothesis.recording_id, ordered, arm=hypothesis.arm), folder / "hyp.json")
    (folder / "vad.txt").write_text("".join(f"{s:.3f} {e:.3f}\n" for s, e in vad), encoding="utf-8")
    files = ("--ref", folder / "bench.TextGrid", "--hyp", folder / "hyp.json", "--vad", folder / "vad.txt")
    return [str(part) for part in files]


def command_seconds(arguments: list[str], repeats: int) -> float:
    """Median wall time of ``ablate score ARGUMENTS --format json`` (output discarded)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([str(ABLATE), "score", *arguments, "--format", "json"], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bare_seconds(reference: Reference, hypothesis: Hypothesis, repeats: int) -> float:
    ref_text, hyp_text = reference.text, hypothesis.text
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        jiwer.process_words(ref_text, hyp_text)
        jiwer.cer(ref_text, hyp_text)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    reference, hypothesis, vad = build_pair()
    small_ref, small_hyp, small_vad = build_pair(words=20, minutes=0.2)
    with tempfile.TemporaryDirectory() as tmp:
        full = command_seconds(write_pair(Path(tmp) / "full", reference, hypothesis, vad), args.repeats)
        start_up = command_seconds(write_pair(Path(tmp) / "small", small_ref, small_hyp, small_vad), args.repeats)
    bare = bare_seconds(reference, hypothesis, args.repeats)
    print(describe())
    print(f"ablate score, 9,000-word pair: {full:.3f} s; 20-word pair (start-up): {start_up:.3f} s")
    print(f"bare jiwer.process_words + jiwer.cer: {bare:.3f} s")
    print(f"the command minus its start-up: {full - start_up:.3f} s = {(full - start_up) / bare:.2f}x bare jiwer")


if __name__ == "__main__":
    main()
