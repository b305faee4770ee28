"""+VAD and batched decoding against the baseline on dense real read speech, under a chosen instruction set.

The developers' bench recording (bench_vad_batched.py) joins clips with pauses of 0.8 to 5 s, so a tenth of it
is non-speech that +VAD leaves out and that batched chunks never decode. A user's dense read speech has almost
none, which is why their +VAD cost more than the baseline and batched gained little. This benchmark runs
chapters of the shared audiobook (``ptbr-longform``, found by tests/shared_data.py; written-text references: a
WER floor that is not the recognizer's, equal for every arm; one recording per chapter) from an empty cache
with the demo's arms and the variants that close the gap (``VARIANTS``), and prints per arm RTF (decode and
VAD wall time over audio time, measured in the workers), CPU time against the baseline, the RTF over the
encoder-only floor measured in the same repeat (benchmarks/encoder_floor.py), the largest peak resident memory
of the arm's units, decode units, chunk tails decoded again, the windows encoded and tokens decoded (counted
at the model: unlike times, they do not move with the machine's load) and WER (micro-averaged over the
chapters, with the toolkit's paired comparison against the baseline: per-chapter differences and a bootstrap
interval), with the CPU model, the instruction set CTranslate2 used and the machine's load.
``--isa AVX512`` (or AVX2, AVX, GENERIC) sets ``CT2_FORCE_CPU_ISA`` for the run.
Run: ``.venv/bin/python benchmarks/bench_dense.py [--chapter "Titulo 8 Art 196 ao 200"[,...] | --chapter all]
[--isa AVX512]
[--arms baseline,vad,vad_merged,batched] [--repeats 1] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_variants import DEMO, MERGED_APART, demo_head, table, with_values  # noqa: E402
from encoder_floor import encoder_floor_rtf  # noqa: E402
from machine import cpu_model  # noqa: E402
from shared_data import PTBR_LONGFORM  # noqa: E402

if TYPE_CHECKING:
    from toolkit.runs.arm_output_file import ArmOutputFile

LONGFORM = PTBR_LONGFORM
# Silero's longest region before it cuts at the longest silence inside: 30 s before (the ``_30``
# variants), 10 s in the demo now. On dense speech 30 s leaves regions of 15 to 30 s that cannot be
# joined, so units and chunks hold well under 30 s and each still costs a whole 30 s Whisper window.
OLD_REGION_S = 30.0
# +VAD units of up to this long are decoded sequentially over several windows, as the baseline is:
# fewer unit ends, each of which Whisper tends to decode twice (docs/speed.md).
LONG_UNIT_S = 120.0
LONG_UNITS = {"merge_max_s": f"{LONG_UNIT_S}", "merge_max_gap_s": f"{LONG_UNIT_S}"}
# Variant -> (label, the arm's components). The tables come from the demo file with these changes.
VARIANTS: dict[str, tuple[str, str]] = {
    "baseline": ("baseline (sequential long-form)", "[]"),
    "vad": ("+VAD regions joined into one stream (the demo)", '["vad"]'),
    "vad_merged": ("+VAD merged 30 s, units apart (demo before)", '["vad_merged"]'),
    "vad_30": ("+VAD merged 30 s apart, regions <= 30 s (before)", '["vad_30"]'),
    "vad_long": (f"+VAD merged {LONG_UNIT_S:g} s apart, regions <= 10 s", '["vad_long"]'),
    "vad_joined": ("+VAD merged 30 s, units joined into one stream", '["vad_joined"]'),
    "vad_onepass": ("+VAD merged 30 s apart, each unit one window", '["vad_merged", "onepass"]'),
    "batched_30": ("batched, Silero regions <= 30 s (before)", '["batched_30"]'),
    "batched": ("batched (the demo: regions <= 10 s, batch 8, beam 5)", '["batched"]'),
    "batched_b4": ("batched, batch 4", '["batched_b4"]'),
    "batched_beam2": ("batched, beam 2", '["batched_beam2"]'),
    "batched_greedy": ("batched, greedy (beam 1)", '["batched_greedy"]'),
    "batched_notail": ("batched, no tail re-decode", '["batched_notail"]'),
}
# The decoding work each sequential decode counts at the model: equal for one instruction set on any load.
WORK_COUNTS = ("windows_encoded", "decode_attempts", "tokens_decoded")
# The demo's Silero profile with regions of at most OLD_REGION_S (vad_30 and batched_30 name it).
REGIONS_30 = "regions_30"
CHANGES: dict[str, dict[str, str]] = {
    "batched_30": {"vad_profile": f'"{REGIONS_30}"'},
    "batched_b4": {"batch_size": "4"},
    "batched_beam2": {"beam_size": "2", "best_of": "2"},
    "batched_greedy": {"beam_size": "1", "best_of": "1"},
    "batched_notail": {"tail_redecode_gap_s": "0.0"},
}


def chapters(named: str) -> list[str]:
    """The chapters ``named`` (comma-separated stems, or ``all``), each checked to exist."""
    found = sorted(p.stem for p in (LONGFORM / "audio").glob("*.ogg"))
    wanted = found if named == "all" else named.split(",")
    for chapter in wanted:
        if chapter not in found:
            raise SystemExit(f"no chapter {chapter!r} in {LONGFORM / 'audio'}; chapters: {', '.join(found)}")
    return wanted


def build_corpus(corpus: Path, chapters: list[str]) -> list[str]:
    """Each chapter as 16 kHz mono WAV beside its reference text, frozen as the tuning split; their ids."""
    from toolkit.corpus.freeze import freeze

    (corpus / "audio").mkdir(parents=True)
    (corpus / "refs").mkdir()
    recordings = [_add_chapter(corpus, chapter) for chapter in chapters]
    (corpus / "splits.csv").write_text("id,split\n" + "".join(f"{r},tuning\n" for r in recordings), encoding="utf-8")
    freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
    return recordings


def _add_chapter(corpus: Path, chapter: str) -> str:
    recording = "longform-" + "-".join(chapter.lower().split())
    subprocess.run(
        [
            "ffmpeg",
            "-loglevel",
            "error",
            "-i",
            str(LONGFORM / "audio" / f"{chapter}.ogg"),
            "-ar",
            "16000",
            "-ac",
            "1",
            "-sample_fmt",
            "s16",
            str(corpus / "audio" / f"{recording}.wav"),
        ],
        check=True,
    )
    shutil.copy(LONGFORM / "refs" / f"{chapter}.txt", corpus / "refs" / f"{recording}.txt")
    return recording


def write_experiment(root: Path, manifest: Path, arms: list[str]) -> None:
    """The demo experiment with the variants' components and recognizers added, and the chosen arms."""
    head = demo_head(manifest)
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.pipeline.stages import VAD
    from toolkit.pipeline.vad_profiles import profile_table

    vad = table(head, "[components.vad]")
    silero = VAD.own(load_experiment(DEMO).components["vad"].config).silero()
    extra = [
        profile_table(REGIONS_30, replace(silero, max_speech_duration_s=OLD_REGION_S)),
        with_values(vad, {"vad_profile": f'"{REGIONS_30}"', **MERGED_APART}, "vad_30"),
        with_values(vad, MERGED_APART, "vad_merged"),
        with_values(
            vad, {**MERGED_APART, "merge_max_s": f"{LONG_UNIT_S}", "merge_max_gap_s": f"{LONG_UNIT_S}"}, "vad_long"
        ),
        with_values(vad, {**MERGED_APART, "join_units": "true"}, "vad_joined"),
    ]
    primary = table(head, "[recognizers.whisper_base]")
    extra.append(with_values(primary.replace("whisper_base", "whisper_onepass"), {"without_timestamps": "true"}))
    extra.append('[components.onepass]\nstage = "second_model"\nrecognizer = "whisper_onepass"\nmode = "replace"\n')
    batched = table(head, "[recognizers.whisper_base_batched]")
    for name, values in CHANGES.items():
        extra.append(with_values(batched.replace("whisper_base_batched", f"whisper_{name}"), values))
        extra.append(f'[components.{name}]\nstage = "second_model"\nrecognizer = "whisper_{name}"\nmode = "replace"\n')
    body = "[arms]\n" + "".join(f"{arm} = {VARIANTS[arm][1]}\n" for arm in arms)
    root.mkdir(parents=True, exist_ok=True)
    (root / "experiment.toml").write_text(head + "\n" + "\n".join(extra) + "\n" + body, encoding="utf-8")


