"""A plain-text reference is untimed turns: its non-empty lines, or the sentences of a file of one line.

The split only groups the text's words (joined, the turns give back exactly the file's words), makes no
time, and leaves WER as it was: on the shared long-form references, every policy's reference tokens are
the same read as one turn, as lines, or as the sentences of the text joined into one line.
"""

from __future__ import annotations

import math
from itertools import product
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_data import PTBR_LONGFORM

import toolkit
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.formats import read_reference
from toolkit.formats.plaintext import untimed_turns
from toolkit.formats.sentences import sentences, text_turns
from toolkit.scorer.metrics.tokens import tokenize
from toolkit.scorer.metrics.turns import lost_turns
from toolkit.scorer.normalize import POLICY_VERSION, POLICY_VERSIONS
from toolkit.scorer.normalize.registry import POLICIES, normalizer
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import _groups, _reference_words, score_recording

REFS = PTBR_LONGFORM / "refs"
CONVENTIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "ptbr-longform-conventions.tsv"


def _refs() -> list[Path]:
    if not REFS.is_dir():
        pytest.skip(f"the long-form references are not at {REFS} (absent in a bare clone)")
    return sorted(REFS.glob("*.txt"))


def _one_turn(reference: Reference) -> Reference:
    """The reference as a ``.txt`` file was read before: all its text one untimed utterance."""
    return Reference(reference.recording_id, [Utterance(0.0, math.inf, reference.text)])


def test_each_non_empty_line_is_an_untimed_turn_in_order(tmp_path: Path) -> None:
    path = tmp_path / "rec.txt"
    path.write_text("Art. 1º A República.\n\n  I -   a soberania;\r\nII - a cidadania. Fim.\n   \n", encoding="utf-8")
    reference = read_reference(path, duration=4.0)
    assert reference.utterances == [
        Utterance(0.0, math.inf, "Art. 1º A República."),
        Utterance(0.0, math.inf, "I - a soberania;"),
        Utterance(0.0, math.inf, "II - a cidadania. Fim."),  # a line is never cut into sentences
    ]
    assert reference.words == [] and reference.speech == [] and reference.unresolved == []


def test_a_file_of_one_line_is_cut_into_its_sentences(tmp_path: Path) -> None:
    path = tmp_path / "rec.txt"
    path.write_text(
        'O Sr. Silva leu o Art. 5º e os arts. 6 e sete. O inc. I diz: "Não!" Quem? O n. 3 custa 1.000 reais. '
        "Art. 10. É assegurada a participação… 5.) Segue. Foi em 1990. Depois\n",
        encoding="utf-8",
    )
    assert [u.text for u in read_reference(path).utterances] == [
        "O Sr. Silva leu o Art. 5º e os arts. 6 e sete.",
        'O inc. I diz: "Não!"',
        "Quem?",
        "O n. 3 custa 1.000 reais.",
        "Art. 10. É assegurada a participação…",
        "5.) Segue.",
        "Foi em 1990. Depois",  # a number's dot ends no sentence: one turn too few, never a number cut
    ]


def test_only_an_upper_case_letter_a_digit_or_a_quote_opens_a_sentence() -> None:
    assert sentences("Veja o anexo. depois, o resto. (Revogada). 2 itens. “Citação.” Fim") == [
        "Veja o anexo. depois, o resto. (Revogada).",
        "2 itens.",
        "“Citação.”",
        "Fim",
    ]
    assert sentences("Ele é J. Silva. Foi... Ah! Etc. Tal") == ["Ele é J. Silva.", "Foi...", "Ah!", "Etc. Tal"]


def test_a_money_symbol_or_an_ordinal_mark_keeps_its_dot_before_the_number() -> None:
    """No cut between a symbol and its number: "R$. 10 mil" cut there scored a deletion and an insertion."""
    assert sentences("Custou R$. 10 mil. Depois o nº. 6 saiu.") == ["Custou R$. 10 mil.", "Depois o nº. 6 saiu."]


def test_a_text_without_words_has_no_turns_and_an_empty_file_is_refused(tmp_path: Path) -> None:
    blank = tmp_path / "blank.txt"
    blank.write_text(" \n\t\n", encoding="utf-8")
    assert read_reference(blank).utterances == []
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="empty file"):
        read_reference(empty)


def test_a_reference_string_is_split_as_a_file_is(tmp_path: Path) -> None:
    text = "Eu não sei.\nO João sabe. Ele disse."
    path = tmp_path / "rec.txt"
    path.write_text(text, encoding="utf-8")
    assert toolkit.score(text, "eu não sei o joão sabe").utterance_of_word.tolist() == [0, 0, 0, 1, 1, 1, 1, 1]
    assert read_reference(path).utterances == untimed_turns(text)


LINE_WORDS = st.sampled_from(
    "Art. arts. Sr. n. inc. etc. 1.000 5.) 10. 1º J. A a O é Não! Quem? fim. Fim… ... “Dito.” (Revogada). "
    "I - II a) b) de dois mil R$ 10 % : ; ,".split()
)
TEXT = st.lists(
    st.one_of(LINE_WORDS, st.text(min_size=1, max_size=6), st.sampled_from(["\n", "\r\n", "\n\n", "\u2028", " \t "])),
    max_size=40,
).map(" ".join)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(TEXT)
def test_the_turns_give_back_exactly_the_text_s_words_and_none_is_empty(text: str) -> None:
    turns = text_turns(text)
    assert [w for turn in turns for w in turn.split()] == text.split()
    assert all(turn and turn == " ".join(turn.split()) for turn in turns)
    line = " ".join(text.split())
    assert [w for s in sentences(line) for w in s.split()] == line.split()
    assert all(sentences(line))


