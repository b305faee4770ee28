"""Fuzzing every reader (issue 9): truncated, bit-flipped and odd-Unicode TextGrid, STM, CTM, JSON words
and WAV files either read as a valid record or raise the toolkit's InputError, never anything else;
a truncated file that carries its own length (TextGrid, JSON, WAV) is never read as a shorter record."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
import soundfile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.audio.io import load_audio, probe_audio
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.formats import (
    read_hypothesis,
    read_reference,
    write_ctm,
    write_hypothesis_json,
    write_reference_textgrid,
    write_stm,
)

# Derandomized, so a run that passes today passes tomorrow; 150 examples keep each reader under a few seconds.
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
ODD_UNICODE = ["\u0301", "\u200b", "\u00a0", "\u202e", "\ufeff", "\x00", "\r", "\u2028", "ﬁ", "𝔞", "\udcff", '"', "\\"]

REFERENCE = Reference(
    "rec",
    [Utterance(0.2, 1.8, "não é isso", "Ana"), Utterance(2.0, 3.5, "é sim, 2020", "Zé")],
    words=[Word("não", 0.2, 0.5), Word("é", 0.6, 0.7)],
    speech=[Interval(0.0, 2.0, "speech"), Interval(3.6, 4.0, "nonspeech")],
    unresolved=[Interval(3.5, 3.6, "?")],
)
HYPOTHESIS = Hypothesis(
    "rec",
    [Word("não", 0.2, 0.5, 0.9, "seg0000"), Word("é", 0.6, 0.7), Word("sim"), Word("isso", 1.0, 1.4, 0.5)],
    arm="a",
)


def _originals(folder: Path) -> dict[str, bytes]:
    write_reference_textgrid(REFERENCE, folder / "rec.TextGrid", 4.0)
    write_stm([REFERENCE], folder / "rec.stm")
    write_ctm(HYPOTHESIS, folder / "rec.ctm")
    write_hypothesis_json(HYPOTHESIS, folder / "rec.json")
    return {suffix: (folder / f"rec{suffix}").read_bytes() for suffix in (".TextGrid", ".stm", ".ctm", ".json")}


def _mutations(data: bytes) -> st.SearchStrategy[tuple[str, bytes]]:
    """Truncation (anywhere, or at a line end, where a cut looks most plausible), byte flips and odd
    Unicode inserted into the text, each tagged with its kind."""
    line_ends = [at for at, byte in enumerate(data) if byte == ord("\n")][:-1]
    cut = st.one_of(st.integers(0, len(data) - 1), st.sampled_from(line_ends or [0])).map(
        lambda at: ("truncated", data[:at])
    )
    flips = st.lists(st.tuples(st.integers(0, len(data) - 1), st.integers(1, 255)), min_size=1, max_size=4).map(
        lambda changes: ("flipped", _flip(data, changes))
    )
    odd = st.tuples(st.integers(0, len(data)), st.sampled_from(ODD_UNICODE)).map(
        lambda insert: ("unicode", data[: insert[0]] + insert[1].encode("utf-8", "surrogatepass") + data[insert[0] :])
    )
    return st.one_of(cut, flips, odd)


def _flip(data: bytes, changes: list[tuple[int, int]]) -> bytes:
    mutable = bytearray(data)
    for at, mask in changes:
        mutable[at] ^= mask
    return bytes(mutable)


def _valid_reference(reference: Reference) -> None:
    for item in [*reference.utterances, *reference.speech, *reference.unresolved]:
        assert 0 <= item.start <= item.end and math.isfinite(item.start)
    assert all(u.text.strip() for u in reference.utterances)
    assert all(w.timed and 0 <= w.start <= w.end for w in reference.words)


def _valid_hypothesis(hypothesis: Hypothesis) -> None:
    timed = [w for w in hypothesis.words if w.timed]
    assert all(w.text.strip() for w in hypothesis.words)
    assert all(math.isfinite(w.start) and 0 <= w.start <= w.end and math.isfinite(w.end) for w in timed)
    assert all(math.isfinite(w.confidence) for w in hypothesis.words if w.confidence is not None)


def _read_or_refuse(read, path: Path):
    try:
        return read(path)
    except InputError:
        return None


# Per file kind: its reader, what a valid record must satisfy, and whether a truncated file must
# never read as a shorter record (formats whose end is marked: TextGrid tiers, a JSON document).
READERS = {
    ".TextGrid": (read_reference, _valid_reference, True),
    ".stm": (read_reference, _valid_reference, False),
    ".ctm": (read_hypothesis, _valid_hypothesis, False),
    ".json": (read_hypothesis, _valid_hypothesis, True),
}


@pytest.mark.parametrize("suffix", list(READERS))
def test_readers_read_or_refuse(tmp_path: Path, suffix: str) -> None:
    read, valid, cut_is_refused = READERS[suffix]
    original = _originals(tmp_path)[suffix]
    full = read(tmp_path / f"rec{suffix}")
    target = tmp_path / "fuzz" / f"rec{suffix}"
    target.parent.mkdir()

    @FUZZ
    @given(_mutations(original))
    def check(mutation: tuple[str, bytes]) -> None:
        kind, data = mutation
        target.write_bytes(data)
        record = _read_or_refuse(read, target)
        if record is None:
            return
        valid(record)
        if kind == "truncated" and cut_is_refused:
            assert record == full, f"a cut {suffix} file was read as a shorter record"

    check()


def test_wav_reader_reads_or_refuses(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    soundfile.write(buffer, np.random.default_rng(0).uniform(-0.3, 0.3, 1600), 16000, format="WAV", subtype="PCM_16")
    original = buffer.getvalue()
    target = tmp_path / "rec.wav"
    header = st.lists(st.tuples(st.integers(0, 47), st.integers(1, 255)), min_size=1, max_size=3).map(
        lambda changes: ("flipped", _flip(original, changes))
    )

    @FUZZ
    @given(st.one_of(_mutations(original), header))
    def check(mutation: tuple[str, bytes]) -> None:
        kind, data = mutation
        target.write_bytes(data)
        info = _read_or_refuse(lambda path: probe_audio(path, decode=True), target)
        signal = _read_or_refuse(load_audio, target)
        if kind == "truncated":
            assert info is None and signal is None, "a cut WAV was read"
        if signal is not None:
            assert len(signal.samples) > 0 and np.isfinite(signal.samples).all()

    check()


@pytest.mark.parametrize("suffix", [".TextGrid", ".json"])
def test_every_cut_at_a_line_end_is_refused(tmp_path: Path, suffix: str) -> None:
    """A cut at a line end looks most like a whole file; every one of them, not a sample, must be refused."""
    original = _originals(tmp_path)[suffix]
    read = read_reference if suffix == ".TextGrid" else read_hypothesis
    full = read(tmp_path / f"rec{suffix}")
    target = tmp_path / "cut" / f"rec{suffix}"
    target.parent.mkdir()
    for at in [at for at, byte in enumerate(original) if byte == ord("\n")]:
        target.write_bytes(original[:at])
        if original[at:].strip():
            with pytest.raises(InputError):
                read(target)
        else:
            assert read(target) == full
