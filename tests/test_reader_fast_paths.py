"""The readers' bulk steps held to the plain code: words built from columns are the words ``Word(...)`` builds, and a
JSON file parsed from its bytes gives the data, or the one-line refusal, that its text read strictly gives."""

from __future__ import annotations

import codecs
import copy
import pickle
import tempfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core import data_files
from toolkit.core.data_files import parse_json, read_json
from toolkit.core.errors import InputError
from toolkit.core.text import read_text
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


def _file_outcome(raw: bytes, reader: Any) -> tuple[str, str]:
    """What ``reader`` gives for a file of bytes ``raw``: the data (``repr`` tells ints from floats and shows key
    order) or the refusal, its file name made the same."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.json"
        path.write_bytes(raw)
        try:
            return "parsed", repr(reader(path))
        except InputError as error:
            return "refused", str(error).replace(str(path), "f.json")


def _read_as_text(path: Path) -> Any:
    """A JSON file read before its bytes went to orjson: its text read strictly, then parsed."""
    return parse_json(read_text(path), path)


_PIECES = st.sampled_from(
    [
        '{"words": [{"text": "não", "start": 1.5, "end": 2}], "meta": {}}',
        *'{}[],:"1-.e \n\x00\x01\ufeffé',
        *('{"a": ', '"x"', '"\\u', "d800", "NaN", "Infinity", "\r\n", "9" * 19, "9" * 18, "1e400"),
    ]
)
_BYTES = st.sampled_from(
    [b"", codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, b"\xff", b"\xed\xa0\x80", b"\xc0\x80", b"\x00"]
)


@settings(max_examples=600, deadline=None)
@given(_BYTES, st.lists(st.tuples(_PIECES, _BYTES), max_size=10), st.sampled_from(["utf-8", "utf-16"]))
def test_any_file_read_from_its_bytes_gives_what_its_text_gives(
    first: bytes, pieces: list[tuple[str, bytes]], encoding: str
) -> None:
    """Byte-order marks, UTF-16, invalid UTF-8 (surrogates, overlong forms), NUL characters, long digit runs, bad
    numbers: the same data or the same refusal (the file's encoding, its JSON, its nesting) as before."""
    text = "".join(piece for piece, _ in pieces)
    raw = first + b"".join(piece.encode(encoding, "surrogatepass") + extra for piece, extra in pieces)
    assert _file_outcome(raw, read_json) == _file_outcome(raw, _read_as_text)
    plain = first + text.encode(encoding, "surrogatepass")
    assert _file_outcome(plain, read_json) == _file_outcome(plain, _read_as_text)


def test_a_missing_file_and_a_folder_are_refused_as_before(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.json", tmp_path):
        outcomes = []
        for reader in (read_json, _read_as_text):
            try:
                reader(path)
            except InputError as error:
                outcomes.append(str(error))
        assert len(outcomes) == 2 and outcomes[0] == outcomes[1]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 3 * data_files._BLOCK), st.integers(17, 20), st.sampled_from([b" ", b".", b"a"]))
def test_a_run_of_digits_is_found_wherever_it_lies_as_in_a_translated_copy(at: int, run: int, filler: bytes) -> None:
    """Across the blocks' edges too: the runs of 19 digits a copy of the whole file translated shows, no other."""
    raw = filler * at + b"7" * run + filler * 5 + b"12"
    whole = data_files._LONG_DIGITS in raw.translate(data_files._DIGITS_AS_ZERO)
    assert data_files._has_long_digits(raw) is whole is (run >= 19)


def test_a_hypothesis_file_is_parsed_once_for_pairing_and_reading_and_then_let_go(tmp_path: Path) -> None:
    """Pairing reads its id, reading its words takes the same parse; the parsed file is not kept after that."""
    from unittest.mock import patch

    from toolkit import formats
    from toolkit.core.transcripts import Hypothesis
    from toolkit.formats import read_hypothesis, write_hypothesis_json
    from toolkit.formats.pairing import pair_ids

    formats._parsed_hypothesis_record.cache_clear()
    path = write_hypothesis_json(Hypothesis("rec", [Word("sim", 0.5, 0.75)], arm="a"), tmp_path / "rec.json")
    (tmp_path / "rec.txt").write_text("sim\n", encoding="utf-8")
    with patch.object(formats, "read_json", wraps=formats.read_json) as parse:
        assert pair_ids(tmp_path / "rec.txt", path) == ("rec", None)
        assert read_hypothesis(path, "rec") == Hypothesis("rec", [Word("sim", 0.5, 0.75)], arm="a")
        assert parse.call_count == 1
    assert formats._parsed_hypothesis_record.cache_info().currsize == 0
    assert read_hypothesis(path) == Hypothesis("rec", [Word("sim", 0.5, 0.75)], arm="a")
