"""TextGrids read as Praat reads them (toolkit.formats.praat_text): the same tiers as praatio reads from
any file praatio writes, long or short; Praat's comments and its value-only layout; cut or wrong files refused."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from praatio import textgrid as praat
from praatio.utilities import textgrid_io

from toolkit.core.errors import InputError
from toolkit.formats import read_reference
from toolkit.formats.textgrid import _parse

# Labels as annotators type them: accents, doubled quotes, "!" (a comment only outside a text), line breaks.
LABEL = st.text(alphabet=st.sampled_from(list('abc ãé"!\n[]=<>1.-')), max_size=12)


@st.composite
def _tiers(draw: st.DrawFn) -> list[tuple[str, list[tuple[float, float, str]]]]:
    tiers = []
    for number in range(draw(st.integers(1, 3))):
        cuts = sorted(set(draw(st.lists(st.integers(1, 9999), min_size=2, max_size=14))))
        intervals = [(a / 1000, b / 1000, draw(LABEL)) for a, b in zip(cuts, cuts[1:])]
        tiers.append((f'tier {number} ! "x"', intervals))
    return tiers


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tiers(), st.sampled_from(["long_textgrid", "short_textgrid"]))
def test_every_file_praatio_writes_reads_as_praatio_reads_it(tiers: list, file_format: str) -> None:
    grid = praat.Textgrid(0, 10.0)
    for name, intervals in tiers:
        grid.addTier(praat.IntervalTier(name, intervals, 0, 10.0))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rec.TextGrid"
        grid.save(str(path), format=file_format, includeBlankSpaces=True)
        text = path.read_text(encoding="utf-8")
    ours = [(tier.name, tier.entries) for tier in _parse(path, text)]
    theirs = [
        (t["name"], [(float(s), float(e), label) for s, e, label in t["entries"]])
        for t in textgrid_io.parseTextgridStr(text, includeEmptyIntervals=True)["tiers"]
    ]
    assert ours == theirs


def _written(file_format: str) -> str:
    """A two-interval reference as praatio writes it (a doubled quote and a "!" inside the first text)."""
    grid = praat.Textgrid(0, 2.0)
    grid.addTier(praat.IntervalTier("utterances", [(0, 1.5, 'ele disse "não" !')], 0, 2.0))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rec.TextGrid"
        grid.save(str(path), format=file_format, includeBlankSpaces=True)
        return path.read_text(encoding="utf-8")


LONG, SHORT = _written("long_textgrid"), _written("short_textgrid")
# Praat's manual: everything after "!" on a line is a comment; only free-standing values count.
COMMENTED = """File type = "ooTextFile"
Object class = "TextGrid"
! the grid: xmin, xmax, tiers, their count
0 2 <exists> 1
"IntervalTier" "utterances" 0 2 2 ! class, name, xmin, xmax, size = 99
0 1.5 "ele disse ""não"" !"   ! the first interval
1.5 2 ""
"""


@pytest.mark.parametrize("text", [LONG, SHORT, COMMENTED], ids=["long", "short", "comments"])
def test_the_long_the_short_and_a_commented_layout_read_alike(tmp_path: Path, text: str) -> None:
    path = tmp_path / "rec.TextGrid"
    path.write_text(text, encoding="utf-8")
    reference = read_reference(path)
    assert [(u.start, u.end, u.text) for u in reference.utterances] == [(0.0, 1.5, 'ele disse "não" !')]


@pytest.mark.parametrize(
    "change, problem",
    [
        (("xmax = 1.5", "xmax = 1,5"), "tier 'utterances' interval 1: its end should be a number, found 1,5"),
        (('text = ""', "text = "), "tier 'utterances' declares 2 intervals but holds 1"),
        (("intervals: size = 2", "intervals: size = 3"), "tier 'utterances' declares 3 intervals but holds 2"),
        (("intervals: size = 2", "intervals: size = 1"), "declares 1 tiers but more follows the last one"),
        (("size = 1", "size = 2"), "it declares 2 tiers but holds 1"),
        (("xmin = 0 \n            xmax = 1.5", "xmin = -0.5 \n            xmax = 1.5"), "negative time"),
        (('class = "IntervalTier"', 'class = "Tier"'), "class should be IntervalTier or TextTier"),
        (("xmax = 1.5", "xmax = 1e999"), "not a finite number"),
    ],
)
def test_a_wrong_or_cut_value_is_one_line_naming_the_file_and_the_place(
    tmp_path: Path, change: tuple[str, str], problem: str
) -> None:
    path = tmp_path / "rec.TextGrid"
    assert change[0] in LONG
    path.write_text(LONG.replace(*change, 1), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_reference(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and problem in message and "\n" not in message


_ODD_TIMES = st.sampled_from([0.5, 1.0 - 1e-10, 1.0 + 1e-10, 2.5, -0.5, float("nan"), float("inf")])


@st.composite
def _tier_entries(draw: st.DrawFn) -> list[tuple[float, float, str]]:
    """Consecutive intervals (labelled, blank or empty), then maybe one time made odd:
    reversed, negative, not finite, overlapping, out of order, zero-length or late."""
    cuts = sorted(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0]), max_size=7, unique=True)))
    entries = [(a, b, draw(st.sampled_from(["", " ", "a"]))) for a, b in zip(cuts, cuts[1:])]
    if entries and draw(st.booleans()):
        k = draw(st.integers(0, len(entries) - 1))
        start, end, label = entries[k]
        entries[k] = (draw(_ODD_TIMES), end, label) if draw(st.booleans()) else (start, draw(_ODD_TIMES), label)
    return entries


@settings(max_examples=500, deadline=None)
@given(entries=_tier_entries(), duration=st.sampled_from([None, 1.0, 2.0, 3.0]))
def test_a_tier_passes_at_once_only_when_no_interval_is_wrong(entries: list, duration: float | None) -> None:
    """The tier-wide checks pass a tier only when the interval-by-interval checks find nothing (those then name
    the first wrong interval), and pass every right tier."""
    from toolkit.formats.textgrid import _all_right, _columns, _interval_problem, _Tier

    tier = _Tier("words", True, *_columns(entries))
    problems, previous = [], (0, -float("inf"), -float("inf"))
    for number, (start, end, label) in enumerate(entries, 1):
        problems.append(_interval_problem(start, end, bool(label.strip()), previous, duration))
        previous = (number, start, end)
    assert _all_right(tier, duration) == (not any(problems))


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.sampled_from(list('0123456789.eE+-_i٣<"')), min_size=1, max_size=6),
            st.sampled_from(["-.5", "+.5e3", ".5", "5.", "-5.e3", "1e5", "-0", "1_0", "-inf", "1e999"]),
        ),
        max_size=5,
    )
)
def test_numbers_are_read_as_floats_exactly_when_praat_reads_them(values: list[str]) -> None:
    """The fast reading of a tier's times accepts a value exactly when Praat's number syntax does (values are
    free-standing: no white space)."""
    from toolkit.formats.praat_text import _NUMBER, praat_floats

    praat = all(_NUMBER.fullmatch(value) for value in values)
    assert praat_floats(values) == ([float(value) for value in values] if praat else None)