def test_untimed_turns_give_per_turn_figures_and_never_a_time() -> None:
    reference = Reference("r", untimed_turns("Eu não sei.\nO João saiu cedo.\nEla ficou em casa."))
    words = "eu não sei o joão saiu cedo ela ficou em casa".split()
    baseline = score_recording(
        reference, Hypothesis("r", [Word(w, 0.5 * k, 0.5 * k + 0.4) for k, w in enumerate(words)])
    )
    arm_words = [Word(w, 0.5 * k, 0.5 * k + 0.4) for k, w in enumerate(words) if not 3 <= k <= 6]
    arm = score_recording(reference, Hypothesis("r", arm_words))
    assert baseline.utterance_of_word.tolist() == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    lost = lost_turns(baseline.audit_tokens, arm.audit_tokens, baseline.word_utterances)
    assert (lost.recognized, lost.lost) == (3, 1)
    assert lost.instances[0].reference == "O João saiu cedo." and lost.instances[0].time is None
    assert not arm.timing.available and arm.timing.ref_timed_words == 0


# Every normalizer version, and the current one with the long-form benchmark's reading conventions.
NORMALIZERS = [(version, None) for version in POLICY_VERSIONS] + [(POLICY_VERSION, CONVENTIONS)]


def _tokens(reference: Reference, policy: str, version: str, lexicon: Path | None) -> tuple[list[str], list[bool]]:
    words, utt, _ = _reference_words(reference)
    table = tokenize(normalizer(policy, version, lexicon), words, _groups(utt), reference=True)
    return table.texts, table.optional.tolist()


def test_every_shared_long_form_reference_reads_one_turn_per_line_with_the_same_tokens() -> None:
    """The same reference tokens, so the same WER for any hypothesis, under every policy of every normalizer
    version (and with the benchmark's conventions): read as one turn, as lines, or joined into one line and cut
    into sentences."""
    for path in _refs():
        reference = read_reference(path)
        lines = [" ".join(line.split()) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert [u.text for u in reference.utterances] == lines, path.name
        assert all(u.start == 0.0 and u.end == math.inf for u in reference.utterances)
        by_sentence = Reference(reference.recording_id, untimed_turns(reference.text))
        assert len(by_sentence.utterances) > 1, path.name
        for policy, (version, lexicon) in product(POLICIES, NORMALIZERS):
            expected = _tokens(_one_turn(reference), policy, version, lexicon)
            assert _tokens(reference, policy, version, lexicon) == expected, (path.name, policy, version)
            assert _tokens(by_sentence, policy, version, lexicon) == expected, (path.name, policy, version)


def test_a_stand_in_hypothesis_scores_the_same_against_one_turn_and_against_lines() -> None:
    """Another chapter's text and an edited copy of the chapter as hypotheses: every figure of the score but
    the signature is the same."""
    paths = _refs()
    for k, path in enumerate(paths):
        reference = read_reference(path)
        words = reference.text.split()
        edited = ["xis" if j % 13 == 6 else w for j, w in enumerate(words) if j % 9 != 4]
        other = read_reference(paths[(k + 1) % len(paths)]).text.split()
        for hypothesis in (edited, other):
            stand_in = Hypothesis(reference.recording_id, [Word(w) for w in hypothesis])
            lines, one = (
                score_recording(reference, stand_in).flat(),
                score_recording(_one_turn(reference), stand_in).flat(),
            )
            assert lines == one, path.name


def test_a_run_on_a_plain_text_reference_has_a_per_recording_interval_over_its_lines_and_loses_a_line(
    tmp_path: Path,
) -> None:
    """Scored end to end (a constructed run, no decoding): the lines are the turns the ΔWER interval resamples
    (the report's "one turn: none" is gone), the line the arm dropped is one lost turn, and no change carries a
    time the reference made up."""
    from protocol_corpus import SENTENCES, correct, make_corpus, make_experiment, make_run, turns

    from toolkit.corpus.freeze import freeze
    from toolkit.evaluate import score_run
    from toolkit.explain import explain
    from toolkit.pipeline.experiment import load_experiment

    corpus = tmp_path / "corpus"
    manifest = make_corpus(corpus, {"r1": "tuning"})
    (corpus / "refs" / "r1.TextGrid").unlink()
    (corpus / "refs" / "r1.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    manifest.unlink()
    freeze(corpus / "audio", corpus / "refs", manifest, splits_csv=corpus / "splits.csv")
    experiment = load_experiment(make_experiment(tmp_path / "exp", manifest, 'baseline = []\nvad = ["vad"]\n'))
    said = correct(turns())
    lost = len(SENTENCES[0].split())
    arm = said[:lost] + said[lost + len(SENTENCES[1].split()) :]
    run = make_run(
        experiment.folder / "runs" / "tuning-plain",
        manifest,
        "tuning",
        {"baseline": {"r1": said}, "vad": {"r1": arm}},
        experiment=experiment,
    )
    evaluation = score_run(run, ScoreOptions())
    recording = explain(evaluation, "vad").recordings[0]
    assert len(recording.turn_words) == len(SENTENCES) and recording.interval(200, 0) is not None
    lost_turns_found = evaluation.scores["vad"]["r1"].lost_turns
    assert lost_turns_found is not None and (lost_turns_found.recognized, lost_turns_found.lost) == (3, 1)
    # the deleted words lie between the hypothesis words around them (the arm's times), never at 0..inf
    spans = {(c.time, c.end) for c in recording.changes}
    assert spans == {(said[lost - 1].end, said[lost + len(SENTENCES[1].split())].start)}
