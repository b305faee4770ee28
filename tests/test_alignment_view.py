"""Readable alignments: ``ablate score --show-alignment`` (sclite pra layout) and the JSON ``alignment`` list."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from score_run import file_options, run_json

from toolkit.cli import main
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.formats import write_ctm, write_reference_textgrid
from toolkit.scorer.alignment_view import aligned_words, render_pra
from toolkit.scorer.score import score_recording


@pytest.fixture
def files(tmp_path):
    ref = Reference(
        "r1",
        [Utterance(0.0, 3.0, "Eu não vou em 2020 com a Conceição.")],
        words=[Word("Eu", 0.1, 0.3), Word("não", 0.4, 0.6), Word("vou", 0.7, 0.9)],
        speech=[Interval(0, 3, "speech")],
    )
    write_reference_textgrid(ref, tmp_path / "r1.TextGrid", 4.0)
    hyp = Hypothesis(
        "r1",
        [
            Word(w, 0.1 + 0.25 * k, 0.3 + 0.25 * k)
            for k, w in enumerate("eu vou em dois mil e trinta com a a Conceição".split())
        ],
    )
    write_ctm(hyp, tmp_path / "r1.ctm")
    (tmp_path / "names.txt").write_text("Conceição\n", encoding="utf-8")
    return tmp_path


def test_show_alignment_prints_pra_lines_with_columns_that_line_up(files, capsys):
    assert main(["score", "--ref", str(files / "r1.TextGrid"), "--hyp", str(files / "r1.ctm"), "--show-alignment"]) == 0
    out = capsys.readouterr().out
    assert "Scores: (#C #S #D #I) 9 1 1 1" in out
    lines = {
        line.split(":", 1)[0]: line
        for line in out.splitlines()
        if line.split(":", 1)[0] in ("REF", "HYP", "EVAL", "R_T1", "H_T1")
    }
    ref, hyp, ev = lines["REF"], lines["HYP"], lines["EVAL"]
    assert ref.split()[1:4] == ["eu", "NÃO", "vou"] and hyp.split()[1:4] == ["eu", "***", "vou"]
    assert (
        ev[hyp.index("***")] == "D" and ev[ref.index("VINTE")] == "S" and hyp[ref.index("VINTE") :].startswith("TRINTA")
    )
    inserted = hyp.index(" A ") + 1
    assert ref[inserted : inserted + 3] == "***" and ev[inserted] == "I"
    assert lines["R_T1"][ref.index("NÃO") :].startswith("0.40")
    assert lines["H_T1"][hyp.index("vou") :].startswith("0.35")


def test_json_alignment_lists_every_step_with_operation_times_and_critical_marks(files, capsys):
    data = run_json(capsys, *file_options(files, ref="r1.TextGrid", hyp="r1.ctm", names="names.txt"))
    steps = data["alignment"]
    ops = [s["op"] for s in steps]
    assert (ops.count("substitute"), ops.count("delete"), ops.count("insert"), ops.count("equal")) == (
        data["substitutions"],
        data["deletions"],
        data["insertions"],
        data["hits"],
    )
    deleted = steps[ops.index("delete")]
    assert deleted == {
        "reference": "não",
        "hypothesis": None,
        "op": "delete",
        "ref_start": 0.4,
        "ref_end": 0.6,
        "hyp_start": None,
        "hyp_end": None,
        "critical": ["negation"],
    }
    assert steps[0]["hyp_start"] == 0.1 and steps[0]["ref_start"] == 0.1
    assert [s["critical"] for s in steps if s["reference"] == "conceição"] == [["name"]]
    assert all(s["critical"] == ["number"] for s in steps if s["reference"] in ("dois", "mil", "vinte"))


def test_untimed_sides_print_no_onset_lines_and_long_alignments_wrap():
    ref = Reference("x", [Utterance(0.0, float("inf"), " ".join(["palavra"] * 40))])
    score = score_recording(ref, Hypothesis("x", [Word("palavra")] * 39))
    text = render_pra(aligned_words(score.aligned), width=60)
    lines = text.splitlines()
    assert not any(line.startswith(("R_T1", "H_T1")) for line in lines)
    assert all(len(line) <= 60 for line in lines)
    assert sum(line.startswith("REF:") for line in lines) > 1
    assert sum(line.count("palavra") + line.count("PALAVRA") for line in lines if line.startswith("REF:")) == 40


def test_run_report_links_a_coloured_alignment_page_per_recording(tmp_path):
    from protocol_corpus import correct, make_corpus, make_run, turns

    from toolkit.evaluate import evaluate_run

    manifest = make_corpus(tmp_path / "corpus", {"r1": "tuning"})
    words = correct(turns())
    index = {w.text: k for k, w in enumerate(words)}
    arm = [w for k, w in enumerate(words) if k != index["não"]]  # the negation deleted
    arm = [Word("cama", w.start, w.end) if w.text == "casa" else w for w in arm] + [Word("extra", 11.9, 11.95)]
    run = make_run(tmp_path / "run", manifest, "tuning", {"baseline": {"r1": words}, "arm": {"r1": arm}})
    evaluation = evaluate_run(run)
    page = (run.root / "alignment" / "arm" / "r1.html").read_text(encoding="utf-8")
    assert 'class="w delete critical"' in page and '<span class="r">não</span>' in page
    assert '<span class="mark">negation</span>' in page
    assert 'class="w substitute"' in page and '<span class="h">cama</span>' in page
    assert 'class="w insert"' in page and '<span class="h">extra</span>' in page
    assert page.split("<div>", 1)[1].count('class="w delete') == 1  # the legend shows each colour too
    assert 'title="insert; reference untimed; hypothesis 11.90-11.95 s"' in page
    report = evaluation.report_html.read_text(encoding="utf-8")
    assert 'href="alignment/arm/r1.html"' in report and 'href="alignment/baseline/r1.html"' in report
    assert "`" not in report and "](alignment/arm/r1.html)" in evaluation.report_markdown.read_text(encoding="utf-8")
    baseline = (run.root / "alignment" / "baseline" / "r1.html").read_text(encoding="utf-8")
    assert "substitute" not in baseline.split("<div>", 1)[1] and "S=0 D=0 I=0" in baseline


def test_an_alignment_step_as_json_holds_every_field_of_the_record() -> None:
    from dataclasses import fields

    from toolkit.scorer.alignment_view import AlignedWord

    step = AlignedWord("não", "nao", "substitute", 1.0, 1.2, 1.01, 1.19, ("negation",))
    data = step.to_json()
    assert list(data) == [f.name for f in fields(AlignedWord)]
    assert data["critical"] == ["negation"] and json.loads(json.dumps(data)) == data


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.floats(),
            st.floats(min_value=0, max_value=1e5),
            # Half a millisecond and its neighbouring floats, where rounding the product could tip the result.
            st.builds(
                lambda k, towards: float(np.nextafter((k + 0.5) / 1000, towards)),
                st.integers(0, 10**8),
                st.sampled_from([-np.inf, np.inf]),
            ),
            st.builds(lambda k: (k + 0.5) / 1000, st.integers(0, 10**8)),
        ),
        max_size=40,
    )
)
def test_milliseconds_round_as_python_rounds(values: list[float]) -> None:
    """The vectorized rounding of step times is Python's ``round(value, 3)`` to the last bit, for any float."""
    from toolkit.scorer.alignment_view import milliseconds

    got = milliseconds(np.array(values, dtype=float)).tolist()
    assert [g.hex() for g in got] == [round(v, 3).hex() for v in values]  # to the last bit, and -0.0 is not 0.0


