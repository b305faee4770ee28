"""The command recognizer runs a real external program per unit: its words read back in the unit's seconds, its
files pinned by sha256, and every way it can fail (status, signal, timeout, no output, garbage) one line with its
stderr's tail. The program is tests/commands/fixed_words.py, run by the system's python3 as a separate process."""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import numpy as np
import pytest
from demo_variant import demo_variant

from toolkit.asr import make_recognizer, relation
from toolkit.asr.run_command import CommandFailed
from toolkit.audio.signal import Signal
from toolkit.core.errors import InputError
from toolkit.pipeline.experiment import load_experiment

SCRIPT = Path(__file__).resolve().parent / "commands" / "fixed_words.py"
RATE = 16_000


def _signal() -> Signal:
    """3 s of near silence with a loud second in the middle (1-2 s)."""
    samples = np.full(3 * RATE, 0.001, dtype=np.float32)
    samples[RATE : 2 * RATE] = 0.3 * np.sin(2 * np.pi * 220 * np.arange(RATE) / RATE)
    return Signal.original(samples, RATE)


def _spec(folder: Path, *extra: str, timeout_s: float = 60.0, output_format: str = "json") -> dict[str, object]:
    """A command recognizer running the fixed-rule script (copied into ``folder``) with ``extra`` arguments."""
    if not (folder / "fixed_words.py").exists():
        shutil.copy(SCRIPT, folder / "fixed_words.py")
    return {
        "backend": "command",
        "model": "",
        "folder": str(folder),
        "decoding": {
            "command": ["python3", "fixed_words.py", *extra, "{audio}", "{output}"],
            "version": "fixed-words 1",
            "timeout_s": timeout_s,
            "output_format": output_format,
        },
    }


@pytest.mark.parametrize("output_format", ["json", "ctm"])
def test_a_command_s_words_come_back_in_the_unit_s_seconds(tmp_path: Path, output_format: str) -> None:
    extra = ("--format", output_format)
    recognizer = make_recognizer(_spec(tmp_path, *extra, output_format=output_format))
    transcript = recognizer.transcribe(_signal())
    assert [(w.text, w.start, w.end) for w in transcript.words] == [
        ("eu", 1.05, pytest.approx(1.45)),
        ("não", 1.55, pytest.approx(1.95)),
    ]
    assert transcript.segments == []
    assert recognizer.notes["external_cpu_s"] > 0 and recognizer.notes["external_peak_rss_mb"] > 0


def test_the_identity_pins_the_command_its_executable_its_script_and_version(tmp_path: Path) -> None:
    recognizer = make_recognizer(_spec(tmp_path))
    identity = recognizer.identity()
    roles = {f["role"]: f for f in identity["files"]}
    assert roles["executable"]["name"] == "python3" and roles["argument"]["name"] == "fixed_words.py"
    assert identity["decoding"]["command"][1] == "fixed_words.py" and identity["decoding"]["version"] == "fixed-words 1"
    assert identity["weights_sha256"] is None
    with open(tmp_path / "fixed_words.py", "a", encoding="utf-8") as handle:
        handle.write("# changed\n")
    changed = make_recognizer(_spec(tmp_path)).identity()
    assert changed["program_sha256"] != identity["program_sha256"]
    assert relation(identity, changed)["relation"] == "different program (an external command)"
    with pytest.raises(CommandFailed, match=r"argument .*fixed_words.py changed since the run started"):
        recognizer.transcribe(_signal())  # built before the change: it refuses to run the changed script


def test_a_script_s_interpreter_is_pinned_through_its_hash_bang_line(tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.write_text("#!/usr/bin/env python3\n" + SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    spec = _spec(tmp_path)
    spec["decoding"]["command"] = ["./tool", "{audio}", "{output}"]  # type: ignore[index]
    identity = make_recognizer(spec).identity()
    assert [f["role"] for f in identity["files"]] == ["executable", "interpreter"]
    assert make_recognizer(spec).transcribe(_signal()).words


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("fail", r"^exited with status 3; stderr: fixed_words: fail on unit.wav \| fixed_words: giving up on purpose$"),
        ("crash", r"^was killed by SIGSEGV; stderr: fixed_words: crash on unit.wav$"),
        ("nothing", r"^wrote nothing to unit.json; stderr: fixed_words: nothing on unit.wav$"),
        ("empty", r"^wrote an empty unit.json; stderr: "),
        ("bad-json", r"^wrote unreadable words \(json\): .*; stderr: fixed_words: bad-json"),
        ("nan", r"^wrote unreadable words \(json\): .*NaN is not a finite number"),
        ("past-end", r"^word 3 'depois' ends at 4.5 s, past the unit's end \(3 s\); stderr: "),
        ("backwards", r"^wrote unreadable words \(json\): word 1: word 'eu' has impossible times 0.4-0.2 s"),
    ],
)
def test_each_way_a_command_fails_is_one_line_with_its_stderr_tail(tmp_path: Path, mode: str, expected: str) -> None:
    recognizer = make_recognizer(_spec(tmp_path, "--mode", mode))
    with pytest.raises(CommandFailed, match=expected) as failure:
        recognizer.transcribe(_signal())
    assert "\n" not in str(failure.value)


