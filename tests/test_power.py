"""The power of the WER gate (toolkit.scorer.power) against closed forms and against the gate's own bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.scorer.metrics.wer import ErrorCounts
from toolkit.scorer.power import (
    MAX_RECORDINGS,
    PairedSpread,
    gate_pass_probability,
    minimum_detectable_effect,
    plan_power,
)
from toolkit.scorer.stats import paired_comparison


def counts(errors: int, words: int) -> ErrorCounts:
    return ErrorCounts(
        ref_words=words,
        hits=max(words - errors, 0),
        substitutions=min(errors, words),
        insertions=max(errors - words, 0),
    )


def test_the_spread_is_the_residual_variance_per_word() -> None:
    # Two recordings of 100 and 300 words; the challenger removes 4 and 4 errors: R = 8/400 = 2 points;
    # residuals 4 - 2 = 2 and 4 - 6 = -2; s^2 = 2/1 * (4 + 4) / 400 = 0.04.
    spread = PairedSpread.of(
        {"a": counts(10, 100), "b": counts(30, 300)}, {"a": counts(6, 100), "b": counts(26, 300)}, minutes=4.0
    )
    assert spread.reduction_points == pytest.approx(2.0)
    assert spread.variance_per_word == pytest.approx(0.04)
    assert spread.words_per_minute == 100
    assert spread.standard_error_points(400) == pytest.approx(100 * math.sqrt(0.04 / 400))


def test_many_recordings_give_the_normal_formula() -> None:
    # With many recordings Student's t is the normal: (1.95996 + 0.84162) * SE.
    assert minimum_detectable_effect(1.0, 100_000) == pytest.approx(2.80158, abs=1e-3)
    # One recording has no interval at all, two a very wide one.
    assert minimum_detectable_effect(1.0, 1) == math.inf
    assert minimum_detectable_effect(1.0, 2) > 14


def test_a_true_reduction_of_threshold_plus_mde_passes_the_gate_four_times_in_five() -> None:
    for k in (3, 8, 40):
        se, threshold = 0.7, 0.5
        effect = threshold + minimum_detectable_effect(se, k)
        assert gate_pass_probability(effect, threshold, se, k) == pytest.approx(0.80, abs=1e-9)
        # At the threshold itself the lower bound reaches it 2.5% of the time: the gate is conservative there.
        assert gate_pass_probability(threshold, threshold, se, k) == pytest.approx(0.025, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.005, 0.2),
    st.integers(2, 40),
    st.floats(1.0, 30.0),
    st.integers(50, 3000),
    st.floats(0.05, 3.0),
)
def test_the_needed_split_is_the_smallest_that_detects_the_threshold(variance, k, minutes, words, threshold) -> None:
    spread = PairedSpread(k, words, minutes, 1.0, variance)
    plan = plan_power(spread, k, minutes, threshold)
    per_recording_words = words / k

    def mde(n: int) -> float:
        return minimum_detectable_effect(spread.standard_error_points(n * per_recording_words), n)

    if plan.needed_recordings is None:  # beyond any split the search considers
        assert mde(MAX_RECORDINGS) > threshold and plan.detects_threshold is False
        return
    assert mde(plan.needed_recordings) <= threshold
    assert plan.needed_recordings == 2 or mde(plan.needed_recordings - 1) > threshold
    assert plan.detects_threshold == (plan.minimum_detectable_effect_points <= threshold)
    assert plan.needed_minutes == pytest.approx(plan.needed_recordings * minutes / k)


def test_the_closed_form_predicts_the_bootstrap_gate_on_a_known_normal_difference() -> None:
    """Recordings of 500 words whose errors removed are normal with variance s^2 n around a true reduction of
    threshold + MDE: the gate's own paired bootstrap passes about 80% of them."""
    rng = np.random.default_rng(3)
    k, n, s2, threshold = 30, 500, 0.05, 0.5
    se = 100 * math.sqrt(s2 / (k * n))
    effect = threshold + minimum_detectable_effect(se, k)
    passed = 0
    studies = 300
    for _ in range(studies):
        removed = rng.normal(effect / 100 * n, math.sqrt(s2 * n), size=k)
        base = {f"r{i}": counts(200, n) for i in range(k)}
        chal = {f"r{i}": counts(round(200 - removed[i]), n) for i in range(k)}
        comparison = paired_comparison(base, chal, samples=2000, seed=int(rng.integers(1 << 30)))
        passed += 100 * comparison.reduction_ci[0] >= threshold
    # The binomial 99% band around 0.80 for 300 studies is about +-0.06; rounding to whole errors adds a little.
    assert abs(passed / studies - 0.80) < 0.08


def test_a_planted_gain_of_zero_passes_about_2_5_percent_at_threshold_zero() -> None:
    """No true reduction, threshold 0: the lower bound reaches 0 only when chance puts it there."""
    rng = np.random.default_rng(11)
    k, n, s2 = 30, 500, 0.05
    studies, passed = 300, 0
    for _ in range(studies):
        removed = rng.normal(0.0, math.sqrt(s2 * n), size=k)
        base = {f"r{i}": counts(200, n) for i in range(k)}
        chal = {f"r{i}": counts(round(200 - removed[i]), n) for i in range(k)}
        passed += paired_comparison(base, chal, samples=2000, seed=int(rng.integers(1 << 30))).reduction_ci[0] >= 0
    assert gate_pass_probability(0.0, 0.0, 1.0, k) == pytest.approx(0.025)
    assert passed / studies < 0.025 + 0.035
