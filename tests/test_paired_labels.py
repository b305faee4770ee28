"""A list label read the same on both sides (ptbr-norm-4, ``paired_labels``): where the reference opens an
item with a Roman label, the recognizer's way of writing the same number costs nothing, any other number
stays an error, and the older versions keep their scores."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_data import PTBR_LONGFORM

import toolkit
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.normalize.digits import cardinal, ordinal
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

FORMAT_ONLY = [  # the recognizer wrote the label the reader said; only its form differs
    ("XIV - é assegurado", "XIV, é assegurado"),
    ("L - às presidiárias", "cinquenta as presidiárias"),
    ("XXX - é garantido", "-30, é garantido"),
    ("XIV - é assegurado", "14, é assegurado"),
    ("XIV - é assegurado", "décimo quarto, é assegurado"),
    ("II - o direito", "II. O direito"),
    ("II - o direito", "dois o direito"),
    ("I - a casa", "1 - a casa"),
    ("I - a casa", "um a casa"),
    ("XXI – os bens", "21º os bens"),
    ("XIV - é assegurado", "xiv, é assegurado"),
    ("art. 5º, II, da lei", "art. 5º, 2, da lei"),
    ("VIII - décimo terceiro salário", "Inciso VIII - décimo terceiro salário"),  # "inciso" said, the text goes on
    ("VIII - décimo terceiro salário", "Inciso VIII, décimo terceiro salário"),
]
REAL_ERRORS = [  # (reference, hypothesis, errors): a difference in what was said stays an error
    ("XIV - é assegurado", "XV, é assegurado", 1),
    ("XXX - é garantido", "menos trinta é garantido", 1),  # "menos" said, not a dash glued on
    ("II - o direito", "o direito", 1),
    ("II - o direito", "dois dois o direito", 1),
    ("Dom Pedro II reinou", "Dom Pedro dois reinou", 1),  # no label: a name's numeral is no list item
    ("K - a; L - b", "K - a; cinquenta b", 1),  # a list lettered in capitals: "L" is a letter
    ("H - a; I - b", "H - a; um b", 1),  # ... and so is "I" after "H"
    ("U - a; V - b", "U - a; cinco b", 1),
    ("I - os estados", "uma os estados", 1),  # a label is read in the masculine: "uma" is the article
]


@pytest.mark.parametrize(
    ("lines", "hypothesis", "expected"),
    [
        (["K - os estados;", "L - os municípios;"], "K os estados; cinquenta os municípios", 1),
        (["H - os estados;", "I - os municípios;"], "H os estados; um os municípios", 1),
        (["XLIX - a;", "L - b;"], "49, a cinquenta b", 0),
        (["H - x;", "Art. 5º Todos:", "I - a;"], "H x artigo quinto todos um a", 0),  # a line between ends a list
    ],
)
def test_a_lettered_list_goes_on_across_lines(lines: list[str], hypothesis: str, expected: int) -> None:
    """A plain-text reference's lines are turns read apart; whether "L -" is a letter or fifty is not: the
    same items give the same errors on one line and on several."""
    reference = Reference("r", [Utterance(0.0, math.inf, line) for line in lines])
    found = score_recording(reference, Hypothesis("r", [Word(w) for w in hypothesis.split()]), ScoreOptions())
    assert found.counts.errors == expected
    assert errors(" ".join(lines), hypothesis) == expected


def errors(reference: str, hypothesis: str, normalizer: str = "ptbr-norm-4") -> int:
    counts = toolkit.score(reference, hypothesis, normalizer=normalizer).counts
    return counts.substitutions + counts.deletions + counts.insertions


@pytest.mark.parametrize(("reference", "hypothesis"), FORMAT_ONLY)
def test_a_label_written_another_way_is_no_error(reference: str, hypothesis: str) -> None:
    """Format only, apart from a reader-added "inciso", which stays the one insertion it is."""
    assert errors(reference, hypothesis) == hypothesis.lower().split().count("inciso")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("incisos I, II e III", "incisos primeiro segundo e terceiro"),  # several parts: a list goes on
        ("artigos 5º, 6º e 7º", "artigos cinco seis e sete"),
        ("artigo 5º e 6º", "artigo cinco e seis"),  # one part, then "e": a list too
        ("o artigo 5º, segundo a lei", "o artigo cinco segundo a lei"),
    ],
)
def test_lists_of_numbered_parts_still_read_whole(written: str, said: str) -> None:
    assert errors(written, said) == 0


@pytest.mark.parametrize(("reference", "hypothesis", "expected"), REAL_ERRORS)
def test_a_real_difference_stays_an_error(reference: str, hypothesis: str, expected: int) -> None:
    assert errors(reference, hypothesis) == expected


@pytest.mark.parametrize(("reference", "hypothesis"), FORMAT_ONLY[:3])
def test_the_older_version_keeps_its_scores(reference: str, hypothesis: str) -> None:
    assert errors(reference, hypothesis, "ptbr-norm-3") == 1


def test_the_signature_names_the_rule() -> None:
    def options(version: str) -> dict[str, object]:
        fields = toolkit.score("I - a", "um a", normalizer=version).signature.fields
        return dict(fields["normalizers"]["normalized"]["options"])

    assert options("ptbr-norm-4")["paired_labels"] is True
    assert "paired_labels" not in options("ptbr-norm-3")


def _labelled_lines() -> list[tuple[str, int, str]]:
    """(label, value, rest of the line) of every item the shared chapters open with a Roman label."""
    if not PTBR_LONGFORM.is_dir():
        pytest.skip(f"the shared long-form chapters are not at {PTBR_LONGFORM}")
    out = []
    for path in sorted((PTBR_LONGFORM / "refs").glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            found = re.match(r"^([IVXLCDM]+) [-–] (.+)$", line)
            if found:
                out.append((found[1], _roman(found[1]), found[2]))
    assert len(out) > 50
    return out


def _roman(text: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    numbers = [values[char] for char in text]
    return sum(-v if v < w else v for v, w in zip(numbers, numbers[1:] + [0]))


def test_every_label_of_the_shared_chapters_reads_the_same_written_any_way() -> None:
    lines = _labelled_lines()
    for label, value, rest in lines:
        reference = f"{label} - {rest}"
        for written in (f"{label},", f"{value},", f"{value}.", f"-{value},", " ".join(cardinal(value))):
            assert errors(reference, f"{written} {rest}") == 0, (reference, written)
        assert errors(reference, f"{value + 1}, {rest}") >= 1, reference


@settings(max_examples=60, deadline=None)
@given(
    value=st.integers(1, 39),
    other=st.integers(1, 39),
    form=st.sampled_from(["roman", "digits", "signed", "cardinal", "ordinal"]),
)
def test_any_label_value_written_any_way(value: int, other: int, form: str) -> None:
    """Written as the same value, no error; as another value, at least one."""
    reference = f"{_to_roman(value)} - é assegurado"
    said = {
        "roman": f"{_to_roman(other)},",
        "digits": f"{other}.",
        "signed": f"-{other},",
        "cardinal": " ".join(cardinal(other)),
        "ordinal": " ".join(ordinal(other, False)),
    }[form]
    found = errors(reference, f"{said} é assegurado")
    assert (found == 0) if other == value else (found >= 1)


def _to_roman(value: int) -> str:
    parts = [(10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for amount, letters in parts:
        while value >= amount:
            out, value = out + letters, value - amount
    return out


@settings(max_examples=80, deadline=None)
@given(
    value=st.integers(1, 39),
    words=st.lists(st.sampled_from(["é", "a", "dois", "14,", "XV", "-3", "lei", "um", "menos"]), max_size=6),
)
def test_pairing_never_adds_an_error(value: int, words: list[str]) -> None:
    """Against a reference without the single-letter numerals (the only reference-side change), the newer
    version never counts more errors than the older one: pairing only ever makes tokens equal."""
    reference = f"{_to_roman(value)} - é a lei"
    hypothesis = " ".join(words) or "é"
    assert errors(reference, hypothesis) <= errors(reference, hypothesis, "ptbr-norm-3")