def measure(root: Path) -> dict[str, Any]:
    """Every arm from an empty cache: RTF, CPU, units and tails over all recordings, WER (micro-averaged) and
    the paired comparison with the baseline per arm, and what CTranslate2 ran on."""
    from toolkit.evaluate import evaluate_run
    from toolkit.pipeline.engine import run_experiment
    from toolkit.pipeline.experiment import load_experiment

    summary = run_experiment(load_experiment(root), "tuning", progress=False)
    evaluation = evaluate_run(summary.folder)
    overall = evaluation.aggregate[evaluation.aggregate["stratum"] == "all"].set_index("arm")
    record = summary.folder.read_record().to_json()
    figures: dict[str, Any] = {"runtime": record["config"]["recognizer_runtime"]["whisper_base"], "arms": {}}
    for arm in summary.arms:
        outputs = [summary.folder.read_arm_output(arm, recording) for recording in summary.recordings]
        duration = sum(o.duration for o in outputs)
        compared = evaluation.comparisons.get(arm)
        figures["arms"][arm] = {
            "rtf": sum(o.compute.wall_s for o in outputs) / duration,
            "cpu_rtf": sum(o.compute.cpu_s for o in outputs) / duration,
            "wer": float(overall.loc[arm, "wer"]),
            "units": sum(len(o.units) for o in outputs),
            "tails": sum(int(n.get("tails_redecoded", 0)) for o in outputs for n in o.recognizer_notes.values()),
            **{count: _work(outputs, count) for count in WORK_COUNTS},
            "duration_s": duration,
            "peak_rss_mb": max(o.compute.peak_rss_mb for o in outputs),
            "paired": None if compared is None else _paired(compared.to_json()),
        }
    return figures


