"""The gates' error rates on the shared long-form audiobook: A/A false PROMOTE, and power against holdout size.

Builds the five chapters of ``ptbr-longform`` (40.7 min of one narrator, one recording per chapter,
written-text references) as the tuning split of the demo experiment with its baseline and +VAD arms, runs
it, and calibrates the template gates for +VAD (toolkit.protocol.calibration; the gates that need timed
references or a speech tier declared not applicable, as a study with written text must) at holdouts of 2
to 5 recordings of the chapters' mean length: the false-PROMOTE rate with its exact upper bound and the
gates that stopped the A/A pairs, the probability of PROMOTE for planted gains of 0.5, 1 and 2 points, the
power formula's minimum detectable effect beside them, and the calibration's own cost, cold (its dithered
re-decodes of the baseline included) and with every decode cached; then the same with the WER gate alone,
to see what the other gates cost. ``--plot FILE`` draws the power curves.
Run: ``.venv/bin/python benchmarks/bench_calibration.py [--resamples 200] [--plot docs/img/calibration-power.png]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dense import build_corpus, chapters, write_experiment  # noqa: E402
from machine import describe  # noqa: E402
from shared_data import PTBR_LONGFORM  # noqa: E402

SIZES = (2, 3, 4, 5)
NOT_APPLICABLE = {
    "onset_p95_s": "written-text references have no word times",
    "drift_s_per_min": "written-text references have no word times",
    "vad_speech_recall": "written-text references have no speech tier",
}


WER_ONLY = "only the WER gate, to see its own power"


def gates_file(path: Path, wer_only: bool = False) -> Path:
    """The template with the gates written text cannot measure declared not applicable, with the reason (with
    ``wer_only``, every gate but the WER gate)."""
    from toolkit.protocol.gates_file import SPECS, TEMPLATE, WER_GATE

    text = TEMPLATE.read_text(encoding="utf-8")
    skipped = dict(NOT_APPLICABLE)
    if wer_only:
        skipped |= {spec.name: WER_ONLY for spec in SPECS if spec.name != WER_GATE and spec.name not in skipped}
    for name, reason in skipped.items():
        start = text.index(f"[{name}]")
        end = text.find("\n[", start + 1)
        end = len(text) if end < 0 else end  # the last table runs to the end
        text = text[:start] + f'[{name}]\napplicable = false\nreason = "{reason}"\n' + text[end:]
    path.write_text(text, encoding="utf-8")
    return path


def measure(root: Path, resamples: int) -> dict[str, Any]:
    """The tuning run, then a calibration per holdout size (the first one cold)."""
    from toolkit.core.json_records import record_to_json
    from toolkit.evaluate import evaluate_run
    from toolkit.pipeline.engine import run_experiment
    from toolkit.pipeline.experiment import load_experiment
    from toolkit.protocol.calibration import calibrate
    from toolkit.protocol.gates_file import load_gates

    experiment = load_experiment(root)
    summary = run_experiment(experiment, "tuning", progress=False)
    evaluate_run(summary.folder, experiment.score_options())
    figures: dict[str, Any] = {}
    for label, wer_only in (("template", False), ("WER gate alone", True)):
        gates = load_gates(gates_file(root / f"gates-{'wer' if wer_only else 'template'}.toml", wer_only))
        figures[label] = {"sizes": {}}
        for size in SIZES:
            wall0, cpu0 = time.perf_counter(), time.process_time()
            calibration = calibrate(experiment, "vad", gates, resamples=resamples, holdout_recordings=size)
            data = record_to_json(calibration)
            data["measured_cost"] = {
                "wall_s": round(time.perf_counter() - wall0, 1),
                "cpu_s": round(time.process_time() - cpu0, 1),
            }
            figures[label]["sizes"][size] = data
    return figures


def print_table(figures: dict[str, Any], minutes_per_recording: float) -> None:
    print(
        f"{'holdout':>16} {'A/A promoted':>13} {'rate':>6} {'upper95':>8} {'0.5 pt':>7} {'1 pt':>6} {'2 pt':>6} "
        f"{'MDE (formula)':>13} {'cost s':>7}  A/A failures by gate"
    )
    for size, data in figures["sizes"].items():
        power = {g["effect_points"]: g["probability"] for g in data["power"]}
        mde = data["minimum_detectable_effect_points"]
        failing = ", ".join(f"{n} {v:.0%}" for n, v in sorted(data["gate_failures"].items(), key=lambda x: -x[1]) if v)
        shown = {e: "-" if p is None else f"{p:.0%}" for e, p in power.items()}
        holdout = f"{size:>3} rec, {size * minutes_per_recording:>4.0f} min"
        promoted = f"{data['false_promotes']:>6}/{data['aa_trials']:<6}"
        rates = f"{data['false_promote_rate']:>6.1%} {data['false_promote_upper95']:>8.1%}"
        gains = f"{shown[0.5]:>7} {shown[1.0]:>6} {shown[2.0]:>6}"
        formula = "-" if mde is None else f"{mde:.2f}"
        print(f"{holdout} {promoted} {rates} {gains} {formula:>13} {data['measured_cost']['wall_s']:>7}  {failing}")


def plot(figures: dict[str, Any], minutes_per_recording: float, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, (label, series) in zip(axes, figures.items(), strict=True):
        sizes = list(series["sizes"])
        minutes = [s * minutes_per_recording for s in sizes]
        for effect in (0.5, 1.0, 2.0):
            values = [
                next(g["probability"] for g in d["power"] if g["effect_points"] == effect)
                for d in series["sizes"].values()
            ]
            ax.plot(minutes, [100 * (v or 0) for v in values], marker="o", label=f"planted gain {effect:g} points")
        rates = [100 * d["false_promote_rate"] for d in series["sizes"].values()]
        ax.plot(minutes, rates, marker="s", linestyle="--", color="black", label="A/A (no gain): false PROMOTE")
        ax.axhline(5, color="grey", linewidth=0.8)
        ax.set_xlabel("holdout minutes (recordings of the chapters' mean length)")
        ax.set_title(f"gates: {label}", fontsize=10)
    axes[0].set_ylabel("PROMOTE, % of resampled holdouts")
    axes[0].legend(fontsize=8)
    fig.suptitle("+VAD against the baseline, shared audiobook (tuning: 5 chapters, 40.7 min)", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--isa", help="CT2_FORCE_CPU_ISA for the decodes")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "ptbr-ablate" / "bench-calibration")
    parser.add_argument("--plot", type=Path, help="draw the power curves to this PNG")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--warm", action="store_true", help="keep the decodes of an earlier run (the cached cost)")
    args = parser.parse_args()
    if not PTBR_LONGFORM.is_dir():
        print(f"skipped: the shared long-form recordings are not at {PTBR_LONGFORM}")
        return
    if args.isa:
        os.environ["CT2_FORCE_CPU_ISA"] = args.isa
    named = chapters("all")
    corpus = args.work / "corpus"
    if not (corpus / "manifest.json").exists():
        shutil.rmtree(corpus, ignore_errors=True)
        build_corpus(corpus, named)
    root = args.work / f"{args.isa or 'default'}-experiment"
    if not args.warm:
        shutil.rmtree(root, ignore_errors=True)  # an empty cache: the first calibration is cold
    write_experiment(root, (corpus / "manifest.json").resolve(), ["baseline", "vad"])
    print(describe())
    figures = measure(root, args.resamples)
    first = next(iter(figures["template"]["sizes"].values()))
    minutes = first["power_plan"]["tuning"]["minutes"] / first["power_plan"]["tuning"]["recordings"]
    print(f"tuning: {len(named)} chapters, {first['power_plan']['tuning']['minutes']} min; {args.resamples} resamples")
    for label, series in figures.items():
        print(f"-- gates: {label}")
        print_table(series, minutes)
    print(
        "cost: "
        + ("every decode was cached" if args.warm else "the first calibration decoded the baseline twice under dither")
    )
    if args.plot:
        plot(figures, minutes, args.plot)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
