"""The readers' bulk steps held to the plain code: words built from columns are the words ``Word(...)`` builds."""

from __future__ import annotations

import copy
import pickle
from dataclasses import asdict, fields
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.transcripts import Word

_TIMES = st.none() | st.floats(allow_nan=False) | st.integers(-5, 5) | st.just(-0.0)
_COLUMNS = st.lists(
    st.tuples(st.text(max_size=4), _TIMES, _TIMES, _TIMES | st.just(float("nan")), st.none() | st.text(max_size=3)),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(_COLUMNS, st.booleans())
def test_words_from_columns_are_the_words_built_one_by_one(rows: list[tuple[Any, ...]], all_fields: bool) -> None:
    """Equal, with equal hashes, reprs, fields (in order, the same objects), copies and pickles (a NaN confidence is
    the same object on both sides, so the words still compare equal; a pickle's NaN is another one)."""
    columns = [list(column) for column in zip(*rows)] if rows else [[] for _ in range(5)]
    used = columns if all_fields else columns[:3]
    built, plain = Word.from_columns(*used), list(map(Word, *used))
    assert built == plain and list(map(hash, built)) == list(map(hash, plain))
    for one, other in zip(built, plain, strict=True):
        assert type(one) is Word and repr(one) == repr(other)
        assert list(vars(one).items()) == list(vars(other).items())
        assert all(getattr(one, f.name) is getattr(other, f.name) for f in fields(Word))
        assert asdict(one) == asdict(other) and copy.copy(one) == other
        assert pickle.dumps(one) == pickle.dumps(other) and repr(pickle.loads(pickle.dumps(one))) == repr(other)


def test_words_from_columns_stop_with_the_shortest_column_as_map_does() -> None:
    assert Word.from_columns(["a", "b", "c"], [1.0, 2.0], [1.5, 2.5, 3.5]) == list(
        map(Word, ["a", "b", "c"], [1.0, 2.0], [1.5, 2.5, 3.5])
    )
