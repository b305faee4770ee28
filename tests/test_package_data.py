"""A built wheel carries the normalizer's tables: installed outside the checkout, it scores like it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from toolkit.scorer.normalize import POLICY_VERSION
from toolkit.scorer.normalize.lexicon import LEXICON_DIR, lexicon_files

ROOT = Path(__file__).resolve().parents[1]

# Runs in a fresh interpreter whose sys.path starts with the install folder, from outside the checkout.
PROBE = """
import json, sys
import toolkit
from toolkit.scorer.normalize.lexicon import LEXICON_DIR
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.score import score_recording
reference = Reference("r1", [Utterance(0.0, 5.0, "No século XXI, o art. 5º diz que não há Dom Pedro II")])
hypothesis = Hypothesis("r1", [Word(w, None, None) for w in
                               "no século vinte e um o artigo quinto diz que há dom pedro segundo".split()])
score = score_recording(reference, hypothesis)
print(json.dumps({"toolkit": toolkit.__file__, "lexicons": str(LEXICON_DIR),
                  "files": sorted(p.name for p in LEXICON_DIR.iterdir()),
                  "errors": score.counts.errors, "ref_words": score.counts.ref_words,
                  "signature": score.signature.text}))
"""


@pytest.mark.slow
def test_an_installed_wheel_finds_its_lexicons_and_scores(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy, so the build leaves no build/ or egg-info in the checkout
    shutil.copytree(ROOT / "toolkit", source / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    wheels, target = tmp_path / "wheels", tmp_path / "installed"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(wheels), str(source)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"toolkit/scorer/normalize/lexicons/{name}" for name in lexicon_files(POLICY_VERSION)} <= set(names)
    subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**env, "PYTHONPATH": str(target)},
        cwd=outside,
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(result.stdout)
    assert Path(data["toolkit"]).is_relative_to(target)
    assert Path(data["lexicons"]).is_relative_to(target) and not Path(data["lexicons"]).is_relative_to(ROOT)
    assert data["files"] == sorted(path.name for path in LEXICON_DIR.iterdir())
    # "não" deleted is the only error: Roman numerals, the abbreviation and the ordinal all matched.
    assert (data["errors"], data["ref_words"]) == (1, 15)
    assert "norm:ptbr-norm-3@" in data["signature"]
    # The same code gives the same signature, code digest included, installed or checked out.
    here = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=ROOT)
    assert data["signature"] == json.loads(here.stdout)["signature"]