def test_a_command_that_hangs_is_killed_with_its_children(tmp_path: Path) -> None:
    pids = tmp_path / "pids.txt"
    recognizer = make_recognizer(_spec(tmp_path, "--mode", "hang", "--pids", str(pids), timeout_s=5.0))
    with pytest.raises(CommandFailed, match=r"^still running after timeout_s = 5 s: its process group was killed"):
        recognizer.transcribe(_signal())
    for pid in map(int, pids.read_text(encoding="utf-8").split()):
        assert _gone(pid), f"process {pid} of the hung command is still running"


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a killed orphan may take a moment to be reaped by init)."""
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z"):
                return True  # killed, waiting to be reaped
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_an_empty_unit_runs_no_command(tmp_path: Path) -> None:
    recognizer = make_recognizer(_spec(tmp_path, "--mode", "fail"))
    assert recognizer.transcribe(Signal.original(np.zeros(0, dtype=np.float32), RATE)).words == []


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (["python3", "fixed_words.py", "{output}"], "command must name {audio}"),
        (["python3", "fixed_words.py", "{audio}"], "command must name {output}"),
        (["python3", "fixed_words.py", "{audio}", "{ouput}"], "unknown placeholder(s) {ouput}"),
        (["{audio}", "{output}"], "first argument is its executable, not a placeholder"),
        ([], "non-empty list"),
    ],
)
def test_a_malformed_command_is_refused(tmp_path: Path, command: list[str], problem: str) -> None:
    spec = _spec(tmp_path)
    spec["decoding"]["command"] = command  # type: ignore[index]
    with pytest.raises(InputError) as refusal:
        make_recognizer(spec)
    assert problem in str(refusal.value)


def test_an_unknown_executable_or_model_is_refused_naming_it(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    spec["decoding"]["command"] = ["no-such-recognizer-here", "{audio}", "{output}"]  # type: ignore[index]
    with pytest.raises(InputError, match="^no-such-recognizer-here: the command's executable is not on PATH here$"):
        make_recognizer(spec)
    spec = _spec(tmp_path)
    spec["model"] = "weights/missing.bin"
    with pytest.raises(InputError, match=r"weights/missing.bin: the command recognizer's model .* is not there$"):
        make_recognizer(spec)
    spec["model"] = ""
    spec["decoding"]["command"] = ["python3", "fixed_words.py", "{audio}", "{output}", "{model}"]  # type: ignore[index]
    with pytest.raises(InputError, match="names {model} but the recognizer declares no model"):
        make_recognizer(spec)


def test_a_declared_model_folder_is_hashed_file_by_file(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "a.bin").write_bytes(b"weights")
    spec = _spec(tmp_path)
    spec["model"] = "model"
    first = make_recognizer(spec).identity()
    (tmp_path / "model" / "b.txt").write_text("vocabulary", encoding="utf-8")
    second = make_recognizer(spec).identity()
    assert first["weights_sha256"] and first["weights_sha256"] != second["weights_sha256"]


COMMAND_TABLE = """
[recognizers.mine]
backend = "command"
label = "my decoder"
command = ["python3", "tools/decode.py", "{audio}", "{output}"]
version = "1"
timeout_s = 60.0
output_format = "json"

[components.second_mine]
stage = "second_model"
recognizer = "mine"
mode = "replace"

[arms]"""


def test_the_experiment_file_takes_a_command_recognizer_table(tmp_path: Path) -> None:
    path = demo_variant(tmp_path, "\n[arms]", COMMAND_TABLE)
    path.write_text(path.read_text(encoding="utf-8") + 'mine = ["second_mine"]\n', encoding="utf-8")
    spec = load_experiment(path).recognizers["mine"]
    assert (spec.backend, spec.model, spec.decoding["version"]) == ("command", "", "1")


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('version = "1"\n', "", "[recognizers.mine] must write out every parameter; missing version"),
        ('version = "1"', 'version = "1"\nthreads = 2', "[recognizers.mine] has unknown parameter(s) threads"),
        ('output_format = "json"', 'output_format = "srt"', "recognizers.mine.output_format must be one of"),
        ("timeout_s = 60.0", "timeout_s = 0.0", "timeout_s must be a positive number of seconds"),
        ('"{output}"]', '"{out}"]', "unknown placeholder(s) {out}"),
        ('label = "my decoder"\n', "", "[recognizers.mine] needs a label"),
    ],
)
def test_a_bad_command_table_is_one_line_naming_the_key(tmp_path: Path, old: str, new: str, problem: str) -> None:
    path = demo_variant(tmp_path, "\n[arms]", COMMAND_TABLE.replace(old, new))
    with pytest.raises(InputError) as refusal:
        load_experiment(path)
    assert problem in str(refusal.value) and "\n" not in str(refusal.value)
