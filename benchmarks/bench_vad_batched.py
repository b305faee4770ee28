"""+VAD cut & merge and batched decoding against the baseline on a long recording of real pt-BR speech.

Builds one recording (at most ``--minutes``; all the shared clips make 11.2 minutes) as ``bench_seams.py``
does (each clip trimmed to its speech, joined by pauses of 0.8 to 5 s) and lays it on a quiet pink-noise floor
40 dB under the speech (Whisper reads digital silence as the padding after the end of audio, and batched
decoding, which has no timestamps, then stops at the pause; rooms are never silent). Then runs, side by side
in one run from an empty cache, the demo experiment's baseline (sequential long-form), the demo's +VAD (Silero
regions joined into one stream), +VAD decoding each Silero region on its own (``merge_max_s = 0``), +VAD with
WhisperX's cut & merge (units of up to 30 s with any pause inside, as WhisperX merges), the same with a 2 s
pause limit (``merge_max_gap_s = 2``) and the batched whisperx recognizer (the same Silero regions merged by
whisperx into 30 s chunks, decoded 8 at a time, unfinished chunk tails decoded again as the demo sets
``tail_redecode_gap_s``). Prints per arm: RTF (decode and VAD wall time over audio time, measured in the
workers), the same in CPU time, the largest peak resident memory of the arm's workers, WER, the ratios to the
baseline, and the word times (p95 onset error and drift of each sentence's first word, whose onset the
recording knows exactly); then the issue's targets, met or not. Each ``--repeats`` reruns everything from an
empty cache; ratios are the median over repeats (on a shared machine absolute times drift between arms).
``--reuse`` reprints what earlier repeats measured without decoding anything.
Run: ``.venv/bin/python benchmarks/bench_vad_batched.py [--minutes 12] [--repeats 1] [--reuse]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_seams import build_recording  # noqa: E402
from demo_variants import MERGED_APART, demo_head, table, with_values  # noqa: E402
from machine import describe, machine  # noqa: E402
from shared_data import PTBR_DEV  # noqa: E402

from toolkit.corpus.freeze import freeze  # noqa: E402
from toolkit.evaluate import evaluate_run  # noqa: E402
from toolkit.pipeline.engine import run_experiment  # noqa: E402
from toolkit.pipeline.experiment import load_experiment  # noqa: E402

ARMS = (
    '[arms]\nbaseline = []\nvad_joined = ["vad_joined"]\nvad_regions = ["vad_regions"]\nvad = ["vad"]\n'
    'vad_gap2 = ["vad_gap2"]\nbatched = ["batched"]\n'
)
LABELS = {
    "baseline": "baseline (sequential long-form)",
    "vad_joined": "+VAD joined regions (the demo's)",
    "vad_regions": "+VAD per region (merge_max_s 0)",
    "vad": "+VAD merged (30 s, any pause)",
    "vad_gap2": "+VAD merged (30 s, pauses <= 2 s)",
    "batched": "batched (whisperx, batch 8)",
}


def add_noise_floor(wav: Path) -> None:
    """Pink noise 40 dB under the speech (RMS 0.1) added to the whole recording, in place."""
    import numpy as np
    import soundfile

    from toolkit.demo.sounds import pink_noise

    samples, rate = soundfile.read(wav, dtype="float32")
    noise = 0.001 * pink_noise(len(samples), rate, np.random.default_rng(5))  # unit RMS
    soundfile.write(wav, np.clip(samples + noise, -1, 1), rate, subtype="PCM_16")


def write_experiment(root: Path, manifest: Path) -> None:
    """The demo experiment with its vad component in three merge settings, units decoded apart, and the
    five arms above."""
    head = demo_head(manifest)
    vad = table(head, "[components.vad]")
    merged = with_values(vad, MERGED_APART)
    joined = with_values(vad, {}, "vad_joined")
    regions = with_values(merged, {"merge_max_s": "0.0", "merge_max_gap_s": "0.0"}, "vad_regions")
    gap2 = with_values(merged, {"merge_max_gap_s": "2.0"}, "vad_gap2")
    root.mkdir(parents=True, exist_ok=True)
    (root / "experiment.toml").write_text(
        head.replace(vad, merged) + "\n" + joined + "\n" + regions + "\n" + gap2 + "\n" + ARMS, encoding="utf-8"
    )


def measure(root: Path) -> dict[str, dict[str, Any]]:
    """Run every arm from an empty cache; RTF, peak memory and WER per arm."""
    summary = run_experiment(load_experiment(root), "tuning", progress=False)
    evaluation = evaluate_run(summary.folder)
    overall = evaluation.aggregate[evaluation.aggregate["stratum"] == "all"].set_index("arm")
    figures = {}
    for arm in summary.arms:
        output = summary.folder.read_arm_output(arm, summary.recordings[0])
        timing = evaluation.scores[arm][summary.recordings[0]].timing
        figures[arm] = {
            "rtf": output.compute.wall_s / output.duration,
            "cpu_rtf": output.compute.cpu_s / output.duration,
            "peak_rss_mb": output.compute.peak_rss_mb,
            "wer": float(overall.loc[arm, "wer"]),
            "units": len(output.units),
            "duration_s": output.duration,
            "onset_p95_s": timing.onset_abs_p95_s,
            "drift_s_per_min": timing.drift_s_per_min,
        }
    return figures


def report(runs: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Per arm: median RTF, memory and WER, ratios to the baseline; the targets, judged on the median ratios."""
    arms = list(runs[0])

    def median(arm: str, key: str, over: str | None = None) -> float:
        return statistics.median(r[arm][key] / (r[over][key] if over else 1.0) for r in runs)

    rows: dict[str, dict[str, Any]] = {
        arm: {
            "rtf": round(median(arm, "rtf"), 4),
            "rtf_ratio": round(median(arm, "rtf", "baseline"), 3),
            "speedup": round(1 / median(arm, "rtf", "baseline"), 2),
            "cpu_ratio": round(median(arm, "cpu_rtf", "baseline"), 3),
            "rtf_ratios_per_repeat": [round(r[arm]["rtf"] / r["baseline"]["rtf"], 3) for r in runs],
            "peak_rss_mb": round(median(arm, "peak_rss_mb")),
            "peak_rss_ratio": round(median(arm, "peak_rss_mb", "baseline"), 2),
            "wer_pct": round(100 * runs[0][arm]["wer"], 2),
            "wer_delta_points": round(100 * (runs[0][arm]["wer"] - runs[0]["baseline"]["wer"]), 2),
            "units": runs[0][arm]["units"],
            "onset_p95_s": runs[0][arm].get("onset_p95_s"),
            "drift_s_per_min": runs[0][arm].get("drift_s_per_min"),
        }
        for arm in arms
    }
    merged, regions, batched = rows["vad"], rows["vad_regions"], rows["batched"]
    sequential_same_chunks = statistics.median(r["vad"]["rtf"] / r["batched"]["rtf"] for r in runs)
    targets = {
        "+VAD merged no slower than baseline (RTF ratio <= 1)": merged["rtf_ratio"] <= 1.0,
        "+VAD merged WER no worse than per region": merged["wer_pct"] <= regions["wer_pct"],
        "batched >= 1.5x faster than the baseline": batched["speedup"] >= 1.5,
        "batched WER at most 1 point above the baseline": batched["wer_delta_points"] <= 1.0,
    }
    return {
        "recording_s": round(runs[0]["baseline"]["duration_s"], 1),
        "repeats": len(runs),
        "arms": rows,
        "batched_speedup_over_sequential_same_chunks": round(sequential_same_chunks, 2),
        "targets": targets,
    }


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_table(figures: dict[str, Any]) -> None:
    print(
        f"recording: {figures['recording_s'] / 60:.1f} min of real pt-BR read speech, "
        f"{figures['repeats']} repeat(s) from an empty cache; ratios are to the baseline in the same run"
    )
    print(
        f"{'arm':36} {'units':>5} {'RTF':>7} {'RTF/base':>8} {'speed-up':>8} {'CPU/base':>8} {'peak MB':>8} "
        f"{'mem/base':>8} {'WER':>6} {'ΔWER pt':>7} {'onset p95':>9} {'drift s/min':>11}"
    )
    for arm, row in figures["arms"].items():
        print(
            f"{LABELS[arm]:36} {row['units']:>5} {row['rtf']:>7.4f} {row['rtf_ratio']:>8.3f} "
            f"{row['speedup']:>7.2f}x {row['cpu_ratio']:>8.3f} {row['peak_rss_mb']:>8} {row['peak_rss_ratio']:>8.2f} "
            f"{row['wer_pct']:>5.2f}% {row['wer_delta_points']:>+7.2f} {_figure(row['onset_p95_s']):>9} "
            f"{_figure(row['drift_s_per_min']):>11}"
        )
    print(
        "RTF: decode + VAD wall time / audio time; CPU/base: the same in CPU time (less sensitive to other "
        "processes on a shared machine); peak MB: largest peak RSS among the arm's worker processes; onset p95: "
        "95th percentile of |onset error| of each sentence's first word (s), drift its slope (s per minute): a "
        "speed-up must not buy itself with word times"
    )
    print(
        f"batched against sequential decoding of the same 30 s units (vad): "
        f"{figures['batched_speedup_over_sequential_same_chunks']:.2f}x"
    )
    for target, met in figures["targets"].items():
        print(f"  {'met    ' if met else 'NOT MET'}  {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=12.0, help="length of the long recording (at least 10)")
    parser.add_argument("--repeats", type=int, default=1, help="whole runs from an empty cache")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path.home() / ".cache" / "ptbr-ablate" / "bench-vad-batched",
        help="where the recording and the experiments live (emptied caches each repeat)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep earlier repeats' caches and runs: print the figures measured then, decode nothing",
    )
    args = parser.parse_args()
    if not PTBR_DEV.is_dir():
        print(f"skipped: the shared pt-BR clips are not at {PTBR_DEV} (set ABLATE_SHARED_DATA)")
        return
    corpus = args.work / f"corpus-{args.minutes:g}min"
    if not (corpus / "manifest.json").exists():
        build_recording(corpus, args.minutes)
        add_noise_floor(next((corpus / "audio").glob("*.wav")))
        freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
    measured_on = machine()
    runs = []
    for repeat in range(args.repeats):
        root = args.work / f"repeat{repeat}"
        if not args.reuse:
            shutil.rmtree(root, ignore_errors=True)  # an empty cache: every arm decodes now
        write_experiment(root, (corpus / "manifest.json").resolve())
        runs.append(measure(root))
    figures = report(runs)
    figures["machine"] = {**measured_on, "load_average_after": round(__import__("os").getloadavg()[0], 2)}
    print(describe(measured_on))
    print_table(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
