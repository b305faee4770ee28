"""The scorer's command, not only its library call: ``ablate score`` on a 9,000-word pt-BR pair, minus start-up.

Writes the pair of ``bench_scorer.build_pair`` as files (reference TextGrid, hypothesis JSON words,
VAD segments), times ``ablate score --format json`` on it and on a 20-word pair of the same files'
kind (its start-up: interpreter, imports, reading), and prints the difference against bare
``jiwer.process_words`` + ``jiwer.cer`` on the same texts: called in a loop in this process (the issue's yardstick),
and as a command of its own (a fresh process reading the two texts and calling jiwer once, minus the same on the
20-word texts), which pays what the command pays on its first call: memory touched for the first time, cold
caches. Names the CPU; run on a quiet machine (the CPU times hold better than the wall times on a busy one).
The five measures are taken in turn, N times each, so that a machine whose speed drifts slows them alike.
Run: ``.venv/bin/python benchmarks/bench_score_command.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import jiwer
from bench_scorer import build_pair
from machine import describe

from toolkit.core.transcripts import Hypothesis, Reference
from toolkit.formats import write_hypothesis_json, write_reference_textgrid

ABLATE = Path(sys.executable).parent / "ablate"
# Bare jiwer as a program: the two texts read from files, one call of each function, the figures printed.
JIWER_COMMAND = (
    "import sys, jiwer; ref, hyp = (open(p, encoding='utf-8').read() for p in sys.argv[1:3]); "
    "print(jiwer.process_words(ref, hyp).wer, jiwer.cer(ref, hyp))"
)


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


def write_texts(folder: Path, reference: Reference, hypothesis: Hypothesis) -> list[str]:
    """The pair's two texts as files, for bare jiwer's command."""
    (folder / "ref.txt").write_text(reference.text, encoding="utf-8")
    (folder / "hyp.txt").write_text(hypothesis.text, encoding="utf-8")
    return [str(folder / "ref.txt"), str(folder / "hyp.txt")]


def command_once(command: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, of the child) of one run of ``command``, its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def bare_once(reference: Reference, hypothesis: Hypothesis) -> tuple[float, float]:
    """Wall time and CPU time of bare ``jiwer.process_words`` + ``jiwer.cer`` on the pair's texts, in this process."""
    ref_text, hyp_text = reference.text, hypothesis.text
    started, cpu_started = time.perf_counter(), time.process_time()
    jiwer.process_words(ref_text, hyp_text)
    jiwer.cer(ref_text, hyp_text)
    return time.perf_counter() - started, time.process_time() - cpu_started


def medians(measures: Sequence[Callable[[], tuple[float, float]]], repeats: int) -> list[tuple[float, float]]:
    """The median wall and CPU time of each measure, all taken in turn ``repeats`` times, so that a machine whose
    speed drifts slows them alike (the CPU time holds better than the wall time on a busy machine)."""
    rounds = [[measure() for measure in measures] for _ in range(repeats)]
    return [
        (statistics.median(r[k][0] for r in rounds), statistics.median(r[k][1] for r in rounds))
        for k in range(len(measures))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    reference, hypothesis, vad = build_pair()
    small_ref, small_hyp, small_vad = build_pair(words=20, minutes=0.2)
    score, jiwer_program = [str(ABLATE), "score", "--format", "json"], [sys.executable, "-c", JIWER_COMMAND]
    with tempfile.TemporaryDirectory() as tmp:
        commands = [
            [*score, *write_pair(Path(tmp) / "full", reference, hypothesis, vad)],
            [*score, *write_pair(Path(tmp) / "small", small_ref, small_hyp, small_vad)],
            [*jiwer_program, *write_texts(Path(tmp) / "full", reference, hypothesis)],
            [*jiwer_program, *write_texts(Path(tmp) / "small", small_ref, small_hyp)],
        ]
        measures = [
            *(partial(command_once, command) for command in commands),
            partial(bare_once, reference, hypothesis),
        ]
        full, start_up, jiwer_full, jiwer_start_up, bare = medians(measures, args.repeats)
    print(describe())
    for clock, index in (("wall", 0), ("CPU", 1)):
        beyond, jiwer_beyond = full[index] - start_up[index], jiwer_full[index] - jiwer_start_up[index]
        print(
            f"{clock}: ablate score, 9,000-word pair {full[index]:.3f} s; 20-word pair (start-up) "
            f"{start_up[index]:.3f} s; bare jiwer.process_words + jiwer.cer {bare[index]:.3f} s; "
            f"the command minus its start-up {beyond:.3f} s = {beyond / bare[index]:.2f}x bare jiwer; "
            f"bare jiwer as a command minus its start-up {jiwer_beyond:.3f} s: {beyond / jiwer_beyond:.2f}x"
        )


if __name__ == "__main__":
    main()
