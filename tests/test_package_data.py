"""A built wheel carries what the commands need (the normalizer's tables, the demo, the gates template, the app)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from adjudication_fixture import build_experiment
from app_server import free_port, serving, stop
from child_python import probe_json

from toolkit.scorer.normalize import POLICY_VERSION
from toolkit.scorer.normalize.lexicon import LEXICON_DIR, lexicon_files

ROOT = Path(__file__).resolve().parents[1]

# What a wheel is built from: the checkout's layout, links included (toolkit/app, toolkit/demo/experiment.toml,
# toolkit/protocol/gates.toml), copied so that the build leaves no build/ or egg-info in the checkout.
SOURCES = ("pyproject.toml", "README.md", "protocol/gates.toml", "experiments/demo/experiment.toml")


def _copy_checkout(target: Path, with_app: bool = True) -> Path:
    shutil.copytree(ROOT / "toolkit", target / "toolkit", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    for name in SOURCES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, target / name)
    if with_app:
        shutil.copytree(ROOT / "app", target / "app", ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _build_wheel(tmp_path: Path) -> Path:
    source = _copy_checkout(tmp_path / "source")
    (source / "app" / "__pycache__").mkdir()  # what running the app leaves behind must not ship
    (source / "app" / "__pycache__" / "web.cpython-311.pyc").write_bytes(b"stale")
    wheels = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "wheel", "--no-deps"]
        + ["--no-build-isolation", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("*.whl")
    return wheel


def _app_files() -> set[str]:
    """Every file of the top-level app/ folder as the wheel names it (what Python or a run leaves aside)."""
    return {
        f"toolkit/app/{path.relative_to(ROOT / 'app').as_posix()}"
        for path in (ROOT / "app").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


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
    wheel = _build_wheel(tmp_path)
    target = tmp_path / "installed"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
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
    data = probe_json(PROBE, target, outside)
    assert Path(data["toolkit"]).is_relative_to(target)
    assert Path(data["lexicons"]).is_relative_to(target) and not Path(data["lexicons"]).is_relative_to(ROOT)
    assert data["files"] == sorted(path.name for path in LEXICON_DIR.iterdir())
    # "não" deleted is the only error: Roman numerals, the abbreviation and the ordinal all matched.
    assert (data["errors"], data["ref_words"]) == (1, 15)
    assert "norm:ptbr-norm-4@" in data["signature"]
    # The same code gives the same signature, code digest included, installed or checked out.
    here = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=ROOT)
    assert data["signature"] == json.loads(here.stdout)["signature"]


# Runs in the fresh venv, from outside the checkout: the installed package finds its own data.
INSTALLED_PROBE = """
import json
import toolkit
from toolkit.demo import DEMO_EXPERIMENT
from toolkit.protocol.gates_file import TEMPLATE, load_gates
print(json.dumps({"toolkit": toolkit.__file__, "template": str(TEMPLATE), "demo": str(DEMO_EXPERIMENT),
                  "gates": len(load_gates(TEMPLATE).gates), "demo_bytes": DEMO_EXPERIMENT.read_bytes().decode()}))
