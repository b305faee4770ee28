"""A signature that cannot lie: it carries a digest of the scoring code, so a rule changed without a new
normalizer version changes the signature, while a docstring, comment or layout change does not."""

from __future__ import annotations

import shutil
from pathlib import Path

from child_python import probe_json

from toolkit.scorer.code_digest import PACKAGE, code_digest, module_digest, scoring_code_digest
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.signature import scorer_signature

# Scores one pair with the toolkit found first on sys.path and prints the signature and the counts.
PROBE = """
import json
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.score import score_recording
reference = Reference("r", [Utterance(0.0, 3.0, "a gota d'água caiu")])
hypothesis = Hypothesis("r", [Word(w) for w in "a gota dágua caiu".split()])
score = score_recording(reference, hypothesis)
print(json.dumps({"errors": score.counts.errors, "signature": score.signature.text, "hash": score.signature.hash}))
"""


def _copy(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(PACKAGE, root / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _edit(root: Path, relative: str, old: str, new: str) -> None:
    path = root / "toolkit" / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{relative} no longer holds {old!r}; pick another line to edit"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _score_with(root: Path) -> dict:
    """The probe's score with the toolkit copy under ``root`` (run there, this checkout out of the path)."""
    return probe_json(PROBE, root, root)


def test_the_signature_carries_the_code_digest() -> None:
    signature = scorer_signature(ScoreOptions())
    assert signature.fields["code"]["sha256"] == scoring_code_digest() == code_digest()
    assert signature.to_json()["code"]["covers"] == ["toolkit/scorer", "toolkit/formats"]
    assert f"|code:{scoring_code_digest()[:8]}|" in signature.text
    assert f"|src:{scoring_code_digest()[:8]}|" in signature.format(short=True)


def test_docstrings_comments_and_layout_do_not_count_code_does() -> None:
    source = 'def f(x):\n    """Say what."""\n    return x + 1  # one more\n'
    assert module_digest(source) == module_digest("def f(x):\n\n    return (x +\n            1)\n")
    assert module_digest(source) != module_digest("def f(x):\n    return x + 2\n")
    assert module_digest('"""Module."""\nX = 1\n') == module_digest("X = 1\n")
    assert module_digest('X = "text"\n') != module_digest('X = "other text"\n')  # a string that runs counts


def test_a_changed_rule_changes_the_signature_and_a_reworded_docstring_does_not(tmp_path: Path) -> None:
    here = _score_with(PACKAGE.parent)
    reworded = _copy(tmp_path, "reworded")
    _edit(reworded, "scorer/normalize/chars.py", "Split ``text`` into words", "Cut ``text`` into words")
    _edit(reworded, "formats/stm.py", "def read_stm(", "# a comment\ndef read_stm(")
    assert _score_with(reworded) == here
    changed = _copy(tmp_path, "changed")  # the apostrophe of "d'água" no longer joins: a different score
    _edit(changed, "scorer/normalize/chars.py", "APOSTROPHES = frozenset(\"'", 'APOSTROPHES = frozenset("')
    there = _score_with(changed)
    assert there["errors"] != here["errors"]
    assert there["hash"] != here["hash"] and there["signature"] != here["signature"]
    added = _copy(tmp_path, "added")  # a new module in a covered folder counts, even before anything imports it
    (added / "toolkit" / "formats" / "extra.py").write_text("RULE = 1\n", encoding="utf-8")
    assert code_digest(added / "toolkit") != code_digest()
