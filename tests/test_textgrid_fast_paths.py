"""The readers' fast paths held to the plain code: a long-layout TextGrid read a tier header or an interval at a time
gives exactly the values Praat's value stream gives, for any file praatio writes and for any file edited anywhere
(else the stream reads it, for the same errors); a JSON value's nesting depth is the one every value asked gives."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from praatio import textgrid as praat

from toolkit.formats.praat_text import long_layout_values, stream_values

# Labels as annotators type them: accents, doubled quotes, "!" (a comment only outside a text), line breaks.
LABEL = st.text(alphabet=st.sampled_from(list('abc ãé"!\n[]=<>1.-')), max_size=12)


@st.composite
def _long_files(draw: st.DrawFn, labels: st.SearchStrategy[str] = LABEL) -> tuple[str, bool]:
    """A long-layout TextGrid as praatio writes it (its labels drawn from ``labels``), and whether a label holds a
    line break."""
    grid = praat.Textgrid(0, 10.0)
    breaks = False
    for number in range(draw(st.integers(1, 3))):
        cuts = sorted(set(draw(st.lists(st.integers(1, 9999), min_size=2, max_size=10))))
        intervals = [(a / 1000, b / 1000, draw(labels)) for a, b in zip(cuts, cuts[1:])]
        breaks = breaks or any("\n" in label for _, _, label in intervals)
        grid.addTier(praat.IntervalTier(f'tier {number} ! "x"', intervals, 0, 10.0))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rec.TextGrid"
        grid.save(str(path), format="long_textgrid", includeBlankSpaces=True)
        return path.read_text(encoding="utf-8"), breaks


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_long_files())
def test_a_long_file_praatio_writes_reads_at_once_into_the_same_values(written: tuple[str, bool]) -> None:
    text, breaks = written
    values = long_layout_values(text)
    assert values == stream_values(text) or (values is None and breaks)


# What an edit puts in: the layout's own characters, a comment, a quote, other white space, a value's start.
_EDIT = st.text(alphabet=st.sampled_from(list(' \n\r\t"!<>=[]:0123456789.e-+ax\u00a0\u2028')), max_size=4)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_long_files(), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), _EDIT), min_size=1, max_size=3))
def test_any_edit_of_a_long_file_reads_into_the_same_values_or_falls_back(
    written: tuple[str, bool], edits: list[tuple[float, int, str]]
) -> None:
    """Characters cut, replaced or added anywhere: the long layout's values are the stream's, or None (the stream
    then reads the file, and says what is wrong with it)."""
    text = written[0]
    for where, cut, added in edits:
        at = int(where * len(text))
        text = text[:at] + added + text[at + cut :]
    assert long_layout_values(text) in (None, stream_values(text))


def _plain_depth(value: object, limit: int) -> int:
    """The nesting depth as the JSON reader measured it before, asking every value whether it is a container."""
    level, depth = [value], 0
    while level and depth <= limit:
        depth += 1
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
    return depth


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_JSON, st.integers(0, 8))
def test_a_json_value_nests_as_deep_as_when_every_value_was_asked(value: object, limit: int) -> None:
    from toolkit.core.data_files import _depth

    assert _depth(value, limit) == _plain_depth(value, limit)
