"""Stability under inaudible dither: the dither itself (any signal, any seed) and ``ablate explain --stability``
on real pt-BR clips with the bundled Whisper base (baseline and +VAD, two reruns)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_data import PTBR_DEV, lapsbm_tuning_corpus

from toolkit.audio.dither import Dither
from toolkit.audio.signal import Signal
from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.core.json_records import record_to_json
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment
from toolkit.protocol.stability import BETTER, UNCLEAR, WORSE, measure_stability
from toolkit.runs.score_files import ArmStability, StabilityCheck

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "experiments" / "demo" / "experiment.toml"
CLIPS = ("LapsBM_0240", "LapsBM_0385")


@settings(max_examples=60, deadline=None)
@given(
    samples=st.lists(st.floats(-1, 1, width=32), min_size=0, max_size=400),
    seed=st.integers(0, 2**32 - 1),
    level=st.floats(-140, -60),
    recording=st.text(max_size=12),
)
def test_dither_is_bounded_seeded_and_keeps_time(samples: list[float], seed: int, level: float, recording: str) -> None:
    signal = Signal.original(np.array(samples, dtype=np.float32), 16000)
    dither = Dither(seed, level)
    once, again = dither.apply(signal, recording), dither.apply(signal, recording)
    noise = once.samples.astype(np.float64) - signal.samples
    assert once.samples.dtype == np.float32 and len(once.samples) == len(signal.samples)
    assert np.all(np.abs(noise) <= dither.peak * (1 + 1e-3) + 1e-7)  # float32 rounding of the sum
    assert np.array_equal(once.samples, again.samples)
    assert once.duration == signal.duration
    assert all(once.timemap(t) == signal.timemap(t) for t in (0.0, 0.5 * signal.duration, signal.duration))


def test_dither_draws_differ_by_seed_and_recording_and_are_triangular() -> None:
    signal = Signal.original(np.zeros(200_000, dtype=np.float32), 16000)
    first = Dither(1).apply(signal, "a").samples.astype(np.float64)
    assert not np.array_equal(first, Dither(2).apply(signal, "a").samples)
    assert not np.array_equal(first, Dither(1).apply(signal, "b").samples)
    peak = Dither(1).peak
    assert peak == pytest.approx(10 ** (-90 / 20))
    # TPDF: variance peak²/6, mean 0, and no value beyond the peak.
    assert np.var(first) == pytest.approx(peak**2 / 6, rel=0.03) and abs(np.mean(first)) < peak / 100


@pytest.mark.parametrize("seed, level", [(-1, -90.0), (2**32, -90.0), (1, -40.0), (1, float("nan"))])
def test_a_dither_that_is_not_inaudible_or_not_a_seed_is_refused(seed: int, level: float) -> None:
    with pytest.raises(ValueError, match="dither"):
        Dither(seed, level)


def test_an_arm_flips_when_its_direction_changes_in_any_rerun() -> None:
    steady = ArmStability.measured("vad", 0.1, (0.1, 0.11), -0.02, (-0.03, -0.02), (-0.04, -0.01), (BETTER,) * 3)
    shaky = ArmStability.measured(
        "vad", 0.1, (0.1, 0.11), -0.02, (-0.03, 0.01), (-0.04, -0.01), (BETTER, UNCLEAR, WORSE)
    )
    assert not steady.flips and shaky.flips
    assert steady.delta_spread == pytest.approx(0.01) and steady.wer_spread == pytest.approx(0.01)


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (PTBR_DEV / "lapsbm").is_dir():
        pytest.skip(f"shared clips absent: {PTBR_DEV}")
    root = tmp_path_factory.mktemp("stability")
    lapsbm_tuning_corpus(root / "corpus", CLIPS)
    text = DEMO.read_text(encoding="utf-8").replace(
        'manifest = "corpus/manifest.json"', f'manifest = "{root / "corpus" / "manifest.json"}"'
    )
    (root / "experiment.toml").write_text(text, encoding="utf-8")
    return root


@pytest.mark.slow
@pytest.mark.needs_model
def test_stability_reruns_the_split_with_recorded_dither_and_reports_spread(experiment: Path) -> None:
    exp = load_experiment(experiment)
    real = run_experiment(exp, "tuning", ["baseline", "vad"], progress=False).folder
    made_by_the_real_run = real.record.read_bytes()
    stability = measure_stability(exp, "tuning", 2, arm_names=["vad"])
    assert stability.run == real.root.name
    # The real run is only read: its record still describes the run that decoded its hypotheses.
    assert real.record.read_bytes() == made_by_the_real_run
    assert isinstance(stability.check, StabilityCheck) and stability.check.made == stability.reruns
    assert stability.check.started <= stability.check.finished and stability.check.wall_s > 0
    assert [a.arm for a in stability.arms] == ["baseline", "vad"]  # the baseline joins: ΔWER is against it
    assert stability.dither.seeds == (1, 2) and stability.dither.level_dbfs == -90.0
    runs = experiment / "runs"
    assert len(set(stability.reruns) | {stability.run}) == 3
    for seed, name in zip(stability.dither.seeds, stability.reruns, strict=True):
        record = json.loads((runs / name / "run.json").read_text(encoding="utf-8"))
        assert record["config"]["dither"]["seed"] == seed and record["config"]["dither"]["level_dbfs"] == -90.0
        assert record["computed"] == 2 * len(CLIPS) and record["reused"] == 0  # its own decodes, not the cache's
        assert (runs / name / "scores" / "aggregate.csv").is_file()
    undithered = json.loads((runs / stability.run / "run.json").read_text(encoding="utf-8"))
    assert undithered["config"].get("dither") is None
    written = json.loads((runs / stability.run / "scores" / "stability.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(record_to_json(stability)))
    vad = written["arms"][1]
    assert len(vad["rerun_wers"]) == 2 and len(vad["directions"]) == 3
    assert vad["delta_spread"] == pytest.approx(
        max(vad["delta"], *vad["rerun_deltas"]) - min(vad["delta"], *vad["rerun_deltas"])
    )
    assert vad["ci_low"] <= vad["delta"] <= vad["ci_high"]
    report = (runs / stability.run / "report.md").read_text(encoding="utf-8")
    assert "## Stability under inaudible dither" in report and "seeds 1, 2" in report
    assert f"runs it made: {', '.join(stability.reruns)}" in report


@pytest.mark.slow
@pytest.mark.needs_model
def test_a_second_stability_check_decodes_nothing_and_prints_the_table(
    experiment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = {run.name: (run / "run.json").read_bytes() for run in (experiment / "runs").iterdir()}
    assert main(["explain", str(experiment), "--stability", "2", "--arm", "vad"]) == 0
    out = capsys.readouterr().out
    assert "TPDF dither at -90 dBFS (seeds 1, 2)" in out and "directions" in out
    assert "it made no run, every one had finished before" in out
    # Every run (the real one and each rerun) is read back, so each record still describes what made it.
    assert {run.name: (run / "run.json").read_bytes() for run in (experiment / "runs").iterdir()} == records


def test_a_test_split_is_not_re_decoded_before_the_protocol_ran_it(tmp_path: Path) -> None:
    root = tmp_path
    (root / "corpus").mkdir()
    text = DEMO.read_text(encoding="utf-8")
    (root / "experiment.toml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="holdout has not been run to the end"):
        measure_stability(load_experiment(root), "holdout", 2)


@pytest.mark.parametrize("reruns", [0, 101])
def test_the_number_of_reruns_is_checked(tmp_path: Path, reruns: int) -> None:
    (tmp_path / "experiment.toml").write_text(DEMO.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(InputError, match="--stability must be between 1 and 100"):
        measure_stability(load_experiment(tmp_path), "tuning", reruns)
