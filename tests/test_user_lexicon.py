"""A corpus's own lexicon (equivalences, names, negations): scored, signed, and refused line by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from score_pair import plain_text_pair

from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.pipeline.experiment import load_experiment
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
from toolkit.scorer.normalize.user_lexicon import load_user_lexicon
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
LEXICON = "# corpus-lexicon-1\nequivalence\tbora\tvamos embora\nname\tTiradentes\nnegation\tnadinha\n"


@pytest.fixture
def lexicon(tmp_path: Path) -> Path:
    path = tmp_path / "corpus-lexicon.tsv"
    path.write_text(LEXICON, encoding="utf-8")
    return path


def test_a_user_lexicon_adds_equivalences_names_and_negations(lexicon: Path) -> None:
    plain, own = Normalizer(), Normalizer(user_lexicon=lexicon)
    assert own.words("Bora") == ["vamos", "embora"] and plain.words("Bora") == ["bora"]
    assert "nadinha" in own.negations and "nadinha" not in plain.negations
    assert own.names == ("Tiradentes",) and plain.names == ()
    assert own.signature()["user_lexicon"]["sha256"] == load_user_lexicon(lexicon).sha256
    assert own.signature()["lexicons"] == plain.signature()["lexicons"]
    # Equivalences apply only where equivalences do: verbatim leaves the form alone.
    assert Normalizer(NormalizationPolicy.verbatim(), user_lexicon=lexicon).words("bora") == ["bora"]


def test_the_scorer_uses_the_lexicon_and_signs_it(lexicon: Path, tmp_path: Path) -> None:
    reference = Reference("r1", [Utterance(0.0, 4.0, "bora que Tiradentes não disse nadinha")])
    hypothesis = Hypothesis("r1", [Word(w, None, None) for w in "vamos embora que tira dentes não disse".split()])
    plain = score_recording(reference, hypothesis)
    own = score_recording(reference, hypothesis, ScoreOptions(lexicon=lexicon))
    assert (plain.names.ref_count, own.names.ref_count, own.names.errors) == (0, 1, 1)
    assert (plain.negation.ref_count, own.negation.ref_count) == (1, 2)
    assert own.counts.ref_words == plain.counts.ref_words + 1  # bora -> vamos embora
    assert own.signature.hash != plain.signature.hash and "user-lex:" in own.signature.text
    assert own.signature.fields["normalizers"]["normalized"]["user_lexicon"]["file"] == lexicon.name
    edited = tmp_path / "edited.tsv"
    edited.write_text(LEXICON + "name\tJoaquim\n", encoding="utf-8")
    assert score_recording(reference, hypothesis, ScoreOptions(lexicon=edited)).signature.hash != own.signature.hash


@pytest.mark.parametrize(
    "line, message",
    [
        ("name Tiradentes", r"line 2: unknown entry 'name Tiradentes'"),
        ("equivalence\tbora", r"line 2: expected 'equivalence<TAB>form<TAB>canonical words'"),
        ("equivalence\tbora ai\tvamos", r"line 2: an equivalence form is one word"),
        ("equivalence\tpra\tpara", r"line 2: 'pra' is already in the shipped tables"),
        ("equivalence\tà\tá", r"line 2: 'à' is already in the shipped tables"),
        ("negation\tnão mesmo", r"line 2: a negation is one word"),
        ("name\t", r"line 2: expected 'name<TAB>the name as written'"),
        ("sinônimo\tbora\tvamos", r"line 2: unknown entry 'sinônimo'"),
    ],
)
def test_a_malformed_line_is_refused_with_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(f"# header\n{line}\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"bad.tsv: {message}"):
        load_user_lexicon(path)


def test_score_cli_takes_a_lexicon_and_a_normalizer_version(lexicon: Path, tmp_path: Path, capsys) -> None:
    args = plain_text_pair(tmp_path, "rec1", "Bora ver Dom Pedro II", "vamos embora ver dom pedro segundo")
    assert main([*args, "--lexicon", str(lexicon)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["wer"] == 0 and "norm:ptbr-norm-4@" in data["signature"] and "user-lex:" in data["signature"]
    assert main([*args, "--normalizer", "ptbr-norm-1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["wer"] > 0 and "norm:ptbr-norm-1@" in data["signature"] and "user-lex:" not in data["signature"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("negation\n", encoding="utf-8")
    assert main([*args, "--lexicon", str(bad)]) == 2
    assert f"{bad}: line 1: expected 'negation<TAB>word'" in capsys.readouterr().err


def test_experiment_names_its_lexicon_and_normalizer(lexicon: Path, tmp_path: Path) -> None:
    text = DEMO.read_text(encoding="utf-8")
    path = tmp_path / "experiment.toml"
    path.write_text(f'lexicon = "{lexicon.name}"\nnormalizer = "ptbr-norm-1"\n' + text, encoding="utf-8")
    experiment = load_experiment(path)
    assert (
        experiment.score_options().lexicon == lexicon.resolve()
        and experiment.score_options().normalizer == "ptbr-norm-1"
    )
    path.write_text(text, encoding="utf-8")
    assert (
        load_experiment(path).score_options().lexicon is None
        and load_experiment(path).score_options().normalizer == "ptbr-norm-4"
    )
    for first, message in (
        ("lexicon = 3", "lexicon must be a file name"),
        ('lexicon = "missing.tsv"', "missing.tsv: lexicon file is missing"),
        ('normalizer = "ptbr-norm-0"', "unknown normalizer version 'ptbr-norm-0'; choose from ptbr-norm-1"),
    ):
        path.write_text(f"{first}\n" + text, encoding="utf-8")
        with pytest.raises(InputError, match=message):
            load_experiment(path)
    (tmp_path / "bad.tsv").write_text("name\n", encoding="utf-8")
    path.write_text('lexicon = "bad.tsv"\n' + text, encoding="utf-8")
    with pytest.raises(InputError, match="bad.tsv: line 1"):
        load_experiment(path)


def test_an_edited_lexicon_is_read_again(lexicon: Path) -> None:
    before = Normalizer(user_lexicon=lexicon)
    lexicon.write_text(LEXICON + "equivalence\tbunitu\tbonito\n", encoding="utf-8")
    after = Normalizer(user_lexicon=lexicon)
    assert before.words("bunitu") == ["bunitu"] and after.words("bunitu") == ["bonito"]
    assert after.signature()["user_lexicon"] != before.signature()["user_lexicon"]


def test_the_scorer_reads_an_edited_lexicon_again_in_the_same_process(lexicon: Path) -> None:
    """The scorer's normalizers and signatures were cached by the lexicon's path: an edit went unseen."""
    reference = Reference("r1", [Utterance(0.0, 2.0, "bunitu demais")])
    hypothesis = Hypothesis("r1", [Word(w) for w in "bonito demais".split()])
    before = score_recording(reference, hypothesis, ScoreOptions(lexicon=lexicon))
    lexicon.write_text(LEXICON + "equivalence\tbunitu\tbonito\n", encoding="utf-8")
    after = score_recording(reference, hypothesis, ScoreOptions(lexicon=lexicon))
    assert (before.counts.errors, after.counts.errors) == (1, 0)
    assert after.signature.hash != before.signature.hash


def test_an_experiment_refuses_at_load_a_lexicon_its_normalizer_cannot_use(tmp_path: Path) -> None:
    (tmp_path / "senado.tsv").write_text("# conventions\noptional\tinciso\tbefore roman item\n", encoding="utf-8")
    path = tmp_path / "experiment.toml"
    text = DEMO.read_text(encoding="utf-8")
    path.write_text('lexicon = "senado.tsv"\n' + text, encoding="utf-8")
    assert load_experiment(path).score_options().lexicon == (tmp_path / "senado.tsv").resolve()
    path.write_text('lexicon = "senado.tsv"\nnormalizer = "ptbr-norm-2"\n' + text, encoding="utf-8")
    with pytest.raises(InputError, match="senado.tsv: line 2: optional words need .* ptbr-norm-2"):
        load_experiment(path)
