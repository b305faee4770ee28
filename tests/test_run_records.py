"""Run records tell the whole truth, on the bundled model and the shared real pt-BR clips.

A forced temperature fallback is visible per segment, per recording and in the report; one
manifest identity everywhere; a rerun counts what it reused per unit and reports both the
original measured cost and what it spent; per-arm memory does not depend on the arm order;
model load time is reported apart from the first recording.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import PTBR_DEV

from toolkit.asr.segments import ALL_FAILED, FIRST
from toolkit.core.errors import InputError
from toolkit.corpus.freeze import freeze
from toolkit.evaluate import evaluate_run
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment
from toolkit.runs.folder import RunFolder

pytestmark = [
    pytest.mark.slow,
    pytest.mark.needs_model,
    pytest.mark.skipif(not (PTBR_DEV / "lapsbm").is_dir(), reason=f"shared clips absent: {PTBR_DEV}"),
]

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
CLIPS = ("LapsBM_0385", "LapsBM_0415")
# A recognizer whose log-probability threshold no decode can meet (every average
# log-probability is negative), with the no-speech exemption off: every segment walks the
# whole temperature ladder and ends "all temperatures failed", reported at 1.0.
FORCED = """
[recognizers.whisper_base_forced]
backend = "faster-whisper"
model = "whisper-base"
label = "Whisper base, fallback forced (log_prob_threshold 0)"

