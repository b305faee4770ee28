"""The holdout's power at freeze (refused when too small for its own threshold), Holm's adjustment, and the
calibration's parts: planted corrections, exact binomial bounds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from protocol_corpus import constructed_holdout, correct, make_run, needs_bundled_model, own_corpus_experiment, turns
from scipy.stats import binomtest

from toolkit.cli import main
from toolkit.evaluate import evaluate_run
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.calibration import thinned, upper_bound_95
from toolkit.protocol.challenger import freeze_challenger
from toolkit.protocol.gates_file import TEMPLATE
from toolkit.protocol.planning import planning, planning_text
from toolkit.protocol.state import ProtocolError, replay, verified_log
from toolkit.protocol.verdict import gate_verdict
from toolkit.scorer.metrics.wer import ErrorCounts
from toolkit.scorer.stats import holm_adjusted

SPLITS = {"t1": "tuning", "t2": "tuning", "t3": "tuning", "t4": "tuning", "h1": "holdout", "h2": "holdout"}
# Reference words each arm leaves out at the start of each tuning recording: the challenger removes 2, 0, 2 and
# 3 of the baseline's errors, a spread no two-recording holdout can tell from no gain.
DROPPED = {"baseline": {"t1": 3, "t2": 4, "t3": 2, "t4": 5}, "vad": {"t1": 1, "t2": 4, "t3": 0, "t4": 2}}


def _tuning_run(experiment, dropped: dict[str, dict[str, int]]) -> None:
    """A finished, scored tuning run whose arms leave out the given numbers of leading words."""
    words = correct(turns())
    hypotheses = {arm: {rid: words[n:] for rid, n in per.items()} for arm, per in dropped.items()}
    folder = make_run(
        experiment.folder / "runs" / "tuning-constructed",
        experiment.manifest_path,
        "tuning",
        hypotheses,
        experiment=experiment,
    )
    evaluate_run(folder, experiment.score_options())


@needs_bundled_model
def test_a_holdout_too_small_for_its_threshold_is_refused_unless_allowed_and_the_verdict_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    experiment = own_corpus_experiment(tmp_path / "exp", SPLITS)
    _tuning_run(experiment, DROPPED)
    # Before any freeze, the plan answers the same question, for the gates' threshold or any effect.
    assert main(["plan", str(experiment.folder), "--power", "--arm", "vad", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["estimated"] and planned["threshold_points"] == 0.5 and planned["detects_threshold"] is False
    assert main(["plan", str(experiment.folder), "--power", "--arm", "vad", "--effect", "50", "--json"]) == 0
    wide = json.loads(capsys.readouterr().out)
    assert wide["threshold_points"] == 50 and wide["needed_recordings"] < planned["needed_recordings"]
    assert wide["minimum_detectable_effect_points"] == planned["minimum_detectable_effect_points"]
    assert wide["sized_for"] == "an effect" and wide["gate_passes_80_at_points"] is None
    folder = str(experiment.folder)
    for wrong, said in (
        (["--arm", "nosuch"], "no challenger arm 'nosuch'"),
        (["--arm", "baseline"], "no challenger arm 'baseline'"),
        (["--effect", "nan"], "--effect must be a finite WER reduction above 0 points"),
        (["--effect", "inf"], "--effect must be a finite WER reduction above 0 points"),
        (["--hours", "3"], "--power plans the holdout's power; --hours plan time"),
    ):
        assert main(["plan", folder, "--power", *wrong]) == 2
        error = capsys.readouterr().err.strip()
        assert said in error and "\n" not in error, error
    assert main(["plan", folder, "--hours", "1", "--arm", "vad"]) == 2
    assert "--arm go with --power" in capsys.readouterr().err
    with pytest.raises(ProtocolError) as refused:
        freeze_challenger(experiment, "vad", TEMPLATE)
    assert "too small to detect its own wer_reduction_points threshold" in str(refused.value)
    assert "--allow-underpowered" in str(refused.value) and "\n" not in str(refused.value)
    assert AuditLog(experiment.folder).entries()[-1].event == "refusal"
    assert replay(verified_log(experiment.folder)).challenger is None  # nothing frozen
    freeze_challenger(experiment, "vad", TEMPLATE, allow_underpowered=True)
    entry = replay(verified_log(experiment.folder)).frozen_entry
    power = entry["power"]
    assert entry["underpowered_allowed"] is True and power["estimated"] is True
    assert (power["recordings"], power["threshold_points"], power["detects_threshold"]) == (2, 0.5, False)
    assert power["minimum_detectable_effect_points"] > 0.5 and power["needed_recordings"] > 2
    assert power["tuning"]["recordings"] == 4 and power["tuning_run"] == "tuning-constructed"
    assert power["arms_compared"] == 1 and "chosen among" not in planning_text(planning(entry))
    constructed_holdout(experiment, ["h1", "h2"])
    report = gate_verdict(experiment)
    data = report.to_json()
    assert data["minimum_detectable_effect_points"] == power["minimum_detectable_effect_points"]
    assert data["planning"]["underpowered_allowed"] is True
    text = report.text()
    assert "underpowered: the holdout is too small" in text and "power: the planned test split" in text
    assert "calibration: not measured" in text
    report = (experiment.folder / "runs" / "holdout-constructed" / "report.md").read_text(encoding="utf-8")
    assert "**Planned at the freeze**" in report and "underpowered: the holdout is too small" in report


@needs_bundled_model
def test_tuning_figures_without_any_spread_are_refused_unless_allowed(tmp_path: Path) -> None:
    """Real paired decodes differ somewhere; arms that differ by one rate on every recording (or tuning scores
    edited to look so) say nothing of the holdout's power, so they are no way around the underpowered refusal."""
    experiment = own_corpus_experiment(tmp_path / "exp", SPLITS)
    same = {"t1": 1, "t2": 1, "t3": 1, "t4": 1}
    _tuning_run(experiment, {"baseline": same, "vad": same})  # the arms agree on every recording
    with pytest.raises(ProtocolError) as refused:
        freeze_challenger(experiment, "vad", TEMPLATE)
    assert "power cannot be planned" in str(refused.value) and "no spread" in str(refused.value)
    freeze_challenger(experiment, "vad", TEMPLATE, allow_underpowered=True)
    entry = replay(verified_log(experiment.folder)).frozen_entry
    assert entry["power"]["estimated"] is False and "no spread" in entry["power"]["reason"]
    assert entry["underpowered_allowed"] is True and entry["calibration"] is None


