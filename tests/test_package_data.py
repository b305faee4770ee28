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


# Runs in the fresh venv, from outside the checkout: the installed package finds its own data.
INSTALLED_PROBE = """
import json
import toolkit
from toolkit.demo import DEMO_EXPERIMENT
from toolkit.protocol.gates import TEMPLATE, load_gates
print(json.dumps({"toolkit": toolkit.__file__, "template": str(TEMPLATE), "demo": str(DEMO_EXPERIMENT),
                  "gates": len(load_gates(TEMPLATE).gates), "demo_bytes": DEMO_EXPERIMENT.read_bytes().decode()}))
"""


@pytest.mark.slow
def test_a_wheel_installed_in_a_fresh_venv_runs_from_anywhere(tmp_path: Path) -> None:
    """A non-editable install carries the gates template and the demo experiment: ``ablate`` needs no checkout."""
    source = tmp_path / "source"  # the checkout's layout, links included, so the build leaves nothing behind
    shutil.copytree(ROOT / "toolkit", source / "toolkit", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "protocol/gates.toml", "experiments/demo/experiment.toml"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    pip = ["-m", "pip", "--disable-pip-version-check", "--no-input"]
    wheels = tmp_path / "dist"
    subprocess.run(
        [sys.executable, *pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("*.whl")
    assert {"toolkit/protocol/gates.toml", "toolkit/demo/experiment.toml"} <= set(zipfile.ZipFile(wheel).namelist())

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python, ablate = venv / "bin" / "python", venv / "bin" / "ablate"
    # The dependencies come from this interpreter's site-packages (offline), added as a plain path: its .pth
    # files (an editable install of the checkout among them) are not run, so only the wheel provides toolkit.
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    parent = Path(next(p for p in sys.path if p.endswith("site-packages")))
    (site / "dependencies.pth").write_text(f"{parent}\n", encoding="utf-8")
    subprocess.run(
        [python, *pip, "install", "--no-deps", "--no-build-isolation", str(wheel)], check=True, capture_output=True
    )

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}

    def run(*command: str | Path) -> str:
        return subprocess.run(command, cwd=outside, env=env, capture_output=True, text=True, check=True).stdout

    assert "challenger" in run(str(ablate), "--help")
    assert run(str(ablate), "challenger", "template") == (ROOT / "protocol" / "gates.toml").read_text(encoding="utf-8")
    data = json.loads(run(str(python), "-c", INSTALLED_PROBE))
    for key in ("toolkit", "template", "demo"):
        assert Path(data[key]).is_relative_to(site) and not Path(data[key]).is_relative_to(ROOT), (key, data[key])
    assert data["gates"] > 0
    assert data["demo_bytes"] == (ROOT / "experiments" / "demo" / "experiment.toml").read_text(encoding="utf-8")