def _work(outputs: list[ArmOutputFile], count: str) -> int | None:
    """One of the recognizers' decoding work counts (toolkit/asr/work_counts.py) summed over ``outputs``;
    None where a recognizer does not count it (the batched backend)."""
    found: list[Any] = [n.get(count) for o in outputs for n in o.recognizer_notes.values()]
    return None if None in found else sum(found)


def _paired(comparison: dict[str, Any]) -> dict[str, Any]:
    """The paired comparison's WER difference (points), its bootstrap interval and the per-recording differences."""
    return {
        "delta_ci_points": [round(100 * x, 2) for x in comparison["ci"]],
        "per_recording_delta_points": {
            r["recording_id"]: round(100 * r["delta"], 2) for r in comparison["per_recording"]
        },
        "warning": comparison["warning"],
    }


def report(runs: list[dict[str, Any]], isa: str | None) -> dict[str, Any]:
    arms = list(runs[0]["arms"])

    def median(arm: str, key: str, over: str | None = None) -> float:
        def under(r: dict[str, Any]) -> float:
            return r["floor"]["rtf"] if over == "floor" else r["arms"][over][key] if over else 1.0

        return statistics.median(r["arms"][arm][key] / under(r) for r in runs)

    rows = {
        arm: {
            "rtf": round(median(arm, "rtf"), 4),
            "rtf_ratios": [round(r["arms"][arm]["rtf"] / r["arms"]["baseline"]["rtf"], 3) for r in runs],
            "speedup": round(1 / median(arm, "rtf", "baseline"), 2),
            "over_floor": round(median(arm, "rtf", "floor"), 2),
            "peak_rss_mb": round(max(r["arms"][arm]["peak_rss_mb"] for r in runs)),
            "cpu_ratio": round(median(arm, "cpu_rtf", "baseline"), 3),
            "wer_pct": round(100 * runs[0]["arms"][arm]["wer"], 2),
            "wer_delta_points": round(100 * (runs[0]["arms"][arm]["wer"] - runs[0]["arms"]["baseline"]["wer"]), 2),
            "units": runs[0]["arms"][arm]["units"],
            "tails": runs[0]["arms"][arm]["tails"],
            **{count: runs[0]["arms"][arm][count] for count in WORK_COUNTS},
            "paired": runs[0]["arms"][arm]["paired"],
        }
        for arm in arms
    }
    runtime = runs[0]["runtime"]
    return {
        "cpu": cpu_model(),
        "ctranslate2": {k: runtime.get(k) for k in ("isa", "gemm_s8", "sgemm", "compute_type")},
        "forced_isa": isa,
        "recording_min": round(runs[0]["arms"]["baseline"]["duration_s"] / 60, 2),
        "recordings": runs[0]["recordings"],
        "repeats": len(runs),
        "load_average_before_after": [r["load"] for r in runs],
        "encoder_floor_rtf": [round(r["floor"]["rtf"], 4) for r in runs],
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "arms": rows,
    }


