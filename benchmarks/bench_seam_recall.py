"""Seam flag recall and window placement on real long-form read speech, measured by the attribution.

The shared long-form audiobook (``ptbr-longform``: chapters of the 1988 Constitution read by one
narrator, references the written law; read its README) is resampled to 16 kHz under ``--work``
(never into the project) and frozen as a corpus. A small experiment takes the demo's recognizer
(Whisper base, CTranslate2 int8), its windows (edges in Silero pauses) and onset repair, and runs the
baseline and the windowed arms: ``windows`` with the demo's placement (the *before*) and one arm per
pause pass of ``PAUSE_PASSES`` (the *after*: what docs/seams.md tried). Decodes
are cached under ``--work`` by audio and window, so a rerun decodes only windows that moved.

The run is scored with ``toolkit.evaluate`` (which writes ``scores/seam_recall.csv`` and
``scores/window_edges.csv``) and this prints, per windowed arm: the attributed ΔWER by cause, seam
flag recall (seams whose neighbourhood holds a regression the attribution calls "seam", and how many
of them were marked for review), the flag precision, and where the window edges fell (pause, grid,
recording edge) with the reason of every fallback. The CPU and CTranslate2's instruction set are named.
Run by hand: ``.venv/bin/python benchmarks/bench_seam_recall.py [--chapters N] [--work DIR] [--json F]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from shared_data import PTBR_LONGFORM  # noqa: E402

from toolkit.corpus.freeze import freeze  # noqa: E402
from toolkit.evaluate import evaluate_run  # noqa: E402
from toolkit.explain import explain_arms  # noqa: E402
from toolkit.explain.seam_recall import flag_recall  # noqa: E402
from toolkit.pipeline.engine import run_experiment  # noqa: E402
from toolkit.pipeline.experiment import load_experiment  # noqa: E402
from toolkit.pipeline.stages import WINDOWS  # noqa: E402
from toolkit.pipeline.vad_profiles import profile_table  # noqa: E402
from toolkit.runs.window_edges import window_edges  # noqa: E402
from toolkit.scorer.metrics.seam_flags import flag_precision  # noqa: E402

DEMO = ROOT / "experiments" / "demo" / "experiment.toml"
# The first three are the held-out chapters of bench_normalization.py (33.2 min); all five are 40.7 min.
CHAPTERS = (
    "Titulo 7 Art 170 ao 181",
    "Titulo 2 Art 06 ao 11",
    "Titulo 8 Art 196 ao 200",
    "Titulo 1 Art 01 ao 04",
    "Titulo 3 Art 25 ao 28",
)
# Pause passes tried after docs/seams.md's analysis, each an arm of its own: the same windows, a Silero pass
# for placement that pads less speech onto each side of a pause (the demo's pads 0.2 s, so a pause of
# dense read speech loses 0.4 s or vanishes), and the shortest pause it may use. Per arm: the pause table's
# min_pause_s and the demo's Silero profile with these fields changed (a profile of the arm's name).
PAUSE_PASSES: dict[str, tuple[float, dict[str, int]]] = {
    "windows_pauses": (0.15, {"min_silence_duration_ms": 100, "speech_pad_ms": 30}),
    "windows_pad100": (0.2, {"min_silence_duration_ms": 200, "speech_pad_ms": 100}),
}
ARMS = '[arms]\nbaseline = []\nwindows = ["windows", "onset_repair"]\n' + "".join(
    f'{name} = ["{name}", "onset_repair"]\n' for name in PAUSE_PASSES
)


def build_corpus(corpus: Path, chapters: tuple[str, ...]) -> None:
    """16 kHz mono WAVs (ffmpeg) and the written references, frozen as one tuning split."""
    source = PTBR_LONGFORM
    (corpus / "audio").mkdir(parents=True, exist_ok=True)
    (corpus / "refs").mkdir(parents=True, exist_ok=True)
    rows = ["id,split"]
    for chapter in chapters:
        rid = chapter.lower().replace(" ", "-")
        wav = corpus / "audio" / f"{rid}.wav"
        if not wav.exists():
            subprocess.run(
                ["ffmpeg", "-v", "error", "-y", "-i", str(source / "audio" / f"{chapter}.ogg"), "-ar", "16000"]
                + ["-ac", "1", "-sample_fmt", "s16", str(wav)],
                check=True,
            )
        text = (source / "refs" / f"{chapter}.txt").read_text(encoding="utf-8")
        (corpus / "refs" / f"{rid}.txt").write_text(text, encoding="utf-8")
        rows.append(f"{rid},tuning")
    (corpus / "splits.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")


def write_experiment(root: Path) -> None:
    """The demo's recognizer, windows and onset repair; the windows again with each of ``PAUSE_PASSES`` (the
    onset repair keeps its own pause pass)."""
    text = DEMO.read_text(encoding="utf-8")
    head = text[: text.rindex("\n[arms]") + 1]
    windows = head[head.index("[components.windows]") : head.index("# Onset repair (toolkit/pipeline/onset_repair.py)")]
    pauses = WINDOWS.own(load_experiment(DEMO).components["windows"].config).pauses
    assert pauses is not None, "the demo's windows move their edges into pauses"
    silero = pauses.vad
    variants = []
    for name, (min_pause_s, settings) in PAUSE_PASSES.items():
        variant = windows.replace("[components.windows", f"[components.{name}")
        line = next(line for line in variant.splitlines() if line.startswith("min_pause_s = "))
        variant = variant.replace(line, f"min_pause_s = {min_pause_s}", 1)
        variant = variant.replace('vad_profile = "demo"', f'vad_profile = "{name}"')
        variants.append(
            variant
            + "\n"
            + profile_table(
                name,
                replace(
                    silero,
                    min_silence_duration_ms=settings["min_silence_duration_ms"],
                    speech_pad_ms=settings["speech_pad_ms"],
                ),
            )
        )
    (root / "experiment.toml").write_text(head + "\n" + "\n".join(variants) + "\n" + ARMS, encoding="utf-8")


def analyse(evaluation: Any) -> dict[str, Any]:
    """Per windowed arm: ΔWER by cause, flag recall and precision, window edges and fallback reasons."""
    explanations = explain_arms(evaluation)
    recall = flag_recall(evaluation.seams, explanations, evaluation.options.seam_margin_s)
    precision = flag_precision(evaluation.seams, evaluation.scores)
    edges = window_edges(evaluation.outputs, evaluation.record.config.arms_with("windows"))
    figures: dict[str, Any] = {}
    for arm, explanation in explanations.items():
        figures[arm] = {
            "delta_wer_points": explanation.to_json()["delta_wer_points"],
            "causes": {c: v for c, v in explanation.to_json()["causes"].items() if v["regressions"] or v["fixes"]},
            "flag_recall": recall.summary[recall.summary["arm"] == arm].to_dict(orient="records"),
            "flag_precision": precision[precision["arm"] == arm].to_dict(orient="records"),
            "window_edges": edges.totals(arm),
            "missed_seams": recall.missed(arm).to_dict(orient="records"),
        }
    return figures


def machine(evaluation: Any) -> str:
    """The CPU's model name and what CTranslate2 ran on it (instruction set, int8 GEMM), as the run recorded it."""
    lines = Path("/proc/cpuinfo").read_text().splitlines()
    model = next((line.split(":", 1)[1].strip() for line in lines if "model name" in line), "unknown CPU")
    runtime: dict[str, Any] = next(iter(evaluation.record.config.recognizer_runtime.values()), {}) or {}
    return (
        f"{model}; CTranslate2 ISA {runtime.get('isa')}, int8 GEMM {runtime.get('gemm_s8')}, "
        f"compute type {runtime.get('compute_type')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", type=int, default=3, help="how many chapters (3: 33.2 min; 5: 40.7 min)")
    parser.add_argument("--work", type=Path, help="corpus, experiment and caches (default ~/.cache/ptbr-ablate/...)")
    parser.add_argument("--arms", nargs="*", help="run only these arms (default: every arm of ARMS)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not (PTBR_LONGFORM / "audio").is_dir():
        print(f"skipped: the shared long-form audiobook is not at {PTBR_LONGFORM} (set ABLATE_SHARED_DATA)")
        return
    root = args.work or Path.home() / ".cache" / "ptbr-ablate" / f"bench-seam-recall-{args.chapters}"
    corpus = root / "corpus"
    if not (corpus / "manifest.json").exists():
        build_corpus(corpus, CHAPTERS[: args.chapters])
    write_experiment(root)
    experiment = load_experiment(root)
    summary = run_experiment(experiment, "tuning", arm_names=args.arms, progress=True)
    evaluation = evaluate_run(summary.folder)
    figures = {"machine": machine(evaluation), "run": str(summary.folder), "arms": analyse(evaluation)}
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