"""


def test_the_wheel_carries_every_file_of_the_app_and_nothing_compiled(tmp_path: Path) -> None:
    names = set(zipfile.ZipFile(_build_wheel(tmp_path)).namelist())
    shipped = {name for name in names if name.startswith("toolkit/app/")}
    assert {"toolkit/app/server.py", "toolkit/app/views/review.py", "toolkit/app/components/ablate.js"} <= shipped
    assert shipped == _app_files()


def test_ablate_app_serves_the_app_of_the_checkout_whose_code_runs(tmp_path: Path) -> None:
    """Another checkout (here a copy) runs its own app/, not the one of the checkout installed in editable mode."""
    other = _copy_checkout(tmp_path / "other")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    probe = "from toolkit.cli.app import streamlit_command; print(streamlit_command('127.0.0.1', 8501)[4])"
    entry = subprocess.run(
        [sys.executable, "-c", probe], cwd=other, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(entry) == (other / "app" / "server.py").resolve()
    here = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert Path(here.stdout.strip()) == ROOT / "app" / "server.py"


def test_an_install_without_the_app_says_so_in_one_line(tmp_path: Path) -> None:
    broken = _copy_checkout(tmp_path / "broken", with_app=False)  # toolkit/app links to nothing
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-m", "toolkit", "app", "EXP"], cwd=broken, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0
    missing = "the app's files are missing from this install of toolkit; reinstall it"
    assert result.stderr.strip().splitlines() == [f"ablate: error: {broken / 'toolkit' / 'app'}: {missing}"]


@dataclass(frozen=True)
class Installed:
    """The wheel installed non-editable in a fresh venv: its python, its ablate, its site-packages, the environment
    to run them in (no PYTHONPATH)."""

    python: Path
    ablate: Path
    site: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The checkout built as a wheel and installed in a fresh venv, once for the tests of this module that use it."""
    tmp_path = tmp_path_factory.mktemp("installed")
    wheel = _build_wheel(tmp_path)
    assert {"toolkit/protocol/gates.toml", "toolkit/demo/experiment.toml"} <= set(zipfile.ZipFile(wheel).namelist())
    pip = ["-m", "pip", "--disable-pip-version-check", "--no-input"]
    # A fresh venv sees no PYTHONPATH: one naming a checkout would show pip the checkout's egg-info as the package
    # already installed, and pip would install nothing.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True, env=env
    )
    python = venv / "bin" / "python"
    # The dependencies come from this interpreter's site-packages (offline), added as a plain path: its .pth
    # files (an editable install of the checkout among them) are not run, so only the wheel provides toolkit.
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout.strip()
    )
    parent = Path(next(p for p in sys.path if p.endswith("site-packages")))
    (site / "dependencies.pth").write_text(f"{parent}\n", encoding="utf-8")
    subprocess.run(
        [python, *pip, "install", "--no-deps", "--no-build-isolation", str(wheel)],
        check=True,
        capture_output=True,
        env=env,
    )
    return Installed(python, venv / "bin" / "ablate", site, env)


