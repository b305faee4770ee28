"""Optionally deletable reference words ("(inciso)", sclite's convention): left out at no cost and scored
as a hit (``sclite -D``), matched when present, in TextGrid, STM and plain-text references, counted
apart in the JSON and named in the signature; ptbr-norm-2 still reads the parentheses as punctuation."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.formats import read_reference, write_reference_textgrid, write_stm
from toolkit.scorer.align import SKIP, align
from toolkit.scorer.metrics.wer import error_counts
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
from toolkit.scorer.normalize.optional import parenthesized
from toolkit.scorer.optional_align import FULL_CELLS, exact, with_optional_words
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

SCLITE = Path("/usr/lib/sctk/bin/sclite")
# Items of art. 7 of the 1988 Constitution as the written law has them, and as its audiobook narrator
# reads them (he says "inciso" before each item and the number once).
LAW = (
    "XXV - assistência gratuita aos filhos e dependentes desde o nascimento até 5 (cinco) anos de idade "
    "em creches e pré-escolas; a) (Revogada). b) (Revogada)."
)
READ = (
    "assistência gratuita aos filhos e dependentes desde o nascimento até cinco anos de idade em creches e pré-escolas"
)


def score(reference: str, hypothesis: str, **options) -> object:
    return score_recording(
        Reference("r", [Utterance(0.0, 9.0, reference)]),
        Hypothesis("r", [Word(w) for w in hypothesis.split()]),
        ScoreOptions(**options),
    )


def counts(reference: str, hypothesis: str, **options) -> tuple[int, int, int, int, int]:
    c = score(reference, hypothesis, **options).counts
    return c.ref_words, c.hits, c.substitutions, c.deletions, c.insertions


def test_parentheses_mark_words_and_spans_and_leave_list_labels_alone() -> None:
    assert parenthesized("até 5 (cinco) anos".split()) == (["até", "5", "cinco", "anos"], frozenset({2}))
    assert parenthesized("a) (Revogada).".split()) == (["a)", "Revogada."], frozenset({1}))
    words, marked = parenthesized("texto (Redação dada pela Emenda Constitucional nº 20, de 1998) fim".split())
    assert marked == frozenset(range(1, 10)) and words[1] == "Redação" and words[9] == "1998"
    assert parenthesized("(aberto sem fechar".split())[1] == frozenset()  # never closed: scored as written
    assert parenthesized("a) b) c)".split())[1] == frozenset()


@pytest.mark.parametrize(
    "hypothesis, expected",
    [
        ("a c", (3, 3, 0, 0, 0)),  # left out: a hit, N keeps it (sclite -D)
        ("a b c", (3, 3, 0, 0, 0)),  # present: matched
        ("a x c", (3, 2, 1, 0, 0)),  # present and wrong: a substitution, as sclite reports it
    ],
)
def test_an_optional_word_costs_nothing_when_left_out(hypothesis: str, expected: tuple) -> None:
    assert counts("a (b) c", hypothesis) == expected
    assert counts("(b) b", "b") == (2, 2, 0, 0, 0)  # the optional one is the one left out


def test_real_law_text_read_aloud() -> None:
    result = score(LAW, "inciso vinte e cinco " + READ + " alínea a revogada alínea b revogada")
    # "(cinco)" after "5" is the law's own reading aid: the narrator's single "cinco" matches "5",
    # the parenthesized one is left out; "(Revogada)" is read and matched.
    assert result.optional_words.to_json() == {"ref_count": 3, "matched": 2, "substituted": 0, "left_out": 1}
    assert result.numbers.ref_count == 2  # the label "XXV -" and "5"; the optional "cinco" is no occurrence
    # What is left is the narrator's convention: "inciso" and twice "alínea", said and not written.
    assert (result.numbers.errors, result.counts.errors, result.counts.insertions) == (0, 3, 3)
    silent = score(LAW, READ)  # a reader who skips what is in parentheses loses nothing for it
    assert silent.optional_words.left_out == 3
    assert silent.counts.deletions == len("vinte e cinco a b".split())  # the labels were not read


def test_optional_words_are_in_no_audit() -> None:
    result = score("ele (não) vai a 5 (cinco) lugares", "ele vai a cinco lugares")
    assert (result.negation.ref_count, result.negation.flipped) == (0, 0)
    assert (result.numbers.ref_count, result.numbers.errors) == (1, 0)
    assert result.counts.errors == 0 and result.short_words.ref_count == 3  # ele, vai, a


def test_json_counts_them_apart_and_the_signature_names_the_rule() -> None:
    result = score("o (inciso) primeiro", "o primeiro")
    data = result.to_json()
    assert data["optional_words"] == {"ref_count": 1, "matched": 0, "substituted": 0, "left_out": 1}
    assert data["hits"] == 3 and data["wer"] == 0
    assert "|align:lev-S1D1I1+opt0|" in result.signature.text
    assert "sclite -D" in result.signature.fields["alignment"]["optional_words"]
    assert result.flat()["optional_left_out"] == 1


def test_cer_counts_left_out_characters_as_correct() -> None:
    c = score("a (bb) c", "a c").counts
    assert (c.ref_chars, c.char_errors) == (len("a bb c"), 0)
    c = score("a (bb) c", "a bx c").counts
    assert c.char_errors == 1


def test_the_second_version_still_reads_parentheses_as_punctuation() -> None:
    assert counts("a (b) c", "a c", normalizer="ptbr-norm-2") == (3, 2, 0, 1, 0)
    old = score("o (inciso) primeiro", "o primeiro", normalizer="ptbr-norm-2")
    assert "+opt0" not in old.signature.text and "optional_words" not in old.signature.fields["alignment"]
    assert old.optional_words.ref_count == 0


def test_verbatim_takes_the_parentheses_off_too() -> None:
    verbatim = Normalizer(NormalizationPolicy.verbatim())
    tokens = verbatim.tokens(["a)", "(Revogada)."], reference=True)
    assert [(t.text, t.optional) for t in tokens] == [("a)", False), ("Revogada.", True)]
    assert [t.optional for t in verbatim.tokens(["(Revogada)."])] == [False]  # a hypothesis has none
    assert score("eu (acho) que", "eu que", policy="verbatim").verbatim.errors == 0


def test_time_constrained_alignment_skips_them_too() -> None:
    reference = Reference("r", [Utterance(0.0, 3.0, "eu (acho) que sim")])
    hypothesis = Hypothesis("r", [Word(w, 0.5 * k, 0.5 * k + 0.4) for k, w in enumerate("eu que sim".split())])
    result = score_recording(reference, hypothesis, ScoreOptions(time_constrained=True))
    assert result.time_constrained.errors == 0 and result.time_constrained.hits == 4


@pytest.mark.parametrize("suffix", [".TextGrid", ".stm", ".txt"])
def test_every_reference_format_carries_the_convention(tmp_path: Path, suffix: str) -> None:
    reference = Reference("lei", [Utterance(0.5, 8.0, LAW)])
    path = tmp_path / f"lei{suffix}"
    if suffix == ".TextGrid":
        write_reference_textgrid(reference, path, duration=9.0)
    elif suffix == ".stm":
        write_stm([reference], path)
    else:
        path.write_text(LAW + "\n", encoding="utf-8")
    back = read_reference(path)
    result = score_recording(back, Hypothesis("lei", [Word(w) for w in READ.split()]))
    assert result.optional_words.ref_count == 3 and result.optional_words.left_out == 3


def _ids(ref: list[str], hyp: list[str]) -> tuple[np.ndarray, np.ndarray]:
    vocab: dict[str, int] = {}
    return (
        np.array([vocab.setdefault(w, len(vocab)) for w in ref]),
        np.array([vocab.setdefault(w, len(vocab)) for w in hyp]),
    )


def _cost(ops: np.ndarray) -> int:
    return int(np.count_nonzero((ops != 0) & (ops != SKIP)))


def test_windows_around_optional_words_find_the_exact_minimum_on_long_read_text() -> None:
    """A 5,000-word reading of list items with a narrator's optional labels: the windowed alignment
    (rapidfuzz outside the windows) costs exactly what the full dynamic programme finds."""
    rng = random.Random(3)
    vocab = "a o de que e da do em para com não lei forma termos direito trabalho serviço salário".split()
    ref: list[str] = []
    optional: list[bool] = []
    while len(ref) < 5000:
        ref.append("inciso")
        optional.append(True)
        item = [rng.choice(vocab) for _ in range(rng.randint(4, 14))]
        ref.extend(item)
        optional.extend([False] * len(item))
    hyp = []
    for word, opt in zip(ref, optional):
        roll = rng.random()
        if opt:
            if roll < 0.7:
                hyp.append(rng.choice(["inciso", "insisto", "em", "inciso"]))
        elif roll < 0.06:
            continue
        elif roll < 0.14:
            hyp.append(rng.choice(vocab))
        else:
            hyp.append(word)
        if rng.random() < 0.03:
            hyp.append(rng.choice(vocab))
    r, h = _ids(ref, hyp)
    mask = np.array(optional)
    windowed = with_optional_words(align(ref, hyp), r, h, mask)
    assert (len(ref) + 1) * (len(hyp) + 1) > FULL_CELLS  # long enough to be aligned in windows
    full_ops, _, _ = exact(r, h, mask)
    assert _cost(windowed.ops) == _cost(full_ops)
    assert error_counts(ref, hyp, windowed).errors == _cost(full_ops)


def _sclite_d(pairs: list[tuple[str, str]], tmp: Path) -> list[tuple[int, int, int, int]]:
    ref, hyp = tmp / "ref.trn", tmp / "hyp.trn"
    ref.write_text("".join(f"{r} (spk_{k:05d})\n" for k, (r, _) in enumerate(pairs)), encoding="utf-8")
    hyp.write_text("".join(f"{h} (spk_{k:05d})\n" for k, (_, h) in enumerate(pairs)), encoding="utf-8")
    out = subprocess.run(
        [str(SCLITE), "-r", str(ref), "trn", "-h", str(hyp), "trn", "-i", "rm", "-D", "-o", "pralign", "stdout"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.findall(r"id: \(spk_(\d+)\)\s*\nScores: \(#C #S #D #I\) (\d+) (\d+) (\d+) (\d+)", out)
    return [tuple(int(x) for x in rest) for _, *rest in sorted(found, key=lambda f: int(f[0]))]


@pytest.mark.skipif(not (SCLITE.exists() or shutil.which("sclite")), reason="NIST sclite (sctk) is not installed")
def test_random_pairs_with_optional_words_count_as_sclite_d_does(tmp_path: Path) -> None:
    rng = random.Random(7)
    vocab = "eu não sei se ele vai lá hoje mas a gente acha que sim".split()
    pairs = []
    for _ in range(200):
        ref = [rng.choice(vocab) for _ in range(rng.randint(2, 25))]
        marked = [f"({w})" if rng.random() < 0.15 else w for w in ref]
        hyp = [w for w in ref if rng.random() > 0.1]
        hyp = [rng.choice(vocab) if rng.random() < 0.08 else w for w in hyp]
        pairs.append((" ".join(marked), " ".join(hyp) or "sim"))
    for (ref, hyp), (c, s, d, i) in zip(pairs, _sclite_d(pairs, tmp_path)):
        ours = score(ref, hyp, policy="verbatim").verbatim
        assert ours.ref_words == c + s + d, (ref, hyp)
        assert ours.errors == s + d + i, (ref, hyp, ours, (c, s, d, i))