def print_table(figures: dict[str, Any]) -> None:
    ct2 = figures["ctranslate2"]
    print(
        f"{figures['recording_min']} min of dense read speech; CPU {figures['cpu']}; CTranslate2 ISA {ct2['isa']} "
        f"(forced: {figures['forced_isa'] or 'no'}), int8 GEMM {ct2['gemm_s8']}, compute {ct2['compute_type']}; "
        f"{figures['repeats']} repeat(s), load average before/after {figures['load_average_before_after']}, "
        f"{figures['measured']}"
    )
    print(f"encoder-only floor RTF per repeat: {figures['encoder_floor_rtf']} (every 30 s window encoded once)")
    print(
        f"{'arm':48} {'units':>5} {'tails':>5} {'windows':>7} {'tokens':>7} {'RTF':>7} {'RTF/base':>9} "
        f"{'speed-up':>8} {'CPU/base':>8} {'/floor':>6} {'peak MB':>7} {'WER':>7} {'ΔWER':>6}"
    )
    for arm, row in figures["arms"].items():
        print(
            f"{VARIANTS[arm][0]:48} {row['units']:>5} {row['tails']:>5} {_shown(row['windows_encoded']):>7} "
            f"{_shown(row['tokens_decoded']):>7} {row['rtf']:>7.4f} "
            f"{'/'.join(f'{x:.2f}' for x in row['rtf_ratios']):>9} {row['speedup']:>7.2f}x {row['cpu_ratio']:>8.3f} "
            f"{row['over_floor']:>6.2f} {row['peak_rss_mb']:>7} "
            f"{row['wer_pct']:>6.2f}% {row['wer_delta_points']:>+6.2f}"
        )
        if row["paired"] and len(figures["recordings"]) > 1:
            low, high = row["paired"]["delta_ci_points"]
            per = ", ".join(f"{d:+.2f}" for d in row["paired"]["per_recording_delta_points"].values())
            print(f"{'':48} ΔWER 95% bootstrap interval [{low:+.2f}, {high:+.2f}] points; per recording {per}")


def _shown(count: int | None) -> str:
    return "-" if count is None else str(count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--chapter",
        default="Titulo 8 Art 196 ao 200",
        help="audio files of ptbr-longform (stems, comma-separated) or all",
    )
    parser.add_argument("--isa", help="CT2_FORCE_CPU_ISA for this run: AVX512, AVX2, AVX or GENERIC")
    parser.add_argument("--arms", default="baseline,vad,vad_merged,batched", help=", ".join(VARIANTS))
    parser.add_argument("--repeats", type=int, default=1, help="whole runs from an empty cache")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "ptbr-ablate" / "bench-dense")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not LONGFORM.is_dir():
        print(f"skipped: the shared long-form recordings are not at {LONGFORM}")
        return
    if args.isa:
        os.environ["CT2_FORCE_CPU_ISA"] = args.isa  # read by the CPU probe and inherited by the services
    arms = args.arms.split(",")
    if arms[0] != "baseline" or any(arm not in VARIANTS for arm in arms):
        raise SystemExit(f"--arms must start with baseline and name arms of {', '.join(VARIANTS)}")
    named = chapters(args.chapter)
    corpus = args.work / ("corpus-" + ("all" if args.chapter == "all" else "-".join(args.chapter.lower().split())))
    if not (corpus / "manifest.json").exists():
        shutil.rmtree(corpus, ignore_errors=True)
        build_corpus(corpus, named)
    runs = []
    for repeat in range(args.repeats):
        root = args.work / f"{args.isa or 'default'}-repeat{repeat}"
        shutil.rmtree(root, ignore_errors=True)  # an empty cache: every arm decodes now
        write_experiment(root, (corpus / "manifest.json").resolve(), arms)
        before = round(os.getloadavg()[0], 2)
        figures = measure(root)
        figures["floor"] = encoder_floor_rtf(sorted((corpus / "audio").glob("*.wav")))
        figures["load"] = [before, round(os.getloadavg()[0], 2)]
        figures["recordings"] = named
        runs.append(figures)
    result = report(runs, args.isa)
    print_table(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
