"""Each bad input of issue 2 through the real ``ablate`` command: one line naming the file and the
problem, a non-zero exit, no traceback, and nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from toolkit.core.transcripts import Reference, Utterance
from toolkit.formats import write_reference_textgrid

RATE = 16000
ABLATE = Path(sys.executable).parent / "ablate"


def ablate(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(ABLATE)] if ABLATE.exists() else [sys.executable, "-m", "toolkit"]
    env = {**os.environ, "PYANNOTE_METRICS_ENABLED": "false", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([*command, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def corpus(root: Path) -> tuple[Path, Path]:
    """Two good recordings with TextGrid references."""
    audio, refs = root / "audio", root / "refs"
    audio.mkdir()
    refs.mkdir()
    rng = np.random.default_rng(3)
    for rid in ("a", "b"):
        sf.write(audio / f"{rid}.wav", rng.uniform(-0.2, 0.2, 2 * RATE), RATE)
        write_reference_textgrid(Reference(rid, [Utterance(0.2, 1.8, "não é isso")]), refs / f"{rid}.TextGrid", 2.0)
    return audio, refs


def textgrid(intervals: str, size: int) -> str:
    return (
        'File type = "ooTextFile"\nObject class = "TextGrid"\n\nxmin = 0\nxmax = 2\ntiers? <exists>\n'
        'size = 1\nitem []:\n    item [1]:\n        class = "IntervalTier"\n        name = "utterances"\n'
        f"        xmin = 0\n        xmax = 2\n        intervals: size = {size}\n{intervals}"
    )


def interval(start: float, end: float, text: str) -> str:
    return (
        f'        intervals [1]:\n            xmin = {start}\n            xmax = {end}\n            text = "{text}"\n'
    )


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def truncated_mp3(audio: Path, refs: Path) -> None:
    (audio / "a.wav").unlink()
    sf.write(audio / "a.mp3", np.random.default_rng(0).uniform(-0.3, 0.3, 2 * RATE), RATE)
    truncate(audio / "a.mp3")


BAD_INPUTS: dict[str, tuple[Callable[[Path, Path], object], str, str]] = {
    "truncated WAV": (lambda audio, refs: truncate(audio / "a.wav"), "a.wav", "truncated audio"),
    "truncated MP3": (truncated_mp3, "a.mp3", "truncated audio"),
    "non-audio file": (
        lambda audio, refs: (audio / "a.wav").write_text("<html>404</html>"),
        "a.wav",
        "not a readable audio file",
    ),
    "empty file": (lambda audio, refs: (audio / "a.wav").write_bytes(b""), "a.wav", "empty file"),
    "zero-length audio": (
        lambda audio, refs: sf.write(audio / "a.wav", np.zeros(0), RATE),
        "a.wav",
        "zero-length audio",
    ),
    "stereo": (lambda audio, refs: sf.write(audio / "a.wav", np.zeros((RATE, 2)), RATE), "a.wav", "has 2 channels"),
    "mixed sample rates": (
        lambda audio, refs: sf.write(audio / "b.wav", np.zeros(2 * 8000), 8000),
        "audio",
        "mixed sample rates (8000 Hz: b.wav; 16000 Hz: a.wav)",
    ),
    "reference with unknown encoding": (
        lambda audio, refs: (refs / "a.TextGrid").write_bytes(textgrid(interval(0, 2, "não"), 1).encode("latin-1")),
        "a.TextGrid",
        "unknown text encoding",
    ),
    "malformed TextGrid": (
        lambda audio, refs: (refs / "a.TextGrid").write_text(
            textgrid("        intervals [1]:\n            xmin = 0\n", 1)
        ),
        "a.TextGrid",
        "malformed",
    ),
    "overlapping intervals": (
        lambda audio, refs: (refs / "a.TextGrid").write_text(
            textgrid(interval(0, 1.2, "um") + interval(1.0, 2, "dois"), 2)
        ),
        "a.TextGrid",
        "overlaps interval 1",
    ),
    "out-of-order intervals": (
        lambda audio, refs: (refs / "a.TextGrid").write_text(
            textgrid(interval(1, 2, "dois") + interval(0, 1, "um"), 2)
        ),
        "a.TextGrid",
        "out of order",
    ),
    "reference without audio": (
        lambda audio, refs: (refs / "b.TextGrid").rename(refs / "c.TextGrid"),
        "c.TextGrid",
        "has no audio",
    ),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_freeze_refuses_bad_input(tmp_path: Path, name: str) -> None:
    audio, refs = corpus(tmp_path)
    spoil, culprit, problem = BAD_INPUTS[name]
    spoil(audio, refs)
    out = tmp_path / "frozen" / "manifest.json"
    result = ablate("manifest", "freeze", audio, "--refs", refs, "--out", out, "--split", "tuning", cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ablate: error: ") and culprit in lines[0] and problem in lines[0], lines[0]
    assert result.stdout == ""
    assert not out.exists() and not out.parent.exists()


def test_verify_refuses_a_hash_mismatch_naming_the_file_and_both_hashes(tmp_path: Path) -> None:
    audio, refs = corpus(tmp_path)
    out = tmp_path / "manifest.json"
    frozen = ablate("manifest", "freeze", audio, "--refs", refs, "--out", out, "--split", "holdout", cwd=tmp_path)
    assert frozen.returncode == 0 and "froze 2 recordings" in frozen.stdout
    ok = ablate("manifest", "verify", out, cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout.strip().startswith("OK: 2 recordings, 4 files match")
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}

    import hashlib

    old = hashlib.sha256((audio / "b.wav").read_bytes()).hexdigest()
    sf.write(audio / "b.wav", np.zeros(2 * RATE), RATE)
    new = hashlib.sha256((audio / "b.wav").read_bytes()).hexdigest()
    result = ablate("manifest", "verify", out, cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(lines) == 1 and "b.wav" in lines[0]
    assert f"sha256 differs: manifest {old}, file {new}" in lines[0]
    assert {p for p in tmp_path.rglob("*")} == set(before)


def test_verify_names_every_differing_file_on_its_own_line(tmp_path: Path) -> None:
    audio, refs = corpus(tmp_path)
    out = tmp_path / "manifest.json"
    assert (
        ablate("manifest", "freeze", audio, "--refs", refs, "--out", out, "--split", "tuning", cwd=tmp_path).returncode
        == 0
    )
    (refs / "a.TextGrid").write_text((refs / "a.TextGrid").read_text().replace("não", "nao"))
    (audio / "b.wav").unlink()
    result = ablate("manifest", "verify", out, cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 2
    assert "a.TextGrid: sha256 differs" in lines[0] and "b.wav: missing" in lines[1]


def test_an_edited_or_missing_manifest_is_refused(tmp_path: Path) -> None:
    missing = ablate("manifest", "verify", tmp_path / "nada.json", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.strip().endswith("nada.json: file not found")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = ablate("manifest", "verify", broken, cwd=tmp_path)
    assert result.returncode == 2 and "broken.json: not a manifest" in result.stderr
    assert "Traceback" not in result.stderr
