"""JSON files are parsed by orjson when that surely gives what the checked parse gives (toolkit.core.data_files):
any value, any number as written and any malformed text gives the same data, or the same one-line refusal, as
the checked parse alone."""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core import data_files
from toolkit.core.errors import InputError


def _outcome(text: str) -> tuple[str, str]:
    """The data parsed (``repr`` tells ints from floats, -0.0 from 0.0 and shows key order) or the refusal."""
    try:
        return "parsed", repr(data_files.parse_json(text, "f.json"))
    except InputError as error:
        return "refused", str(error)


def _checked_outcome(text: str) -> tuple[str, str]:
    """The outcome of the checked parse alone (the code before the fast path)."""
    with patch.object(data_files, "_parsed_at_once", lambda text: data_files._UNSURE):
        return _outcome(text)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(),
)
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
)


@settings(max_examples=300, deadline=None)
@given(_values, st.booleans())
def test_any_value_parses_as_the_checked_parse_gives_it(value: Any, indent: bool) -> None:
    text = json.dumps(value, ensure_ascii=False, indent=2 if indent else None)
    assert _outcome(text) == _checked_outcome(text)


_number = st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][-+]?[0-9]{1,3})?", fullmatch=True)


@settings(max_examples=400, deadline=None)
@given(st.lists(_number, min_size=1, max_size=4))
def test_any_number_as_written_parses_as_the_checked_parse_gives_it(numbers: list[str]) -> None:
    """Every digit count and exponent: integers past 64 bits, numbers too long, too large or too small."""
    text = '{"n": [' + ", ".join(numbers) + "]}"
    assert _outcome(text) == _checked_outcome(text)


_pieces = st.sampled_from(
    [
        '{"a": ',
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        '"x"',
        '"\\u',
        "d800",
        '"',
        "\\",
        "1",
        "-",
        "0",
        ".",
        "e",
        "+",
        "NaN",
        "Infinity",
        "true",
        "nul",
        " ",
        "\n",
        "\t",
        "\x00",
        "\ufeff",
        "\ud800",
        "é",
        "9" * 19,
        "1e400",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_pieces, max_size=12).map("".join))
def test_any_malformed_text_is_refused_as_the_checked_parse_refuses_it(text: str) -> None:
    assert _outcome(text) == _checked_outcome(text)


def test_deep_nesting_is_refused_by_either_parse() -> None:
    for text in ("[" * 70 + "]" * 70, "[" * 3000 + "]" * 3000, '{"a": ' * 65 + "1" + "}" * 65):
        assert _outcome(text) == _checked_outcome(text)
        assert _outcome(text)[0] == "refused"


def test_a_hypothesis_file_takes_the_fast_path_and_a_long_integer_the_checked_one() -> None:
    assert data_files._parsed_at_once('{"words": [{"word": "não", "start": 1.5, "end": 2}]}') == {
        "words": [{"word": "não", "start": 1.5, "end": 2}]
    }
    assert data_files._parsed_at_once('{"n": 18446744073709551616}') is data_files._UNSURE
    assert data_files.parse_json('{"n": 18446744073709551616}', "f.json") == {"n": 18446744073709551616}
