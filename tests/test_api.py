"""The public scorer API (``toolkit.wer``, ``toolkit.score``, ``toolkit.Scorer``): inputs, errors, signature,
imports."""

from __future__ import annotations

import dataclasses
import doctest
import json
import re
import subprocess
import sys
from pathlib import Path

import jiwer
import pytest

import toolkit
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.formats import write_ctm, write_reference_textgrid
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

ROOT = Path(__file__).resolve().parents[1]
REF = "O réu não assinou o contrato em 2020 com a Conceição."
HYP = "o réu assinou o contrato em dois mil e vinte com a conceição"


def test_readme_python_example_runs_as_written():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## In Python", 1)[1]
    example = re.match(r"\s*```python\n(.*?)```", section, re.S)
    assert example, "the Python section opens with a ```python example"
    test = doctest.DocTestParser().get_doctest(example.group(1), {}, "README In Python", "README.md", 0)
    assert len(test.examples) >= 2
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_import_and_wer_load_neither_scipy_nor_pandas():
    code = (
        "import sys, toolkit; w = toolkit.wer('o réu não assinou', 'o réu assinou'); "
        "print(w, sorted(m for m in ('scipy', 'pandas', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert float(out[0]) == 0.25
    assert out[1].strip() == "[]"


def test_plain_strings_agree_with_jiwer_where_normalization_is_moot():
    ref, hyp = "a casa do joão fica longe daqui", "a casa joão fica muito longe dali"
    assert toolkit.wer(ref, hyp) == pytest.approx(jiwer.wer(ref, hyp))
    counts = toolkit.score(ref, hyp).counts
    out = jiwer.process_words(ref, hyp)
    assert (counts.substitutions, counts.deletions, counts.insertions, counts.hits) == (
        out.substitutions,
        out.deletions,
        out.insertions,
        out.hits,
    )


def test_normalization_applies_numbers_and_abbreviations():
    assert toolkit.wer("Título II, art. 5º", "título segundo artigo quinto") == 0.0
    assert toolkit.wer(REF, HYP) == pytest.approx(1 / 14)
    assert toolkit.score(REF, HYP).negation.flipped == 1


def test_lists_are_micro_averaged_not_averaged_per_item():
    refs, hyps = ["um dois três quatro", "cinco"], ["um dois três quatro", "seis"]
    assert toolkit.wer(refs, hyps) == pytest.approx(1 / 5)  # a mean of the two rates would be 0.5
    corpus = toolkit.score(refs, hyps)
    assert isinstance(corpus, toolkit.CorpusScore) and len(corpus.recordings) == 2
    assert corpus.counts == corpus.recordings[0].counts + corpus.recordings[1].counts
    assert toolkit.wer(tuple(refs), tuple(hyps)) == toolkit.wer(refs, hyps)


def test_records_and_files_score_like_the_library_call(tmp_path):
    ref = Reference(
        "r1",
        [Utterance(0.0, 3.0, "Eu não vou em 2020 com a Conceição.")],
        words=[Word("Eu", 0.1, 0.3), Word("não", 0.4, 0.6)],
        speech=[Interval(0, 3, "speech")],
        names=["Conceição"],
    )
    hyp = Hypothesis(
        "r1",
        [
            Word(w, 0.1 + 0.25 * k, 0.3 + 0.25 * k)
            for k, w in enumerate("eu vou em dois mil e vinte com a conceição".split())
        ],
    )
    write_reference_textgrid(ref, tmp_path / "r1.TextGrid", 5.0)
    write_ctm(hyp, tmp_path / "r1.ctm")
    expected = score_recording(ref, hyp, ScoreOptions())
    from_records = toolkit.score(ref, hyp)
    from_files = toolkit.score(tmp_path / "r1.TextGrid", tmp_path / "r1.ctm", names=["Conceição"])
    for got in (from_records, from_files):
        assert got.to_json() == expected.to_json()
    assert from_files.names.ref_count == 1 and from_files.timing.available
    assert toolkit.Scorer().score(tmp_path / "r1.TextGrid", "eu vou em dois mil e vinte").counts.ref_words == 11


def test_files_of_different_recordings_are_refused(tmp_path):
    from toolkit.core.errors import InputError

    write_reference_textgrid(Reference("r1", [Utterance(0.0, 1.0, "sim")]), tmp_path / "r1.TextGrid", 2.0)
    write_ctm(Hypothesis("r2", [Word("sim", 0.1, 0.3)]), tmp_path / "r2.ctm")
    with pytest.raises(InputError, match="r1.*r2|r2.*r1"):
        toolkit.score(tmp_path / "r1.TextGrid", tmp_path / "r2.ctm")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: toolkit.wer(3, "a"), "reference must be a str"),
        (lambda: toolkit.wer("a", None), "hypothesis must be a str"),
        (lambda: toolkit.wer(["a"], "b"), "hypothesis must be a list too"),
        (lambda: toolkit.wer(["a", 2], ["a", "b"]), r"reference\[1\] must be"),
        (lambda: toolkit.score("a", "b", collar="0.5"), "option 'collar' must be int or float, got str"),
        (lambda: toolkit.score("a", "b", time_constrained=1), "option 'time_constrained' must be bool"),
        (lambda: toolkit.score("a", "b", short_word_max_letters=True), "option 'short_word_max_letters' must be int"),
        (lambda: toolkit.score("a", "b", colar=1), "unknown scoring option 'colar'"),
        (lambda: toolkit.Scorer({"policy": "verbatim"}), "options must be a ScoreOptions"),
        (lambda: toolkit.Scorer().score(["a"], ["a"]), "reference must be one recording"),
        (lambda: toolkit.Scorer().corpus("a b"), "pairs must be an iterable"),
        (lambda: toolkit.Scorer().corpus([("a",)]), r"pairs\[0\] must be a \(reference, hypothesis\) pair"),
        (lambda: toolkit.score(Hypothesis("x", []), "a"), "reference must not be a Hypothesis"),
    ],
)
def test_wrong_arguments_are_refused_naming_the_argument(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_bad_values_and_empty_references():
    with pytest.raises(ValueError, match="reference has 1 item"):
        toolkit.wer(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="unknown policy"):
        toolkit.score("a", "b", policy="lowercase")
    with pytest.raises(ValueError, match="no words"):
        toolkit.wer("", "a b")
    assert toolkit.score("um dois", "").counts.deletions == 2


def test_scorer_owns_a_read_only_signature():
    scorer = toolkit.Scorer(policy="verbatim", collar=0.25)
    signature = scorer.signature()
    assert scorer.score("a", "b").signature is signature
    assert scorer.corpus([("a", "b"), ("c", "c")]).signature is signature
    assert toolkit.Scorer(ScoreOptions(policy="verbatim", collar=0.25)).signature().hash == signature.hash
    assert toolkit.Scorer().signature().hash != signature.hash
    with pytest.raises(dataclasses.FrozenInstanceError):
        signature.text = "edited"  # type: ignore[misc]
    with pytest.raises(TypeError):
        signature.fields["collar_s"] = 9  # type: ignore[index]
    with pytest.raises(TypeError):
        signature.fields["bootstrap"]["seed"] = 9  # type: ignore[index]
    assert json.loads(json.dumps(signature.to_json()))["collar_s"] == 0.25
    assert str(signature) == signature.format() == signature.text


def test_short_signature_abbreviates_like_sacrebleu_and_keeps_the_hash():
    signature = toolkit.Scorer(policy="verbatim").signature()
    short = signature.format(short=True)
    assert short.startswith(f"v:{toolkit.__version__}|p:verbatim|n:ptbr-norm-4@")
    assert short.endswith(f"|h:{signature.hash}") and "numpy" not in short and "numpy" in signature.text
    assert len(short) < len(signature.text)
    assert "|c:0.5|" in short and "|tc:no|" in short


def test_corpus_of_one_scorer_equals_the_library_lists():
    scorer = toolkit.Scorer()
    pairs = [(REF, HYP), ("não vou", "vou"), ("sim", "sim senhor")]
    corpus = scorer.corpus(iter(pairs))
    assert corpus.wer == toolkit.wer([r for r, _ in pairs], [h for _, h in pairs])
    assert corpus.counts.ref_words == sum(scorer.score(r, h).counts.ref_words for r, h in pairs)