@pytest.mark.slow
def test_a_wheel_installed_in_a_fresh_venv_runs_from_anywhere(installed: Installed, tmp_path: Path) -> None:
    """A non-editable install carries the gates template, the demo experiment and the app: no checkout needed."""
    python, ablate, site, env = installed.python, installed.ablate, installed.site, installed.env
    outside = tmp_path / "elsewhere"
    outside.mkdir()

    def run(*command: str | Path) -> str:
        return subprocess.run(command, cwd=outside, env=env, capture_output=True, text=True, check=True).stdout

    assert "challenger" in run(str(ablate), "--help")
    assert run(str(ablate), "challenger", "template") == (ROOT / "protocol" / "gates.toml").read_text(encoding="utf-8")
    data = json.loads(run(str(python), "-c", INSTALLED_PROBE))
    for key in ("toolkit", "template", "demo"):
        assert Path(data[key]).is_relative_to(site) and not Path(data[key]).is_relative_to(ROOT), (key, data[key])
    assert data["gates"] > 0
    assert data["demo_bytes"] == (ROOT / "experiments" / "demo" / "experiment.toml").read_text(encoding="utf-8")
    # `ablate demo FOLDER` starts by writing the shipped experiment into the folder the user names (the corpus and
    # the arms after it are the checkout's demo, which `make demo` runs); --experiment-only stops there: from the
    # wheel, outside any checkout, the start of a user's own experiment.
    named = outside / "my demo"
    assert "wrote the demo experiment" in run(str(ablate), "demo", str(named), "--experiment-only")
    assert [p.name for p in named.iterdir()] == ["experiment.toml"]
    assert (named / "experiment.toml").read_bytes() == (ROOT / "experiments" / "demo" / "experiment.toml").read_bytes()

    # ablate app from the installed wheel: Streamlit serves the app's own routes and page, then stops on SIGTERM.
    experiment = build_experiment(tmp_path / "data")
    port = free_port()
    command = [str(ablate), "app", str(experiment), "--port", str(port), "--annotator", "ana"]
    with serving(command, port, env, tmp_path / "app.log", cwd=outside) as server:
        entry = Path(Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")[4].decode())
        assert entry == site / "toolkit" / "app" / "server.py"
        url = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(url, timeout=10) as page:
            assert page.status == 200 and b'<div id="root">' in page.read()
        with pytest.raises(urllib.error.HTTPError) as refused:  # app/web.py's route: audio only with a session
            urllib.request.urlopen(f"{url}/api/audio?recording=entrevista&start=1&end=4", timeout=10)
        assert (refused.value.code, refused.value.read()) == (403, b"log in first")
        # uvicorn shuts down and then re-raises the signal, as Unix expects: -SIGTERM, not -SIGKILL after 20 s.
        assert stop(server) == -signal.SIGTERM
    with pytest.raises(ProcessLookupError):  # nothing of the server's process group is left running
        os.killpg(server.pid, 0)
    with socket.socket() as sock:  # and the port is free again for a server (as any server binds it)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()


@pytest.mark.slow
@pytest.mark.needs_model
def test_the_installed_wheel_runs_the_whole_demo_outside_any_checkout(installed: Installed, tmp_path: Path) -> None:
    """`ablate demo FOLDER` from the wheel, in a folder outside any checkout: corpus, every arm, the protocol and
    a verdict, as `make demo` in a clone. The words depend on the CPU, so the run is checked, not its words."""
    demo_before = _files(ROOT / "experiments" / "demo")
    done = subprocess.run(
        [installed.ablate, "demo", "my demo", "--quiet"],
        cwd=tmp_path,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^verdict \(holdout\): (PROMOTE|RETAIN BASELINE)$", done.stdout, re.MULTILINE), done.stdout[
        -3000:
    ]
    folder = tmp_path / "my demo"
    records = [json.loads((run / "run.json").read_text(encoding="utf-8")) for run in (folder / "runs").iterdir()]
    runs = {r["split"]: r for r in records if not r["config"].get("dither")}
    assert set(runs) == {"tuning", "holdout"} and {r["status"] for r in records} == {"complete"}
    # The calibration of the gates decoded the baseline again on the tuning split under two inaudible dithers.
    dithered = [r for r in records if r["config"].get("dither")]
    assert len(dithered) == 2 and {(r["split"], tuple(a["name"] for a in r["config"]["arms"])) for r in dithered} == {
        ("tuning", ("baseline",))
    }
    tuning = runs["tuning"]
    arms = [arm["name"] for arm in tuning["config"]["arms"]]
    assert len(arms) > 2 and {(m["arm"], m["recording"]) for m in tuning["measurements"]} == {
        (arm, recording) for arm in arms for recording in tuning["recordings"]
    }
    assert (
        subprocess.run([installed.ablate, "audit", "verify", "my demo"], cwd=tmp_path, env=installed.env).returncode
        == 0
    )
    assert _files(ROOT / "experiments" / "demo") == demo_before  # the checkout's demo is not where it ran


def _files(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` and when it last changed (ns)."""
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for path in folder.rglob("*") if path.is_file()}


# Runs `ablate challenger template` in-process, then asks pyannote.audio whether it would report usage online.
TELEMETRY_PROBE = """
import contextlib, io, os, sys
from toolkit.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["challenger", "template"])
if sys.argv[1] == "environment":
    print(os.environ["PYANNOTE_METRICS_ENABLED"])
else:
    from pyannote.audio.telemetry.metrics import is_metrics_enabled
    print(is_metrics_enabled())
"""


@pytest.mark.needs_model
def test_ablate_turns_pyannote_telemetry_off_without_the_makefile_unless_told(tmp_path: Path) -> None:
    """An installed `ablate` has no Makefile to export PYANNOTE_METRICS_ENABLED=false; the command sets it itself."""
    env = {key: value for key, value in os.environ.items() if key != "PYANNOTE_METRICS_ENABLED"}

    def probe(ask: str, **setting: str) -> str:
        command = [sys.executable, "-c", TELEMETRY_PROBE, ask]
        done = subprocess.run(command, cwd=tmp_path, env=env | setting, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    assert probe("pyannote") == "False"
    assert probe("environment", PYANNOTE_METRICS_ENABLED="true") == "true"  # a caller's own choice is kept
