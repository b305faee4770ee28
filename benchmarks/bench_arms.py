"""Arms benchmark: what the toolkit itself costs around model inference, and an unchanged rerun.

Builds a one-recording demo-style corpus (default 120 s), runs baseline, +VAD, +windows and
+GTCRN enhancement from a cold cache, and splits the wall time into model inference (decoding,
Silero VAD, GTCRN; measured around each call, loading the recognizer included) and everything else (loading and hashing
audio, resampling, time maps, seams, writing the run folder). Then reruns the unchanged
experiment and scores it. Target: everything but inference under 5% of inference time.
Run: ``.venv/bin/python benchmarks/bench_arms.py [--seconds 120]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from toolkit.corpus.freeze import freeze
from toolkit.demo.corpus import build_corpus
from toolkit.evaluate import evaluate_run
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
ARMS = '[arms]\nbaseline = []\nvad = ["vad"]\nwindows = ["windows"]\nenhance = ["gtcrn"]\n'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="length of the recording")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        corpus = root / "corpus"
        build_corpus(corpus, recordings=1, recording_seconds=args.seconds)
        freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
        text = DEMO.read_text(encoding="utf-8")
        (root / "experiment.toml").write_text(text[: text.rindex("\n[arms]") + 1] + ARMS, encoding="utf-8")
        experiment = load_experiment(root)
        split = next(iter({line.split(",")[1] for line in (corpus / "splits.csv").read_text().splitlines()[1:]}))

        started = time.perf_counter()
        first = run_experiment(experiment, split, progress=False)
        cold = time.perf_counter() - started
        outputs = [first.folder.read_arm_output(arm, rec) for arm in first.arms for rec in first.recordings]
        # Each arm's compute time: its decodes, Silero VAD and enhancement (these arms share none).
        inference = sum(o.compute.wall_s for o in outputs)
        audio_s = sum(o.duration for o in outputs) / len(first.arms)

        started = time.perf_counter()
        second = run_experiment(experiment, split, progress=False)
        rerun = time.perf_counter() - started
        started = time.perf_counter()
        evaluate_run(second.folder)
        scoring = time.perf_counter() - started

    # Starting each recognizer's worker and loading its model is measured apart (first.load_wall_s:
    # process start, imports and the load).
    other = cold - inference - first.load_wall_s
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine import describe

    print(describe())
    print(f"recording: {audio_s:.0f} s of audio, arms: {', '.join(first.arms)}")
    print(f"cold run wall time           {cold:8.2f} s")
    print(f"  model inference (measured) {inference:8.2f} s")
    print(f"  recognizer start + load    {first.load_wall_s:8.2f} s")
    print(f"  everything else            {other:8.2f} s  = {100 * other / inference:.1f}% of inference")
    print(f"unchanged rerun              {rerun:8.2f} s  ({second.describe()})")
    print(f"scoring + report             {scoring:8.2f} s")


if __name__ == "__main__":
    main()
