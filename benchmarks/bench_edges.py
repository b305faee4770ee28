"""How far from a window's edges Whisper's word times stay trustworthy, on real pt-BR speech.

Decodes the long shared-clip recording of ``bench_seams.py`` (same ``--work`` folder, so the
recording and the decode cache are shared) in fixed-grid windows (the demo experiment's windows
with ``placement = "grid"``) at two grid origins, 0 and half a step, so turn onsets fall at every
distance from a window's start and end. For every window and every reference turn whose onset
lies in it, the window's *own* copy of the turn's first word (kept, dropped or retimed by the
seam: its times as that window decoded them) is matched by its normalized text within
``MATCH_S`` of the reference onset, and its onset error is binned by the distance from the
window's inner start edge and, separately, from its inner end edge (the recording's own start and
end are not window edges). Prints, per bin: onsets, median and p95 absolute error, how many are
off by more than 0.5 s. Run: ``.venv/bin/python benchmarks/bench_edges.py [--work DIR]``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from bench_seams import DEMO, PTBR_DEV, RECORDING, build_recording

from toolkit.corpus.freeze import freeze
from toolkit.corpus.manifest import load_manifest
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment
from toolkit.runs.arm_output_file import ArmOutputFile
from toolkit.runs.folder import RunFolder
from toolkit.scorer.normalize.same_word import word_key

BINS = (0.0, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0)
MATCH_S = 4.0


def write_experiment(root: Path) -> None:
    """The demo's recognizer and its windows on the grid, rerun at half a step."""
    text = DEMO.read_text(encoding="utf-8")
    head = text[: text.rindex("\n[arms]") + 1]
    windows = head[head.index("[components.windows]") : head.index("[components.gtcrn]")]
    grid = (
        windows[: windows.index("[components.windows.pauses]")]
        .replace('placement = "vad_pauses"', 'placement = "grid"')
        .replace("shifted_origins_s = []", "shifted_origins_s = [12.5]")
        .replace("[components.windows", "[components.windows_grid")
    )
    (root / "experiment.toml").write_text(
        head + "\n" + grid + '\n[arms]\nwindows_grid = ["windows_grid"]\n', encoding="utf-8"
    )


def window_copies(output: ArmOutputFile) -> dict[str, list[dict[str, Any]]]:
    """Each window's own words in original time: kept (retimed ones at their own times) and dropped at a seam."""
    own = {
        (r["segment_id"], r["text"], r["new_start"]): (r["start"], r["end"])
        for seam in output.seams
        for r in seam["retimed"]
    }
    copies: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for word in output.words:
        start, end = own.get((word.segment_id, word.text, word.start), (word.start, word.end))
        copies[str(word.segment_id).split("/")[0]].append({**asdict(word), "start": start, "end": end})
    for seam in output.seams:
        for dropped in seam["dropped"]:
            copies[dropped["segment_id"].split("/")[0]].append(dropped)
    return copies


def edge_samples(output: ArmOutputFile, turns: list[tuple[float, str]]) -> list[tuple[float, float, float]]:
    """(distance from inner start edge, from inner end edge, onset error) per window and turn onset in it."""
    duration = output.duration
    copies = window_copies(output)
    samples = []
    for unit in output.units:
        start, end = unit["original_start"], unit["original_end"]
        words = [w for w in copies.get(unit["unit"], []) if w["start"] is not None]
        for onset, key in turns:
            if not start <= onset < end:
                continue
            found = [w["start"] for w in words if word_key(w["text"]) == key and abs(w["start"] - onset) <= MATCH_S]
            if not found:
                continue
            hyp = min(found, key=lambda t: abs(t - onset))
            samples.append(
                (onset - start if start > 0 else np.inf, end - onset if end < duration else np.inf, hyp - onset)
            )
    return samples


def profile(samples: list[tuple[float, float, float]]) -> dict[str, list[dict[str, Any]]]:
    """Binned |onset error| by distance from the start edge and from the end edge."""
    out = {}
    for name, column in (("from_start_edge", 0), ("from_end_edge", 1)):
        distance = np.array([s[column] for s in samples])
        error = np.abs(np.array([s[2] for s in samples]))
        rows = []
        for lo, hi in zip(BINS, BINS[1:]):
            part = error[(distance >= lo) & (distance < hi)]
            rows.append(
                {
                    "distance_s": f"{lo:g}-{hi:g}",
                    "onsets": int(len(part)),
                    "abs_median_s": round(float(np.median(part)), 3) if len(part) else None,
                    "abs_p95_s": round(float(np.quantile(part, 0.95)), 3) if len(part) else None,
                    "over_0.5_s": int((part > 0.5).sum()),
                }
            )
        out[name] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=9.0, help="length of the long recording")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path.home() / ".cache" / "ptbr-ablate" / "bench-seams",
        help="where the recording, the experiment and its decode cache live (shared with bench_seams)",
    )
    args = parser.parse_args()
    if not PTBR_DEV.is_dir():
        print(f"skipped: the shared pt-BR clips are not at {PTBR_DEV} (set ABLATE_SHARED_DATA)")
        return
    corpus = args.work / "corpus"
    if not (corpus / "manifest.json").exists():
        build_recording(corpus, args.minutes)
        freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
    write_experiment(args.work)
    summary = run_experiment(load_experiment(args.work), "tuning", progress=False)
    folder: RunFolder = summary.folder
    entry = next(e for e in load_manifest(corpus / "manifest.json").recordings if e.id == RECORDING)
    turns = [(u.start, word_key(u.text.split()[0])) for u in entry.load_reference().utterances if u.text.split()]
    samples = [
        s
        for arm in ("windows_grid", "windows_grid@12.5s")
        for s in edge_samples(folder.read_arm_output(arm, RECORDING), turns)
    ]
    print(json.dumps({"window_turn_onsets": len(samples), **profile(samples)}, indent=2))


if __name__ == "__main__":
    main()
