"""Faults during a run (issue 9): ``kill -9`` at random moments leaves only files that parse and a
resume that equals a clean run; two runs of one experiment at once never both do the work."""

from __future__ import annotations

import csv
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from shared_data import PTBR_DEV, lapsbm_tuning_corpus

from toolkit.formats.ctm import read_ctm
from toolkit.pipeline.runlock import RunLock

pytestmark = [pytest.mark.slow, pytest.mark.needs_model]

ABLATE = Path(sys.executable).parent / "ablate"
DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
RECORDINGS = ("LapsBM_0240", "LapsBM_0385")
ARMS = "baseline,windows"
PARTIAL = re.compile(r"^\..+\.part$")  # an atomic write's temporary file, left by a kill; never read as a result


def _command(experiment: Path, *extra: str) -> list[str]:
    command = [str(ABLATE)] if ABLATE.exists() else [sys.executable, "-m", "toolkit"]
    return [*command, "run", str(experiment), "--split", "tuning", "--arms", ARMS, "--quiet", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "PYANNOTE_METRICS_ENABLED": "false", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _experiment(root: Path) -> Path:
    """Two short real pt-BR recordings with their transcripts, frozen, and the demo experiment."""
    if not PTBR_DEV.is_dir():
        pytest.skip(f"shared pt-BR recordings not found at {PTBR_DEV}")
    lapsbm_tuning_corpus(root / "corpus", RECORDINGS)
    path = root / "experiment.toml"
    shutil.copy(DEMO, path)
    return path


def _check_parses(path: Path) -> None:
    """Every file a run leaves must be complete: JSON, CTM and CSV parse, text decodes."""
    if path.name == ".lock" or PARTIAL.match(path.name):
        return
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        json.loads(text)
    elif path.suffix == ".ctm":
        read_ctm(path)
    elif path.suffix == ".csv":
        assert next(csv.reader(text.splitlines())), path


def _results(run_folder: Path) -> dict[str, object]:
    """What a run concluded: every hypothesis (words and times) and every score table except runtimes."""
    results: dict[str, object] = {}
    for path in sorted((run_folder / "hypotheses").rglob("*.json")):
        results[str(path.relative_to(run_folder))] = json.loads(path.read_text(encoding="utf-8"))["words"]
    for path in sorted((run_folder / "scores").glob("*.csv")):
        if "runtime" not in path.name:
            results[str(path.relative_to(run_folder))] = path.read_text(encoding="utf-8")
    return results


def _run_folder(experiment: Path) -> Path:
    (folder,) = (experiment.parent / "runs").iterdir()
    return folder


def _wait_until_running(process: subprocess.Popen, experiment: Path, launched: float) -> None:
    """Until the run this process started has written its run record (or the process ended)."""
    deadline = time.monotonic() + 300
    while process.poll() is None and time.monotonic() < deadline:
        for record in (experiment.parent / "runs").glob("*/run.json"):
            try:
                if record.stat().st_mtime >= launched and json.loads(record.read_text())["status"] == "running":
                    return
            except (OSError, ValueError):
                pass
        time.sleep(0.01)


def test_kill_at_random_moments_then_resume_equals_a_clean_run(tmp_path: Path) -> None:
    clean = _experiment(tmp_path / "clean")
    subprocess.run(_command(clean), env=_env(), check=True, capture_output=True, timeout=600)

    killed = _experiment(tmp_path / "killed")
    interrupted = 0
    for seed in (1, 2, 3):
        launched = time.time() - 1  # file times have coarse resolution on some file systems
        process = subprocess.Popen(
            _command(killed), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        _wait_until_running(process, killed, launched)
        time.sleep(random.Random(seed).uniform(0.0, 3.0))  # somewhere in decoding, writing or scoring
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        for path in killed.parent.rglob("*"):
            if path.is_file() and "corpus" not in path.parts:
                _check_parses(path)
        (record,) = (killed.parent / "runs").glob("*/run.json")
        interrupted += json.loads(record.read_text())["status"] == "running"
    assert interrupted, "no kill landed inside a run; the test proved nothing"
    resumed = subprocess.run(_command(killed), env=_env(), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((_run_folder(killed) / "run.json").read_text())["status"] == "complete"
    assert _results(_run_folder(killed)) == _results(_run_folder(clean))
    assert _results(_run_folder(clean))


def test_two_runs_at_once_do_the_work_once(tmp_path: Path) -> None:
    experiment = _experiment(tmp_path)
    runs = [
        subprocess.Popen(
            _command(experiment, "--no-score"), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    counts = [re.search(r"(\d+) arm results computed, (\d+) reused", out) for out, _ in outputs]
    computed = [int(match.group(1)) for match in counts if match]
    assert len(computed) == 2 and sum(computed) == len(RECORDINGS) * len(ARMS.split(",")), outputs


def test_a_second_run_waits_for_the_first_and_says_so(tmp_path: Path) -> None:
    experiment = _experiment(tmp_path)
    subprocess.run(_command(experiment, "--no-score"), env=_env(), check=True, capture_output=True, timeout=600)
    lock = RunLock(_run_folder(experiment)).acquire()  # this test plays the first run, still working
    second = subprocess.Popen(
        _command(experiment, "--no-score"), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        message = second.stderr.readline()  # type: ignore[union-attr]
        assert "another run is working in" in message and "waiting" in message
        time.sleep(0.5)
        assert second.poll() is None
    finally:
        lock.release()
    out, _ = second.communicate(timeout=600)
    assert second.returncode == 0 and "0 arm results computed, 4 reused" in out
