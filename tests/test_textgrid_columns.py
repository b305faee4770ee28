"""A long-layout TextGrid's plain intervals read straight into columns (``long_layout_columns``) give the same tiers,
and the same errors, as the values read as one stream (``long_layout_values`` or Praat's value stream) give."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from praatio import textgrid as praat
from test_textgrid_fast_paths import _EDIT, _long_files

from toolkit.core.errors import InputError
from toolkit.formats import praat_text
from toolkit.formats.textgrid import _parse_text

# Labels without a quote or a line break, so that most files are read as columns, or any label.
_PLAIN_LABEL = st.text(alphabet=st.sampled_from(list("abc ãé!\t[]=<>1.-")), max_size=12)
_FILES = st.one_of(_long_files(_PLAIN_LABEL), _long_files())


def _tiers(text: str) -> object:
    """The tiers the reader makes of ``text`` as plain tuples, or the message it refuses the file with."""
    try:
        return [(t.name, t.is_interval, t.starts, t.ends, t.texts) for t in _parse_text("rec.TextGrid", text)]
    except InputError as error:
        return str(error)


def _tiers_from_values(text: str) -> object:
    """:func:`_tiers` as read before the columns: every value in one list."""
    with mock.patch.object(praat_text, "long_layout_columns", return_value=None):
        return _tiers(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FILES)
def test_a_long_file_praatio_writes_reads_into_the_same_tiers(written: tuple[str, bool]) -> None:
    text = written[0]
    assert _tiers(text) == _tiers_from_values(text)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FILES, st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), _EDIT), min_size=1, max_size=3))
def test_any_edit_of_a_long_file_reads_into_the_same_tiers_or_the_same_error(
    written: tuple[str, bool], edits: list[tuple[float, int, str]]
) -> None:
    """Characters cut, replaced or added anywhere (a time, a size, a quote, a line): the same tiers or message."""
    text = written[0]
    for where, cut, added in edits:
        at = int(where * len(text))
        text = text[:at] + added + text[at + cut :]
    assert _tiers(text) == _tiers_from_values(text)


def test_a_plain_long_file_is_read_as_columns(tmp_path: Path) -> None:
    """A file of plain intervals is read as columns (so the tests above compare two ways, not one with itself), and
    one holding a doubled quote is not."""
    grid = praat.Textgrid(0, 10.0)
    grid.addTier(praat.IntervalTier("utterances", [(0.5, 1.25, "sim senhor"), (2.0, 3e-05 + 2, "ação")], 0, 10.0))
    grid.save(str(tmp_path / "rec.TextGrid"), format="long_textgrid", includeBlankSpaces=True)
    text = (tmp_path / "rec.TextGrid").read_text(encoding="utf-8")
    read = praat_text.long_layout_columns(text)
    assert read is not None and list(read[1].values()) == [
        ([0.0, 0.5, 1.25, 2.0, 2.00003], [0.5, 1.25, 2.0, 2.00003, 10.0], ["", "sim senhor", "", "ação", ""])
    ]
    assert praat_text.long_layout_columns(text.replace('"ação"', '"a""b"')) is None
    assert _tiers(text) == _tiers_from_values(text)
