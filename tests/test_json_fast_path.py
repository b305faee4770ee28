"""JSON files are parsed by orjson when that surely gives what the checked parse gives (toolkit.core.data_files):
any value, any number as written and any malformed text gives the same data, or the same one-line refusal, as
the checked parse alone. Indented JSON is written by orjson when that gives Python's text (toolkit.core.json_text):
any value gives the same text as ``json.dumps``."""

from __future__ import annotations

import json
import math
from typing import Any
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core import data_files
from toolkit.core.errors import InputError
from toolkit.core.json_text import _written_alike, indented_json, number_texts


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
    assert data_files._parsed_at_once('{"words": [{"word": "não", "start": 1.5, "end": 2}]}'.encode()) == {
        "words": [{"word": "não", "start": 1.5, "end": 2}]
    }
    assert data_files._parsed_at_once(b'{"n": 18446744073709551616}') is data_files._UNSURE
    assert data_files.parse_json('{"n": 18446744073709551616}', "f.json") == {"n": 18446744073709551616}


_written = st.recursive(
    _scalars
    | st.floats(min_value=-1e-3, max_value=1e-3)
    | st.tuples(st.integers(), st.text(max_size=3))
    | st.sampled_from(["\ud800", 'a\x7f\u2028\x1f"\\/', 2**64, -(2**63) - 1, 1e-4, -1e-4, 9.99e-5]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4)
        | st.dictionaries(st.integers(-3, 3) | st.none() | st.booleans(), inner, max_size=3)
    ),
)


@settings(max_examples=600, deadline=None)
@given(_written)
def test_any_value_is_written_as_pythons_encoder_writes_it(value: Any) -> None:
    """Small floats, non-finite ones, lone surrogates, huge integers, tuples and keys that are not strings too."""
    assert indented_json(value) == json.dumps(value, ensure_ascii=False, indent=2)


def test_a_score_takes_the_compiled_encoder_and_a_tiny_float_does_not() -> None:
    assert _written_alike({"wer": 0.115, "instances": [{"time": 12.5, "kind": "flip"}], "n": 9034, "x": None})
    assert not _written_alike({"drift": [1.5, 5e-05]})
    assert not _written_alike({"wer": float("nan")})
    assert not _written_alike({1: "one"})


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.floats() | st.floats(min_value=-1e-3, max_value=1e-3) | st.sampled_from([0.0, -0.0, 1e-4, 9.9e-5])),
    st.booleans(),
)
def test_any_column_of_numbers_is_written_as_pythons_encoder_writes_it(values: list[float], strided: bool) -> None:
    column = np.array(values + values, dtype=np.float64)[:: 2 if strided else 1]  # strided: not contiguous
    expected = [json.dumps(None if math.isnan(value) else value) for value in column.tolist()]
    assert number_texts(column) == expected
    assert number_texts(column, ', "end": ') == [f', "end": {text}' for text in expected]  # each after its key
    with np.errstate(over="ignore"):  # float32 cannot hold the largest doubles: they become infinities
        narrow = column.astype(np.float32)
    assert number_texts(narrow) == [json.dumps(None if math.isnan(value) else value) for value in narrow.tolist()]