[recognizers.whisper_base_forced.decoding]
"""


def _experiment(root: Path, arms: str) -> Path:
    """The demo experiment on two LapsBM clips, with a forced-fallback recognizer and the given [arms]."""
    text = DEMO.read_text(encoding="utf-8").replace(
        'manifest = "corpus/manifest.json"', f'manifest = "{root.parent / "manifest.json"}"'
    )
    decoding = text[text.index("[recognizers.whisper_base.decoding]") : text.index("# Offline only")]
    forced = decoding.split("\n", 1)[1].replace("log_prob_threshold = -1.0", "log_prob_threshold = 0.0")
    forced = forced.replace("no_speech_threshold = 0.6", "no_speech_threshold = 1.0")
    forced = forced.replace("temperature = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]", "temperature = [0.0, 1.0]")
    text = (
        text[: text.rindex("\n[arms]") + 1]
        + FORCED
        + forced
        + (
            '[components.second_forced]\nstage = "second_model"\n'
            'recognizer = "whisper_base_forced"\nmode = "replace"\n\n'
            f"[arms]\n{arms}"
        )
    )
    root.mkdir(parents=True)
    (root / "experiment.toml").write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("records")
    with open(root / "splits.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "split"])
        for clip in sorted(p.stem for p in (PTBR_DEV / "lapsbm").glob("*.wav")):
            writer.writerow([clip, "tuning" if clip in CLIPS else "holdout"])
    freeze(PTBR_DEV / "lapsbm", PTBR_DEV / "lapsbm", root / "manifest.json", splits_csv=root / "splits.csv")
    return root


@pytest.fixture(scope="module")
def forward(corpus: Path):
    """baseline, then the other-model arm, then the forced-fallback arm; scored."""
    folder = _experiment(
        corpus / "forward", 'baseline = []\nsecond_model = ["second_replace"]\nforced = ["second_forced"]\n'
    )
    summary = run_experiment(load_experiment(folder), "tuning", progress=False)
    return folder, summary, evaluate_run(summary.folder)


def test_forced_fallback_is_visible_in_output_record_and_report(forward) -> None:
    _, summary, evaluation = forward
    for clip in CLIPS:
        forced = summary.folder.read_arm_output("forced", clip)
        assert forced.segments and all(s["temperature"] == 1.0 and s["outcome"] == ALL_FAILED for s in forced.segments)
        assert all(
            None not in (s["start"], s["end"])
            and s["avg_logprob"] < 0
            and 0 <= s["no_speech_prob"] <= 1
            and s["compression_ratio"] > 0
            for s in forced.segments
        )
        assert {w.segment_id.split("/")[1] for w in forced.words if w.segment_id} <= {
            s["segment_id"].split("/")[1] for s in forced.segments
        }
        baseline = summary.folder.read_arm_output("baseline", clip)
        assert baseline.segments and all(s["outcome"] == FIRST and s["temperature"] == 0.0 for s in baseline.segments)
    rows = {(r.arm, r.recording): r for r in summary.folder.read_record().measurements}
    assert all(rows["forced", c].fallback_share == 1.0 and rows["forced", c].fallback_dominated for c in CLIPS)
    assert rows["forced", CLIPS[0]].temperatures == "1.0: 100%"
    assert all(rows["baseline", c].fallback_share == 0.0 for c in CLIPS)
    report = evaluation.report_markdown.read_text(encoding="utf-8")
    assert "| forced | " in report and "fallback dominated" in report
    fallback_section = report.split("## Temperature fallback")[1].split("\n## ")[0]
    assert all(f"| forced | {c} |" in fallback_section for c in CLIPS)
    assert f"| baseline | {CLIPS[0]} |" not in fallback_section  # only flagged recordings are listed


def test_one_manifest_identity_in_freeze_run_record_report_and_verify(corpus, forward) -> None:
    from toolkit.corpus.manifest import load_manifest

    _, summary, evaluation = forward
    identity = load_manifest(corpus / "manifest.json").sha256
    assert summary.folder.read_record().manifest.sha256 == identity
    assert identity in evaluation.report_markdown.read_text(encoding="utf-8")
    ablate = [sys.executable, "-m", "toolkit", "manifest"]
    verify = subprocess.run(
        [*ablate, "verify", str(corpus / "manifest.json")], capture_output=True, text=True, check=True
    )
    assert f"(manifest sha256 {identity})" in verify.stdout
    refrozen = subprocess.run(
        [
            *ablate,
            "freeze",
            str(PTBR_DEV / "lapsbm"),
            "--refs",
            str(PTBR_DEV / "lapsbm"),
            "--out",
            str(corpus / "again.json"),
            "--splits",
            str(corpus / "splits.csv"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"(manifest sha256 {identity})" in refrozen.stdout
    # Scoring a run against a manifest that is no longer the one it ran on is refused.
    record = summary.folder.read_record().to_json()
    manifest_path = summary.folder.read_record().manifest_path(summary.folder.root)
    record["manifest"] = {"path": str(manifest_path), "sha256": "0" * 64}
    stale = RunFolder(corpus / "stale-run")
    stale.root.mkdir()
    stale.record.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(InputError, match=f"manifest sha256 is {identity}, but the run"):
        evaluate_run(stale)


def test_rerun_counts_reuse_per_unit_and_reports_both_costs(forward) -> None:
    folder, first, _ = forward
    assert first.units["decode"] == {"computed": 2 * len(CLIPS) + len(CLIPS), "reused": 0}
    rerun = run_experiment(load_experiment(folder), "tuning", progress=False)
    assert (rerun.computed, rerun.reused) == (0, 3 * len(CLIPS))
    assert rerun.this_run.wall_s < 0.2 * first.this_run.wall_s
    assert rerun.measured.wall_s == pytest.approx(first.measured.wall_s, abs=0.01)
    record = rerun.folder.read_record().to_json()
    assert record["reuse"]["arm_results"] == {"computed": 0, "reused": 3 * len(CLIPS)}
    assert all(
        r["result"] == "reused" and r["this_run_wall_s"] == 0 and r["wall_s"] > 0 for r in record["measurements"]
    )
    assert record["recognizer_loads"] == {}  # nothing decoded: no model loaded

    # Results gone, cache kept: every decode comes from the cache, and the record says so.
    for output in rerun.folder.root.glob("outputs/*/*.json"):
        output.unlink()
    rebuilt = run_experiment(load_experiment(folder), "tuning", progress=False)
    assert (rebuilt.computed, rebuilt.reused) == (3 * len(CLIPS), 0)
    assert rebuilt.units["decode"] == {"computed": 0, "reused": 3 * len(CLIPS)}
    assert rebuilt.this_run.wall_s < 0.2 * rebuilt.measured.wall_s
    rows = rebuilt.folder.read_record().measurements
    assert all(r.result == "computed" and r.units_computed == 0 and r.units_reused == 1 for r in rows)
    assert "0 arm results computed" not in rebuilt.describe() and "decode 0 computed/6 reused" in rebuilt.describe()


def test_per_arm_memory_does_not_depend_on_arm_order_and_load_is_reported_apart(corpus) -> None:
    """Every kind of stage (enhancement, VAD, two recognizers) in one order and the reverse, each
    order in its own folder and cache, so every unit is computed in both."""
    arms = ["baseline = []", 'enhance = ["gtcrn"]', 'vad = ["vad"]', 'second_model = ["second_replace"]']
    runs = [
        run_experiment(load_experiment(_experiment(corpus / name, "\n".join(order) + "\n")), "tuning", progress=False)
        for name, order in (("in-order", arms), ("reversed", arms[::-1]))
    ]
    before, after = (
        {(r.arm, r.recording): r.peak_rss_mb for r in run.folder.read_record().measurements} for run in runs
    )
    assert before.keys() == after.keys() and len(before) == 4 * len(CLIPS)
    for key, peak in before.items():
        # Only allocator history differs (the primary's worker also decodes the VAD and enhanced
        # arms' units, in another order): measured up to ~20%. Sharing a process with a second
        # model, as before the workers, adds at least half again (see the two-model bound below).
        assert peak == pytest.approx(after[key], rel=0.3), key
    record = runs[1].folder.read_record().to_json()
    loads = {
        **{f"recognizer {name}": load for name, load in record["recognizer_loads"].items()},
        **record["stage_loads"],
    }
    assert set(loads) == {"recognizer whisper_base", "recognizer whisper_base_greedy", "enhance gtcrn", "vad vad"}
    assert all(
        0 < load["wall_s"] <= load["ready_wall_s"]
        and load["rss_after_load_mb"] > 0
        and load["worker_peak_rss_mb"] >= 0.9 * load["rss_after_load_mb"]
        for load in loads.values()
    )
    # The largest figure is the largest worker's own peak: the same mark, every model's load included.
    assert max(after.values()) == pytest.approx(max(load["worker_peak_rss_mb"] for load in loads.values()), abs=0.1)
    # No figure holds two models: each stays below the two smallest workers together.
    two_models = sum(sorted(load["rss_after_load_mb"] for load in loads.values())[:2])
    assert max(before.values()) < two_models


def test_an_arms_memory_holds_the_workers_that_held_its_models(corpus) -> None:
    """The windows arm alone in its run (its recognizer and its Silero pass in their own workers): every
    recording's figure includes both models' loads, and the largest is no lower than either worker's own peak,
    measured the same way (the arms' figures compare with the workers' and with each other)."""
    folder = _experiment(corpus / "windows-alone", 'windows = ["windows", "onset_repair"]\n')
    record = run_experiment(load_experiment(folder), "tuning", progress=False).folder.read_record().to_json()
    loads = [*record["recognizer_loads"].values(), *record["stage_loads"].values()]
    figures = [row["peak_rss_mb"] for row in record["measurements"]]
    assert len(loads) == 2 and len(figures) == len(CLIPS)
    assert min(figures) >= max(load["rss_after_load_mb"] for load in loads) - 0.1
    assert all(max(figures) >= load["worker_peak_rss_mb"] - 0.1 for load in loads)


def test_arms_that_share_a_decode_name_it_by_one_key_and_the_plan_counts_it_once(corpus) -> None:
    """The onset repair arm re-times the baseline's own decode: both outputs name that decode by the same
    cache key, and the all-arms plan pays it once (the sum of the two arms' RTFs would pay it twice)."""
    from toolkit.pipeline.planner import Resources, make_plan

    folder = _experiment(corpus / "shared", 'baseline = []\nonset_repair = ["onset_repair"]\n')
    run = run_experiment(load_experiment(folder), "tuning", progress=False).folder
    for clip in CLIPS:
        base, repaired = (
            json.loads(run.arm_output(arm, clip).read_text())["work"] for arm in ("baseline", "onset_repair")
        )
        assert [u["kind"] for u in base.values()] == ["decode"]
        assert set(base) < set(repaired) and sorted(u["kind"] for u in repaired.values()) == ["decode", "vad"]
    plan = make_plan(run.root, hours=10, resources=Resources(nodes=1, cores=2))
    baseline, onset_repair = plan.arms
    assert plan.shared_counted_once and "counts once" in plan.table()
    assert baseline.rtf < plan.together.rtf < baseline.rtf + onset_repair.rtf
    # An output from before units of work were recorded: the plan falls back to the sum, and says so.
    stored = json.loads(run.arm_output("onset_repair", CLIPS[0]).read_text())
    del stored["work"]
    run.arm_output("onset_repair", CLIPS[0]).write_text(json.dumps(stored))
    older = make_plan(run.root, hours=10, resources=Resources(nodes=1, cores=2))
    assert not older.shared_counted_once and "an upper bound" in older.table()
    assert older.together.rtf == pytest.approx(baseline.rtf + onset_repair.rtf)


def test_score_on_a_run_ctm_names_its_arm_and_no_negative_zero_in_the_report(corpus, forward) -> None:
    from toolkit.report.tables import pct as _pct
    from toolkit.report.tables import signed_points as _signed

    _, summary, evaluation = forward
    ctm = summary.folder.hypothesis_ctm("forced", CLIPS[0])
    reference = PTBR_DEV / "lapsbm" / f"{CLIPS[0]}.txt"
    scored = subprocess.run(
        [sys.executable, "-m", "toolkit", "score", "--ref", str(reference), "--hyp", str(ctm), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"arm": "forced"' in scored.stdout
    text = subprocess.run(
        [sys.executable, "-m", "toolkit", "score", "--ref", str(reference), "--hyp", str(ctm)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert text.stdout.startswith(f"recording {CLIPS[0]}  arm forced  ")
    assert (_pct(-0.0), _pct(-0.0004), _signed(-0.0004), _signed(0.0123)) == ("0.0%", "0.0%", "+0.0", "+1.2")
    report = evaluation.report_markdown.read_text(encoding="utf-8")
    assert not re.search(r"[-−]0\.0(?!\d)", report)
