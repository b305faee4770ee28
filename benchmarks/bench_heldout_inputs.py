"""What the gate's re-verification of the test split costs: an hour of audio hashed against its manifest.

Writes one hour of 16 kHz 16-bit mono noise as six 10-minute WAVs with references, freezes a manifest of them
as a holdout, and times ``require_test_inputs`` (what ``ablate gate`` and ``ablate audit verify`` run before a
verdict) over fresh calls; the files are in the page cache after the first, as they are on a machine that just
decoded them. Target: under a second or two for an hour. Run: ``.venv/bin/python
benchmarks/bench_heldout_inputs.py [--repeats N] [--minutes M]``.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile

from toolkit.corpus.freeze import freeze
from toolkit.protocol.heldout_inputs import require_test_inputs

RATE = 16_000
PIECE_MIN = 10


def corpus(root: Path, minutes: int) -> Path:
    """``minutes`` of noise in 10-minute holdout recordings with a one-line reference each, frozen."""
    audio, refs = root / "audio", root / "refs"
    audio.mkdir(parents=True)
    refs.mkdir()
    rng = np.random.default_rng(0)
    pieces = [f"rec{k:02d}" for k in range(max(1, minutes // PIECE_MIN))]
    for rid in pieces:
        samples = (0.05 * rng.standard_normal(PIECE_MIN * 60 * RATE)).astype(np.float32)
        soundfile.write(audio / f"{rid}.wav", samples, RATE, subtype="PCM_16")
        (refs / f"{rid}.txt").write_text("texto de referência\n", encoding="utf-8")
    with open(root / "splits.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["id", "split"], *([rid, "holdout"] for rid in pieces)])
    manifest = root / "manifest.json"
    freeze(audio, refs, manifest, splits_csv=root / "splits.csv")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--minutes", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        manifest = corpus(Path(folder), args.minutes)
        size_mb = sum(p.stat().st_size for p in (Path(folder) / "audio").iterdir()) / 1e6
        times = []
        for _ in range(args.repeats):
            begin = time.perf_counter()
            checked = require_test_inputs(manifest, ["holdout"])
            times.append(time.perf_counter() - begin)
    print(f"{checked} recordings, {args.minutes} min, {size_mb:.0f} MB of WAV")
    print(f"require_test_inputs: median {statistics.median(times):.3f} s, min {min(times):.3f}, max {max(times):.3f}")
    print(f"target: under 2 s for an hour: {'met' if statistics.median(times) * 60 / args.minutes < 2 else 'NOT met'}")


if __name__ == "__main__":
    main()