def test_the_json_steps_are_the_records_as_json(files) -> None:
    """``alignment_json`` (what ``ablate score --format json`` prints) is every ``aligned_words`` step's ``to_json``."""
    from toolkit.formats import read_hypothesis, read_reference
    from toolkit.scorer.alignment_view import STEP_FIELDS, AlignedWord, alignment_json, critical_marks

    assert STEP_FIELDS == tuple(AlignedWord.__dataclass_fields__)
    score = score_recording(read_reference(files / "r1.TextGrid"), read_hypothesis(files / "r1.ctm", "r1"))
    at = score.audit_tokens
    for marks in (None, critical_marks(at, frozenset({"não"}), [("conceição",)])):
        steps = alignment_json(at, marks).split("\n")
        assert steps == [json.dumps(step.to_json(), ensure_ascii=False) for step in aligned_words(at, marks)]
        assert any(json.loads(step)["critical"] for step in steps) == (marks is not None)


_any_word = st.text(st.characters(codec="utf-8"), min_size=1, max_size=6).filter(lambda t: not t.isspace())
_any_time = st.one_of(st.none(), st.floats(0, 1e4, allow_nan=False), st.sampled_from([0.0005, 1.0015, 2.5]))


@settings(max_examples=80, deadline=None)
@given(
    ref=st.lists(st.tuples(_any_word, _any_time), max_size=6),
    hyp=st.lists(st.tuples(_any_word, _any_time), max_size=6),
    negations=st.frozensets(_any_word, max_size=2),
)
def test_the_json_steps_of_any_words_are_the_records_as_json(ref: list, hyp: list, negations: frozenset) -> None:
    """``alignment_json`` encodes columns at once; any text (quotes, backslashes, control characters, any
    script) and any time give what ``json.dumps`` writes for each step's ``to_json``."""
    from toolkit.scorer.alignment_view import alignment_json, critical_marks

    utterance = Utterance(0.0, 2e4, " ".join(text for text, _ in ref))
    reference = Reference("r", [utterance], words=[Word(t, s, None if s is None else s + 0.1) for t, s in ref])
    hypothesis = Hypothesis("r", [Word(t, s, None if s is None else s + 0.1) for t, s in hyp])
    at = score_recording(reference, hypothesis).audit_tokens
    for marks in (None, critical_marks(at, negations, [])):
        plain = [json.dumps(step.to_json(), ensure_ascii=False) for step in aligned_words(at, marks)]
        assert alignment_json(at, marks, ",\n ") == ",\n ".join(plain)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.one_of(st.text(), st.just('a", "b\\\\"')), max_size=8))
def test_a_column_of_texts_is_encoded_as_the_json_encoder_writes_each_text(texts: list) -> None:
    """Any text (surrogates, quotes, separators inside) of a column is written as ``json.dumps`` writes it alone,
    then ``null`` for a step's side without a token (a column of times: tests/test_json_fast_path.py)."""
    from toolkit.scorer.alignment_view import _distinct_texts_json

    assert _distinct_texts_json(texts) == [json.dumps(text, ensure_ascii=False) for text in [*texts, None]]
