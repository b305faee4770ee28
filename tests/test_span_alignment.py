"""The stretch review shows each arm's words exactly as the scorer aligned them: no word is placed by its time."""

from __future__ import annotations

from toolkit.adjudication.spans import arm_alignment
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

# Two turns; the baseline's "Ele" (82.50-82.82 s) starts before the second turn (82.672 s) and
# its midpoint (82.66 s) lies outside it: a midpoint rule drew it as a deletion of "Ele".
REFERENCE = Reference(
    "r",
    [
        Utterance(78.0, 81.5, "A reunião começou cedo."),
        Utterance(82.672, 86.0, "Ele chegou em terceiro lugar."),
        Utterance(90.0, 93.0, "A Fernanda Lima não veio."),
    ],
    names=["Fernanda Lima"],
)
WORDS = [
    Word("a", 78.1, 78.3),
    Word("reunião", 78.4, 79.0),
    Word("começou", 79.1, 79.8),
    Word("cedo", 80.0, 80.5),
    Word("Ele", 82.50, 82.82),
    Word("chegou", 82.9, 83.4),
    Word("em", 83.5, 83.6),
    Word("terceiro", 83.7, 84.3),
    Word("lugar", 84.4, 85.0),
    Word("obrigado", 87.0, 87.4),
    Word("a", 89.7, 89.9),
    Word("Fernando", 89.9, 90.4),
    Word("Lima", 90.4, 90.9),
    Word("veio", 91.0, 91.5),
]


def _ops(steps) -> list[tuple[str | None, str | None, str]]:  # noqa: ANN001
    return [(s.reference, s.hypothesis, s.op) for s in steps]


def test_a_word_straddling_a_turn_edge_is_shown_where_the_scorer_counted_it():
    aligned = arm_alignment(REFERENCE, Hypothesis("r", WORDS, arm="baseline"), ScoreOptions())
    stretch = aligned.stretch(REFERENCE, 82.672, 86.0)
    assert _ops(stretch.steps) == [
        ("ele", "ele", "equal"),
        ("chegou", "chegou", "equal"),
        ("em", "em", "equal"),
        ("terceiro", "terceiro", "equal"),
        ("lugar", "lugar", "equal"),
    ]
    assert not any(s.op == "delete" for s in stretch.steps)
    # the inserted "obrigado" lies between this turn and the next: shown at the edge of both
    assert _ops(stretch.after) == [(None, "obrigado", "insert")]
    assert _ops(aligned.stretch(REFERENCE, 90.0, 93.0).before) == [(None, "obrigado", "insert")]


def test_every_step_the_scorer_counted_is_shown_once_and_nothing_else():
    options = ScoreOptions()
    hypothesis = Hypothesis("r", WORDS, arm="baseline")
    aligned = arm_alignment(REFERENCE, hypothesis, options)
    shown = [s for turn in REFERENCE.utterances for s in aligned.stretch(REFERENCE, turn.start, turn.end).steps]
    edges = {id(s) for turn in REFERENCE.utterances for s in aligned.stretch(REFERENCE, turn.start, turn.end).after}
    counts = score_recording(REFERENCE, hypothesis, options).counts
    errors = sum(s.op != "equal" for s in shown) + len(edges)
    assert errors == counts.substitutions + counts.deletions + counts.insertions


def test_a_name_the_arm_got_wrong_is_a_substitution_marked_critical_and_a_negation_it_dropped_a_deletion():
    aligned = arm_alignment(REFERENCE, Hypothesis("r", WORDS, arm="vad"), ScoreOptions())
    steps = aligned.stretch(REFERENCE, 90.0, 93.0).steps
    assert ("fernanda", "fernando", "substitute") in _ops(steps)
    assert next(s for s in steps if s.reference == "fernanda").critical == ("name",)
    dropped = next(s for s in steps if s.reference == "não")
    assert (dropped.op, dropped.critical) == ("delete", ("negation",))


def test_read_aloud_numbers_are_not_errors_under_the_experiment_normalizer():
    reference = Reference("r", [Utterance(0.0, 4.0, "O art. 5º tem 21 incisos.")])
    spoken = "o artigo quinto tem vinte e um incisos".split()
    words = [Word(w, 0.1 + 0.3 * k, 0.3 + 0.3 * k) for k, w in enumerate(spoken)]
    aligned = arm_alignment(reference, Hypothesis("r", words), ScoreOptions())
    assert {s.op for s in aligned.stretch(reference, 0.0, 4.0).steps} == {"equal"}


def test_a_stretch_without_a_turn_shows_the_insertions_of_the_gap_it_lies_in():
    aligned = arm_alignment(REFERENCE, Hypothesis("r", WORDS), ScoreOptions())
    stretch = aligned.stretch(REFERENCE, 86.5, 88.0)
    assert stretch.steps == [] and _ops(stretch.before) == [(None, "obrigado", "insert")]


def test_words_in_unresolved_audio_are_counted_not_shown():
    reference = Reference(
        "r", [Utterance(0.0, 2.0, "bom dia"), Utterance(3.0, 5.0, "tudo bem")], unresolved=[Interval(2.9, 5.1, "?")]
    )
    words = [Word("bom", 0.1, 0.5), Word("dia", 0.6, 1.0), Word("tudo", 3.1, 3.5), Word("bem", 3.6, 4.0)]
    aligned = arm_alignment(reference, Hypothesis("r", words), ScoreOptions())
    assert aligned.excluded_words == 2
    stretch = aligned.stretch(reference, 3.0, 5.0)
    assert (stretch.steps, stretch.excluded_turns) == ([], 1)


def test_an_untimed_turn_is_shown_where_the_arm_s_words_aligned_to_it_lie():
    """A plain-text reference's lines have no times: a stretch shows the lines the arm's timed words place in it,
    a line the arm deleted whole included (it lies between the words around it), never every line."""
    from toolkit.formats.plaintext import untimed_turns

    reference = Reference("r", untimed_turns("A reunião começou cedo.\nEle chegou em terceiro.\nA Maria não veio."))
    kept = "a reunião começou cedo a maria não veio".split()
    words = [Word(w, float(k), k + 0.8) for k, w in enumerate(kept)]
    aligned = arm_alignment(reference, Hypothesis("r", words), ScoreOptions())
    third = aligned.stretch(reference, 4.0, 6.0)  # "a maria": the whole third line, as a timed turn would show
    assert _ops(third.steps) == [(w, w, "equal") for w in ("a", "maria", "não", "veio")]
    lost = aligned.stretch(reference, 3.8, 4.0)  # the gap between "cedo" and "a", where the arm said nothing
    assert _ops(lost.steps) == [(w, None, "delete") for w in ("ele", "chegou", "em", "terceiro")]
    first = aligned.stretch(reference, 0.0, 3.8)
    assert {s.reference for s in first.steps} == {"a", "reunião", "começou", "cedo"}
