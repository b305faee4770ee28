"""Word alignment: unit costs, documented tie-breaking, agreement with jiwer, time-constrained mode."""

from __future__ import annotations

import random

import jiwer
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.scorer.align import DELETE, EQUAL, INSERT, SUBSTITUTE, align, align_timed, word_ids


def _ops(alignment) -> str:
    return "".join("=SDI"[o] for o in alignment.ops.tolist())


def test_simple_alignment_has_expected_ops_and_indices():
    al = align("eu não vou lá".split(), "eu então vou lá hoje".split())
    assert _ops(al) == "=S==I"
    pairs = al.pairs()
    assert pairs[1].op == "substitute" and pairs[1].ref_index == 1 and pairs[1].hyp_index == 1
    assert pairs[4].op == "insert" and pairs[4].ref_index is None and pairs[4].hyp_index == 4


def test_documented_tie_breaking():
    # Walking back from the end: deletion before substitution before insertion.
    assert _ops(align(["a", "b", "c"], ["d"])) == "SDD"
    assert _ops(align(["d"], ["a", "b", "c"])) == "IIS"


def test_empty_sides():
    assert _ops(align(["a", "b"], [])) == "DD"
    assert _ops(align([], ["a"])) == "I"
    assert len(align([], []).ops) == 0


def test_views_are_consistent():
    al = align("a b c d e f".split(), "a x c e f g".split())
    assert _ops(al) == "=S=D==I"
    op, partner, step = al.ref_view()
    assert op.tolist() == [EQUAL, SUBSTITUTE, EQUAL, DELETE, EQUAL, EQUAL]
    assert partner.tolist() == [0, 1, 2, -1, 3, 4]
    assert step.tolist() == [0, 1, 2, 3, 4, 5]
    hop, hpartner = al.hyp_view()
    assert hop.tolist() == [EQUAL, SUBSTITUTE, EQUAL, EQUAL, EQUAL, INSERT]
    assert hpartner.tolist() == [0, 1, 2, 4, 5, -1]
    assert al.insertion_slots().tolist() == [6]


def test_counts_match_jiwer_on_random_pairs():
    rng = random.Random(3)
    vocab = "não sim eu você ele foi vai tá né de a o".split()
    for _ in range(200):
        ref = [rng.choice(vocab) for _ in range(rng.randint(1, 25))]
        hyp = [rng.choice(vocab) for _ in range(rng.randint(0, 25))]
        al = align(ref, hyp)
        if not hyp:
            assert al.count(DELETE) == len(ref)
            continue
        out = jiwer.process_words(" ".join(ref), " ".join(hyp))
        assert (al.count(SUBSTITUTE), al.count(DELETE), al.count(INSERT), al.count(EQUAL)) == (
            out.substitutions,
            out.deletions,
            out.insertions,
            out.hits,
        )


def test_time_constrained_equals_free_alignment_when_times_agree():
    ref = "a b c d e f".split()
    hyp = "a b x d e f g".split()
    r_start = np.arange(6, dtype=float)
    h_on = np.array([0, 1, 2, 3, 4, 5, 6], dtype=float)
    free = align(ref, hyp)
    timed = align_timed(ref, hyp, r_start, r_start + 0.5, h_on, collar=0.2)
    assert _ops(timed) == _ops(free) == "==S===I"


def test_time_constrained_refuses_far_matches():
    # The hypothesis says "b" 10 s late: free alignment calls it a hit, timed alignment cannot.
    ref, hyp = ["a", "b"], ["a", "b"]
    r_start = np.array([0.0, 1.0])
    timed = align_timed(ref, hyp, r_start, r_start + 0.4, np.array([0.0, 11.0]), collar=0.5)
    assert _ops(timed) == "=ID"  # forward order: insertions before deletions in a gap
    assert _ops(align(ref, hyp)) == "=="


def test_time_constrained_untimed_hypothesis_words_are_insertions():
    timed = align_timed(["a"], ["a"], np.array([0.0]), np.array([1.0]), np.array([np.nan]), collar=1.0)
    assert sorted(_ops(timed)) == ["D", "I"]


@pytest.mark.parametrize("seed", range(5))
def test_time_constrained_with_huge_collar_matches_free_cost(seed):
    rng = random.Random(seed)
    vocab = "a b c d e".split()
    ref = [rng.choice(vocab) for _ in range(40)]
    hyp = [rng.choice(vocab) for _ in range(35)]
    r_start = np.linspace(0, 20, len(ref))
    h_on = np.sort(np.array([rng.uniform(0, 20) for _ in hyp]))
    free = align(ref, hyp)
    timed = align_timed(ref, hyp, r_start, r_start + 0.3, h_on, collar=100.0)
    cost = lambda al: al.count(SUBSTITUTE) + al.count(DELETE) + al.count(INSERT)  # noqa: E731
    assert cost(timed) == cost(free)
    assert sorted(timed.ref_index[timed.ref_index >= 0].tolist()) == list(range(len(ref)))
    assert sorted(timed.hyp_index[timed.hyp_index >= 0].tolist()) == list(range(len(hyp)))


def _brute_force_constrained_cost(ref, hyp, lo, hi, onset) -> int:
    """Plain O(n*m) edit distance where a pairing needs lo_i <= onset_j <= hi_i."""
    n, m = len(ref), len(hyp)
    d = [[i + j if i == 0 or j == 0 else 0 for j in range(m + 1)] for i in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            best = min(d[i - 1][j], d[i][j - 1]) + 1
            if not np.isnan(onset[j - 1]) and lo[i - 1] <= onset[j - 1] <= hi[i - 1]:
                best = min(best, d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]))
            d[i][j] = best
    return d[n][m]


@pytest.mark.parametrize("seed", range(8))
def test_time_constrained_is_optimal_with_jittered_and_untimed_onsets(seed):
    rng = random.Random(seed)
    vocab = "não sim eu vou lá".split()
    ref = [rng.choice(vocab) for _ in range(rng.randint(5, 40))]
    hyp = [rng.choice(vocab) for _ in range(rng.randint(0, 40))]
    r_start = np.sort(np.array([rng.uniform(0, 30) for _ in ref]))
    r_end = r_start + 0.3
    onset = np.array([rng.uniform(0, 30) if rng.random() > 0.1 else np.nan for _ in hyp])  # not monotone
    collar = rng.choice([0.0, 0.5, 2.0])
    timed = align_timed(ref, hyp, r_start, r_end, onset, collar)
    cost = timed.count(SUBSTITUTE) + timed.count(DELETE) + timed.count(INSERT)
    assert cost == _brute_force_constrained_cost(ref, hyp, r_start - collar, r_end + collar, onset)
    paired = timed.ops <= SUBSTITUTE
    t = onset[timed.hyp_index[paired]]
    assert np.all((t >= r_start[timed.ref_index[paired]] - collar) & (t <= r_end[timed.ref_index[paired]] + collar))
    assert sorted(timed.hyp_index[timed.hyp_index >= 0].tolist()) == list(range(len(hyp)))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from("a b c d é E".split()), max_size=12),
    st.lists(st.sampled_from("a b x é".split()), max_size=12),
)
def test_word_ids_number_words_in_order_of_first_use(ref: list[str], hyp: list[str]) -> None:
    ref_ids, hyp_ids = word_ids(ref, hyp)
    words, ids = [*ref, *hyp], [*ref_ids, *hyp_ids]
    first_use = list(dict.fromkeys(words))
    assert ids == [first_use.index(word) for word in words]
