"""Seam flag precision against the reference: which flagged seams had a real problem."""

from __future__ import annotations

import pandas as pd
import pytest
from shared_data import PTBR_LONGFORM

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.metrics.seam_flags import flag_precision, seam_problems
from toolkit.scorer.score import score_recording

# Three seams: [25, 30] loses "dois" (omission), [50, 55] times "cinco" 1.2 s early, [75, 80] is clean.
SEAMS = [(25.0, 30.0), (50.0, 55.0), (75.0, 80.0)]
REF = Reference(
    "rec",
    [
        Utterance(10.0, 11.0, "um"),
        Utterance(27.0, 28.0, "dois"),
        Utterance(40.0, 41.0, "três"),
        Utterance(52.0, 53.0, "cinco"),
        Utterance(77.0, 78.0, "seis"),
    ],
)
HYP = Hypothesis(
    "rec", [Word("um", 10.0, 10.5), Word("três", 40.0, 40.5), Word("cinco", 50.8, 51.3), Word("seis", 77.1, 77.5)]
)


def table(flags: list[str], review: list[bool]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "arm": "windows",
            "recording_id": "rec",
            "start": [a for a, _ in SEAMS],
            "end": [b for _, b in SEAMS],
            "flags": flags,
            "review": review,
        }
    )


def test_problems_are_the_scorers_seam_losses_and_words_off_in_time():
    score = score_recording(REF, HYP, seams=SEAMS)
    assert score.seams.omissions == 1
    problems = seam_problems(SEAMS, score, tolerance=0.5)
    assert problems.loss == [True, False, False]
    assert problems.off_time == [False, True, False]
    assert problems.any == [True, True, False]
    assert seam_problems(SEAMS, score, tolerance=1.5).off_time == [False, False, False]


def test_a_loss_counts_at_the_seam_the_scorer_located_it_in_not_at_its_utterance_start():
    # One 10 s sentence; "veio" (untimed) is lost between "não" (2.0-2.25 s) and "e" (4.0 s), at the
    # first seam; the sentence starts 2.3 s before that seam's margin, so its start locates nothing.
    ref = Reference("rec", [Utterance(0.0, 10.0, "ontem o João não veio e hoje a Maria chegou cedo")])
    words = [
        ("ontem", 0.0),
        ("o", 0.8),
        ("João", 1.2),
        ("não", 2.0),
        ("e", 4.0),
        ("hoje", 4.6),
        ("a", 6.0),
        ("Maria", 6.8),
        ("chegou", 7.5),
        ("cedo", 9.0),
    ]
    hyp = Hypothesis("rec", [Word(t, s, s + 0.25) for t, s in words])
    seams = [(3.3, 3.5), (7.0, 7.2)]
    score = score_recording(ref, hyp, seams=seams)
    assert score.seams.omissions == 1 and score.seams.instances[0].time == 0.0
    assert seam_problems(seams, score).loss == [True, False]


def test_precision_per_flag_kind_and_for_review():
    scores = {"windows": {"rec": score_recording(REF, HYP, seams=SEAMS)}}
    # Seam 0 (the omission) is flagged disagreement (review); seams 1 and 2 carry timing notes only.
    out = flag_precision(table(["disagreement", "timing", "timing;edge_word"], [True, False, False]), scores)
    rows = {r["flag"]: r for r in out.to_dict(orient="records")}
    assert list(rows) == ["review", "disagreement", "edge_word", "timing"]
    assert (rows["review"]["seams"], rows["review"]["flagged"], rows["review"]["flagged_with_problem"]) == (3, 1, 1)
    assert rows["review"]["precision"] == 1.0
    assert (rows["review"]["seams_with_loss"], rows["review"]["loss_flagged"]) == (1, 1)
    assert (rows["timing"]["flagged"], rows["timing"]["flagged_with_problem"]) == (2, 1)
    assert rows["timing"]["precision"] == pytest.approx(0.5) and rows["timing"]["loss_flagged"] == 0
    assert rows["edge_word"]["precision"] == 0.0
    # Nothing flagged: precision is not available, never zero, and the missed loss shows.
    empty = flag_precision(table(["", "", ""], [False, False, False]), scores).to_dict(orient="records")
    assert empty == [
        {
            "arm": "windows",
            "flag": "review",
            "seams": 3,
            "flagged": 0,
            "flagged_with_problem": 0,
            "precision": None,
            "seams_with_loss": 1,
            "loss_flagged": 0,
        }
    ]


