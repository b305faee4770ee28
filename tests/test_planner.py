"""``ablate plan``: a full run's wall time and core- (GPU-) hours per arm from a tuning run's record."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.pipeline.planner import Resources, make_plan
from toolkit.runs.folder import latest_run

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"


def _load(ready_wall_s: float) -> dict[str, float]:
    """A service load as run.json holds it, the run having waited ``ready_wall_s`` for it."""
    return {
        "cpu_s": 1.0,
        "ready_wall_s": ready_wall_s,
        "rss_after_load_mb": 300.0,
        "wall_s": 1.0,
        "worker_peak_rss_mb": 400.0,
    }


def _run(folder: Path, device: str = "cpu", finished: str = "2026-12-01T10:00:00+00:00") -> Path:
    """A complete run record as ``ablate run`` writes it: two recordings of 600 s, baseline (RTF 0.05 on
    2 threads) and batched (RTF 0.03 on 2 threads), each service loading in a few seconds."""
    runtime = {"device": device, "isa": "AVX2"} if device == "cpu" else {"device": "cuda", "gpu": "NVIDIA L4"}
    decoding = {"cpu_threads": 2}
    record = {
        "status": "complete",
        "started": "2026-12-01T09:00:00+00:00",
        "finished": finished,
        "split": "tuning",
        "recordings": ["r1", "r2"],
        "manifest": {"path": "corpus/manifest.json", "sha256": "0" * 64},
        "hardware": {
            "platform": "Linux",
            "python": "3.11.7",
            "machine": "x86_64",
            "cpu": "AMD EPYC",
            "cpu_count": 2,
            "memory_gb": 23.5,
        },
        "config": {
            "experiment": "demo",
            "primary": "base",
            "recognizers": {"base": {"decoding": decoding}, "batched": {"decoding": decoding}},
            "recognizer_runtime": {"base": runtime, "batched": runtime},
            "arms": [
                {"name": "baseline", "components": []},
                {
                    "name": "batched",
                    "components": [
                        {"name": "b", "stage": "second_model", "config": {"recognizer": "batched", "mode": "replace"}}
                    ],
                },
            ],
        },
        "measurements": [
            {"arm": arm, "recording": rec, "duration_s": 600.0, "wall_s": 600.0 * rtf, "cpu_s": 1200.0 * rtf}
            for rec in ("r1", "r2")
            for arm, rtf in (("baseline", 0.05), ("batched", 0.03))
        ],
        "recognizer_loads": {"base": _load(3.0), "batched": _load(8.0)},
        "stage_loads": {},
    }
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


def test_the_plan_follows_from_the_measured_rtfs_and_loads(tmp_path: Path) -> None:
    run = _run(tmp_path / "runs" / "tuning-abc")
    plan = make_plan(run, hours=500, resources=Resources(nodes=10, cores=32))
    assert plan.recordings == 3000  # 500 h in recordings of 10 minutes, as the tuning ones
    baseline, batched = plan.arms
    assert (baseline.arm, baseline.threads, baseline.workers) == ("baseline", 2, 160)  # 10 x 32 / 2
    rounds = math.ceil(3000 / 160)
    assert baseline.wall_h == pytest.approx((3.0 + rounds * (600 * 0.05 + 2.0)) / 3600)
    assert baseline.resource_h == pytest.approx(160 * 2 * baseline.wall_h)
    assert batched.wall_h == pytest.approx((8.0 + rounds * (600 * 0.03 + 2.0)) / 3600)
    assert plan.together.rtf == pytest.approx(0.08) and plan.together.wall_h > baseline.wall_h
    assert baseline.audio_hours_per_wall_hour == pytest.approx(500 / baseline.wall_h)
    # More workers than recordings do not help: a run of 1 h (6 recordings) uses 6 workers.
    small = make_plan(run, hours=1, resources=Resources(nodes=10, cores=32))
    assert small.arms[0].workers == 6
    assert "cpu (AMD EPYC, CTranslate2 ISA AVX2)" in plan.table()


def test_gpu_plans_need_a_gpu_measurement_and_the_command_prints_one_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cpu_run = _run(tmp_path / "cpu")
    with pytest.raises(InputError, match="its RTFs say nothing about a GPU"):
        make_plan(cpu_run, hours=10, resources=Resources(gpus=4))
    gpu_run = _run(tmp_path / "gpu", device="cuda")
    plan = make_plan(gpu_run, hours=10, resources=Resources(gpus=4))
    assert plan.arms[0].workers == 4 and plan.arms[0].resource_h == pytest.approx(4 * plan.arms[0].wall_h)
    with pytest.raises(InputError, match="plan it with --gpus"):
        make_plan(gpu_run, hours=10, resources=Resources(nodes=1, cores=8))

    experiment = tmp_path / "exp"
    experiment.mkdir()
    (experiment / "experiment.toml").write_text(DEMO.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["plan", str(experiment), "--hours", "10"]) == 2
    assert "no finished tuning run here" in capsys.readouterr().err
    _run(experiment / "runs" / "tuning-old", finished="2026-11-01T10:00:00+00:00")
    newest = _run(experiment / "runs" / "tuning-new")
    assert latest_run(experiment, "tuning", complete=True).root == newest
    assert main(["plan", str(experiment), "--hours", "10", "--nodes", "2", "--cores", "8"]) == 0
    out = capsys.readouterr().out
    assert "plan: 10 h of audio in 60 recordings of 10.0 min on 2 node(s) x 8 cores" in out and "all arms" in out
    assert main(["plan", str(experiment), "--hours", "10", "--gpus", "1", "--nodes", "2"]) == 2
    assert "give one or the other" in capsys.readouterr().err


def test_a_plan_from_a_run_that_loaded_no_model_says_its_loads_count_as_zero(tmp_path: Path) -> None:
    """A tuning run whose results all came from the cache loaded nothing: the plan says so rather than plan 0 s."""
    loaded = make_plan(_run(tmp_path / "loaded"), hours=10, resources=Resources(nodes=1, cores=8))
    assert "model loads: none" not in loaded.table()
    reused = _run(tmp_path / "reused")
    record = json.loads((reused / "run.json").read_text(encoding="utf-8"))
    record["recognizer_loads"] = {}
    (reused / "run.json").write_text(json.dumps(record), encoding="utf-8")
    plan = make_plan(reused, hours=10, resources=Resources(nodes=1, cores=8))
    assert plan.loads == (0.0, 0.0)
    assert "model loads: none in that run" in plan.table()
    assert plan.arms[0].wall_h < loaded.arms[0].wall_h  # the same RTFs, without the 3 s load


def test_all_arms_start_each_model_service_once_per_worker(tmp_path: Path) -> None:
    """Two arms on the same recognizer: each arm's plan pays its load, all arms together pay it once."""
    run = _run(tmp_path / "shared")
    record = json.loads((run / "run.json").read_text(encoding="utf-8"))
    record["config"]["arms"].append({"name": "vad", "components": [{"name": "vad", "stage": "vad", "config": {}}]})
    record["measurements"] += [
        {"arm": "vad", "recording": rec, "duration_s": 600.0, "wall_s": 600.0 * 0.04, "cpu_s": 1200.0 * 0.04}
        for rec in ("r1", "r2")
    ]
    record["stage_loads"] = {"vad vad": _load(1.5)}
    (run / "run.json").write_text(json.dumps(record), encoding="utf-8")
    plan = make_plan(run, hours=1, resources=Resources(nodes=1, cores=2))  # 6 recordings, one worker
    assert plan.loads == (3.0, 8.0, 4.5)  # baseline: base; batched: batched; vad: base and the Silero pass
    rounds_s = 6 * (600 * (0.05 + 0.03 + 0.04) + 2.0)
    assert plan.together.wall_h == pytest.approx((3.0 + 8.0 + 1.5 + rounds_s) / 3600)
