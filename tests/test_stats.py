"""Paired statistics: deltas, seeded bootstrap of the corpus WER difference, tests, small-sample warning."""

from __future__ import annotations

import pytest

from toolkit.scorer.metrics.wer import ErrorCounts
from toolkit.scorer.stats import paired_comparison


def counts(errors: int, n: int) -> ErrorCounts:
    return ErrorCounts(ref_words=n, hits=n - errors, substitutions=errors)


BASE = {
    f"r{k}": counts(e, n)
    for k, (e, n) in enumerate([(10, 100), (20, 200), (5, 50), (30, 100), (8, 80), (12, 60), (9, 90), (40, 400)])
}
CHAL = {
    f"r{k}": counts(e, n)
    for k, (e, n) in enumerate([(8, 100), (15, 200), (5, 50), (20, 100), (6, 80), (10, 60), (9, 90), (30, 400)])
}


def test_corpus_difference_is_micro_and_deltas_are_per_recording():
    result = paired_comparison(BASE, CHAL, samples=2000, seed=1)
    assert result.baseline_wer == pytest.approx(134 / 1080)
    assert result.challenger_wer == pytest.approx(103 / 1080)
    assert result.delta == pytest.approx(-31 / 1080)
    table = result.per_recording.set_index("recording_id")
    assert table.loc["r3", "delta"] == pytest.approx(-0.10)
    assert table.loc["r2", "delta"] == 0.0
    assert result.ci_low < result.delta < result.ci_high < 0
    assert result.reduction_ci[0] > 0
    assert result.warning is None


def test_bootstrap_is_deterministic_by_seed():
    a = paired_comparison(BASE, CHAL, samples=1000, seed=7)
    b = paired_comparison(BASE, CHAL, samples=1000, seed=7)
    c = paired_comparison(BASE, CHAL, samples=1000, seed=8)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.to_json()["bootstrap"] == {"samples": 1000, "seed": 7}


def test_paired_tests():
    result = paired_comparison(BASE, CHAL, samples=500)
    # 6 of 8 recordings improve and two tie: the sign test drops ties (6 of 6 -> p = 2 / 2**6).
    assert result.sign_test_p == pytest.approx(2 / 2**6)
    assert 0 < result.wilcoxon_p < 0.05


def test_few_recordings_warn_and_identical_systems_give_p_one():
    few = {k: BASE[k] for k in ("r0", "r1", "r2")}
    result = paired_comparison(few, few, samples=200)
    assert "only 3 recording(s)" in result.warning
    assert result.delta == 0.0 and result.wilcoxon_p == 1.0 and result.sign_test_p == 1.0


def test_mismatched_recordings_are_refused():
    with pytest.raises(ValueError, match="different recordings"):
        paired_comparison(BASE, {k: v for k, v in CHAL.items() if k != "r0"})