# --- a word split across two windows is not a duplication -------------------------------------------------------

ARTICLE = "Titulo 8 Art 196 ao 200.txt"  # "... inciso I, alínea a, e inciso II ...": a "linea"/"a" split seen there


def _spoken(text: str, split: int, pieces: list[str]) -> tuple[Hypothesis, list[tuple[float, float]]]:
    """``text``'s words 0.5 s apart, with word ``split`` written as ``pieces`` across a seam laid over them."""
    words = text.split()
    texts = words[:split] + pieces + words[split + 1 :]
    hyp = Hypothesis("rec", [Word(t, 0.5 * k, 0.5 * k + 0.4) for k, t in enumerate(texts)])
    at = 0.5 * split + 0.3  # the left window ends after the first piece, the right starts before the second
    return hyp, [(at - 0.2, at + 0.2)]


def _seam_counts(text: str, split: int, pieces: list[str]) -> tuple[int, int, int, list[str]]:
    hyp, seams = _spoken(text, split, pieces)
    score = score_recording(Reference("rec", [Utterance(0.0, 0.5 * len(hyp.words), text)]), hyp, seams=seams)
    found = score.seams
    return found.omissions, found.duplications, found.split_words, [i.kind for i in found.instances]


@pytest.mark.skipif(
    not (PTBR_LONGFORM / "refs" / ARTICLE).is_file(), reason=f"shared audiobook absent: {PTBR_LONGFORM}"
)
@pytest.mark.parametrize("pieces", [["a", "alínea"], ["a", "linea"]], ids=["prefix", "spelled"])
def test_the_audiobooks_alinea_split_across_a_seam_is_a_split_word_not_a_duplication(pieces: list[str]) -> None:
    """The reference paragraph with "alínea" recognized as "a" at the left window's end and "alínea" or "linea" at
    the right's start: the "a" of "alínea a" two words on made it a duplication."""
    line = next(
        ln for ln in (PTBR_LONGFORM / "refs" / ARTICLE).read_text(encoding="utf-8").splitlines() if "alínea a" in ln
    )
    split = line.split().index("alínea")
    omissions, duplications, split_words, kinds = _seam_counts(line, split, pieces)
    assert (duplications, split_words) == (0, 1) and "seam duplication" not in kinds


@pytest.mark.parametrize(
    ("text", "split", "pieces"),
    [
        ("conforme alínea b do inciso", 1, ["a", "alínea"]),  # the first syllable, then the word
        ("conforme alínea b do inciso", 1, ["ali", "linea"]),  # overlapping pieces that spell it
        ("conforme alínea b do inciso", 1, ["alínea", "nea"]),  # the word, then its last syllable
        ("a constituição a garante", 1, ["consti", "constituição"]),
    ],
)
def test_a_piece_of_the_next_or_previous_word_is_a_split_word(text: str, split: int, pieces: list[str]) -> None:
    assert _seam_counts(text, split, pieces)[1:3] == (0, 1)


def test_a_word_said_once_and_written_twice_on_both_sides_still_counts_as_a_duplication() -> None:
    """ "a a" where the reference has one "a", both full words: a copy beside it decides, even where the next word
    begins with "a" too (the "a" could then be the first syllable of "alínea": it is read as the copy beside it)."""
    assert _seam_counts("o inciso a diz", 2, ["a", "a"])[1:3] == (1, 0)
    assert _seam_counts("conforme a alínea b", 1, ["a", "a"])[1:3] == (1, 0)
