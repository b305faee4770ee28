"""Review-queue benchmark: a run folder of one 60-minute recording (~9,000 reference words) and six arms.

Writes, as real files in a temporary folder, what a run leaves for the queue: per arm the full
output (all words, 24 seams every 2.5 min with some flagged), the review list against the
baseline, and the score JSON from the real scorer (each arm a different seed of the same
~12%-WER baseline hypothesis of ``bench_scorer``, every other arm that baseline with 3% of its
words changed). Then times ``build_queue`` plus the status of every item against a store of 500
decisions (``Adjudication.item_statuses``): what the app does before showing the queue.
Target: under one second. Run: ``.venv/bin/python benchmarks/bench_queue.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

from bench_scorer import build_pair

from toolkit.adjudication.context import Adjudication
from toolkit.adjudication.queue import build_queue
from toolkit.adjudication.store import DecisionStore
from toolkit.core.files import atomic_write_json
from toolkit.core.transcripts import Hypothesis
from toolkit.corpus.manifest import FileRecord, Manifest, RecordingEntry
from toolkit.pipeline.disagreement import disagreement_spans, write_disagreements
from toolkit.runs.folder import RunFolder
from toolkit.runs.record import ManifestUse, RunConfig, RunRecord
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

ARMS = ["baseline", "vad", "windows", "enhance", "second_model", "combined_models"]
RECORDING = "bench"


def write_run(root: Path) -> RunFolder:
    folder = RunFolder(root / "runs" / "tuning-bench")
    RunRecord(
        status="complete",
        started="2026-12-01T00:00:00+00:00",
        split="tuning",
        config=RunConfig(
            experiment="bench",
            primary="whisper_base",
            recognizers={},
            arms=tuple({"name": arm, "components": []} for arm in ARMS),
        ),
        manifest=ManifestUse("manifest.json", "0" * 64),
        recordings=(RECORDING,),
        finished="2026-12-01T00:01:00+00:00",
    ).write(folder.record)
    reference, baseline, vad = build_pair(seed=0)
    rng = random.Random(1)
    for arm in ARMS:
        hypothesis = (
            baseline
            if arm == ARMS[0]
            else Hypothesis(
                RECORDING,
                [
                    replace(w, text=rng.choice(["não", "João", "quinze", "então", "mas"])) if rng.random() < 0.03 else w
                    for w in baseline.words
                ],
                arm=arm,
            )
        )
        score = score_recording(
            reference,
            hypothesis,
            ScoreOptions(names=tuple(reference.names)),
            vad,
            [(150.0 * k, 150.0 * k + 5.0) for k in range(1, 24)],
        )
        folder.write_recording_score(arm, RECORDING, score.to_json())
        seams = [
            {
                "index": k,
                "start": 150.0 * k,
                "end": 150.0 * k + 5.0,
                "review": k % 4 == 0,
                "flags": [{"kind": "timing"}] if k % 4 == 0 else [],
                "kept_left": [],
                "kept_right": [],
            }
            for k in range(1, 24)
        ]
        atomic_write_json(
            folder.arm_output(arm, RECORDING),
            {"words": [asdict(w) for w in hypothesis.words], "seams": seams, "disagreements": []},
        )
        if arm != ARMS[0]:
            write_disagreements(
                disagreement_spans(baseline.words, hypothesis.words),
                folder.disagreements(arm, RECORDING),
                recording_id=RECORDING,
                label_a="baseline",
                label_b=arm,
            )
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        print("writing the run folder (scoring six arms)…", flush=True)
        folder = write_run(root)
        store = DecisionStore(root / "adjudication.sqlite")
        for k in range(500):
            store.record(
                recording_id=RECORDING,
                start=7.0 * k,
                end=7.0 * k + 1.0,
                action="keep",
                old_text="x",
                new_text="",
                annotator="bench",
                reference_sha256="r",
                manifest_sha256="m",
            )
        entry = RecordingEntry(
            RECORDING,
            "bench.wav",
            "a" * 64,
            0,
            3600.0,
            16000,
            1,
            None,
            "tuning",
            [],
            "",
            {"textgrid": FileRecord("bench.TextGrid", "r", 0)},
        )
        adjudication = Adjudication(root, "bench", Manifest([entry]), store, ScoreOptions())
        times = []
        for _ in range(args.repeats + 1):
            begin = time.perf_counter()
            queue = build_queue(folder)
            statuses = adjudication.item_statuses([(i.recording_id, i.start, i.end) for i in queue.items])
            times.append(time.perf_counter() - begin)
        size = sum(p.stat().st_size for p in folder.root.rglob("*.json")) / 1e6
        print(
            f"queue of {len(queue.items)} spans ({queue.counts()}) from {size:.1f} MB of run files, "
            f"{len(statuses)} statuses against 500 decisions"
        )
        print(
            f"first build {times[0]:.3f} s, median of {args.repeats} more {statistics.median(times[1:]):.3f} s "
            f"(target: under 1 s)"
        )


if __name__ == "__main__":
    main()
