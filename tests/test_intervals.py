"""Interval arithmetic (toolkit.scorer.metrics.intervals) on any merged interval sets: the intersection is the
union of every pair's overlap."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.scorer.metrics.intervals import intersect, merge

_spans = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 12)).map(lambda p: (p[0] / 4, (p[0] + p[1]) / 4)), max_size=12
)


def _pairwise(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The definition: every interval of ``a`` cut against every interval of ``b``, merged."""
    return merge((max(s, t), min(e, u)) for s, e in a.tolist() for t, u in b.tolist())


@settings(max_examples=500, deadline=None)
@given(_spans, _spans)
def test_the_intersection_of_any_merged_sets_is_every_pairs_overlap(a: list, b: list) -> None:
    """Touching, nested, equal and empty intervals, and sets of one interval or none."""
    first, second = merge(a), merge(b)
    found = intersect(first, second)
    assert found.shape[1] == 2 and found.tolist() == _pairwise(first, second).tolist()
    assert found.tolist() == intersect(second, first).tolist()