def test_holm_adjusts_the_smallest_p_by_k_and_keeps_the_order() -> None:
    adjusted = holm_adjusted({"a": 0.01, "b": 0.04, "c": 0.03, "d": None})
    # K = 3: 3 x 0.01, then max(0.03, 2 x 0.03), then max(0.06, 1 x 0.04).
    assert adjusted == {"a": pytest.approx(0.03), "c": pytest.approx(0.06), "b": pytest.approx(0.06), "d": None}


def test_thinning_corrects_the_expected_share_and_keeps_the_reference() -> None:
    counts = ErrorCounts(ref_words=10_000, hits=8_000, substitutions=1_200, deletions=800, insertions=500)
    rng = np.random.default_rng(0)
    thinned_counts = [thinned(counts, 0.25, rng) for _ in range(200)]
    assert all(c.hits + c.substitutions + c.deletions == 10_000 for c in thinned_counts)
    assert np.mean([c.errors for c in thinned_counts]) == pytest.approx(0.75 * counts.errors, rel=0.01)
    assert thinned(counts, 0.0, rng) is counts and thinned(counts, 1.0, rng).errors == 0


@pytest.mark.parametrize(("successes", "trials"), [(0, 200), (0, 3), (4, 200), (30, 50)])
def test_the_upper_bound_is_clopper_pearson(successes: int, trials: int) -> None:
    exact = binomtest(successes, trials).proportion_ci(confidence_level=0.90, method="exact").high
    assert upper_bound_95(successes, trials) == pytest.approx(exact)
    if successes == 0:
        assert upper_bound_95(0, trials) == pytest.approx(1 - 0.05 ** (1 / trials))
    assert math.isclose(upper_bound_95(trials, trials), 1.0)


def test_the_verdict_says_a_challenger_chosen_among_several_arms_has_an_optimistic_tuning_gain() -> None:
    entry = {"power": {"estimated": False, "reason": "no spread", "arms_compared": 6}, "underpowered_allowed": False}
    assert "chosen among 6 arms on the tuning split" in planning_text(planning(entry))
    entry["power"]["arms_compared"] = 1
    assert "chosen among" not in planning_text(planning(entry))
