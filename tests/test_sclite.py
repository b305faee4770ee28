"""Cross-check with NIST sclite: same total errors (S + D + I) per already-normalized pair.

sclite aligns with its own weights (insertion = deletion = 3, substitution = 4) where ours are
all 1, and breaks ties its own way, so the S/D/I split of a pair may differ between the two (for
example ``a b`` vs ``b c`` is S S for one and D . I for the other). At realistic error rates both
reach the same total; the tests check totals and that hits + substitutions + deletions equals the
reference length on both sides. On near-random pairs (WER around 100%) sclite's weights can buy
an extra hit with two substitutions turned into a deletion and an insertion, giving a larger total
than the true minimum; that last test checks each tool is optimal under its own weights.
"""

from __future__ import annotations

import csv
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from shared_data import PTBR_DEV

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.align import align
from toolkit.scorer.metrics.wer import error_counts
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

SCLITE = Path("/usr/lib/sctk/bin/sclite")
DATA = PTBR_DEV

pytestmark = pytest.mark.skipif(
    not (SCLITE.exists() or shutil.which("sclite")), reason="NIST sclite (Debian package sctk) is not installed"
)

HAND = [
    ("eu não vou", "eu então vou"),
    ("a b", "b c"),
    ("a b c", "d"),
    ("d", "a b c"),
    ("não não não", "não"),
    ("ele disse que não sabe de nada", "ele disse que sabe de tudo nada"),
    ("dois mil e vinte", "dois mil e vinte e um"),
]
VOCAB = "não nunca nem eu você ele ela de a o que e para com um uma dois mil vinte tá né".split()


def _sclite() -> str:
    return str(SCLITE) if SCLITE.exists() else str(shutil.which("sclite"))


def _sclite_counts(pairs: list[tuple[list[str], list[str]]], tmp: Path) -> list[tuple[int, int, int, int]]:
    """(C, S, D, I) per pair from sclite's pralign report."""
    ref = tmp / "ref.trn"
    hyp = tmp / "hyp.trn"
    ref.write_text("".join(f"{' '.join(r)} (spk_{k:05d})\n" for k, (r, _) in enumerate(pairs)), encoding="utf-8")
    hyp.write_text("".join(f"{' '.join(h)} (spk_{k:05d})\n" for k, (_, h) in enumerate(pairs)), encoding="utf-8")
    out = subprocess.run(
        [_sclite(), "-r", str(ref), "trn", "-h", str(hyp), "trn", "-i", "rm", "-e", "utf-8", "-o", "pralign", "stdout"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.findall(r"id: \(spk_(\d+)\)\s*\nScores: \(#C #S #D #I\) (\d+) (\d+) (\d+) (\d+)", out)
    by_id = {int(k): tuple(int(x) for x in rest) for k, *rest in found}
    assert len(by_id) == len(pairs), "sclite did not report every pair"
    return [by_id[k] for k in range(len(pairs))]


def _check(pairs: list[tuple[list[str], list[str]]], tmp: Path) -> None:
    theirs = _sclite_counts(pairs, tmp)
    for (ref, hyp), (c, s, d, i) in zip(pairs, theirs):
        ours = error_counts(ref, hyp, align(ref, hyp))
        assert ours.errors == s + d + i, (ref, hyp, ours, (c, s, d, i))
        assert c + s + d == len(ref) == ours.hits + ours.substitutions + ours.deletions
        # The full scorer gives the same count on already-normalized text.
        if ref:
            full = score_recording(
                Reference("x", [Utterance(0.0, 1.0, " ".join(ref))]),
                Hypothesis("x", [Word(w) for w in hyp]),
                ScoreOptions(policy="verbatim"),
            )
            assert full.counts.errors == ours.errors


def test_hand_pairs_match_sclite(tmp_path):
    _check([(r.split(), h.split()) for r, h in HAND], tmp_path)


def test_random_pairs_match_sclite(tmp_path):
    rng = random.Random(11)
    pairs = []
    for _ in range(300):
        ref = [rng.choice(VOCAB) for _ in range(rng.randint(1, 40))]
        pairs.append((ref, _perturb(ref, rng)))
    _check(pairs, tmp_path)


def test_near_random_pairs_differ_only_by_sclite_weights(tmp_path):
    rng = random.Random(11)
    pairs = [
        ([rng.choice(VOCAB) for _ in range(rng.randint(1, 30))], [rng.choice(VOCAB) for _ in range(rng.randint(0, 30))])
        for _ in range(300)
    ]
    for (ref, hyp), (_, s, d, i) in zip(pairs, _sclite_counts(pairs, tmp_path)):
        ours = error_counts(ref, hyp, align(ref, hyp))
        assert ours.errors <= s + d + i
        assert 4 * s + 3 * (d + i) <= 4 * ours.substitutions + 3 * (ours.deletions + ours.insertions)


def _perturb(words: list[str], rng: random.Random) -> list[str]:
    """A recognizer-like corruption: drops, substitutions, insertions and negation flips."""
    out = []
    for word in words:
        roll = rng.random()
        if roll < 0.08:
            continue
        if roll < 0.16:
            out.append(rng.choice(VOCAB))
        elif roll < 0.20 and word == "não":
            out.append("então")
        else:
            out.append(word)
        if rng.random() < 0.05:
            out.append(rng.choice(VOCAB))
    return out


def test_real_ptbr_transcripts_match_sclite(tmp_path):
    tsv = DATA / "commonvoice-pt" / "validated.tsv"
    if not tsv.exists():
        pytest.skip(f"real pt-BR development data not found at {DATA}")
    norm = Normalizer(NormalizationPolicy.normalized())
    with tsv.open(encoding="utf-8", newline="") as handle:
        sentences = [row["sentence"] for row in csv.DictReader(handle, delimiter="\t")]
    sentences += [p.read_text(encoding="utf-8") for p in sorted((DATA / "lapsbm").glob("*.txt"))]
    refs = [norm.words(s) for s in sentences]
    refs = [r for r in refs if r]
    rng = random.Random(5)
    pairs = [(r, _perturb(r, rng)) for r in refs]
    pairs += [(refs[k], refs[(k + 1) % len(refs)]) for k in range(0, len(refs), 3)]  # unrelated sentences
    assert len(pairs) > 100
    _check(pairs, tmp_path)
