"""A command recognizer as an arm's second model, through the real engine and protocol: decoded once per unit
(windows and their seams, a joined VAD stream and combine work around it), its words in original time, a
failing command a failed arm with its stderr, and an experiment whose challenger decodes with it goes through
tuning, freeze, holdout and gate; a program changed after the freeze is refused in one line naming it.

The experiment is the demo's (every parameter written out) on a constructed corpus; the command is
tests/commands/fixed_words.py, copied into the experiment's folder and run by the system's python3.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from protocol_corpus import make_corpus, make_experiment, one_line

from toolkit.cli import main
from toolkit.core.wordstream import check_stream
from toolkit.protocol.gates_file import TEMPLATE
from toolkit.runs.folder import RunFolder, latest_run

pytestmark = pytest.mark.needs_model  # the demo's primary recognizer (the bundled model) is resolved and hashed

SCRIPT = Path(__file__).resolve().parent / "commands" / "fixed_words.py"
TABLES = """
[recognizers.fixed]
backend = "command"
label = "fixed-rule words (tests/commands/fixed_words.py)"
command = COMMAND
version = "fixed-words 1"
timeout_s = 60.0
output_format = "json"

[components.second_fixed]
stage = "second_model"
recognizer = "fixed"
mode = "replace"

[components.combine_fixed]
stage = "second_model"
recognizer = "fixed"
mode = "combine"
pair_collar_s = 0.5

[components.grid]
stage = "windows"
length_s = 4.0
overlap_s = 1.0
origin_s = 0.0
shifted_origins_s = []
placement = "grid"

[components.grid.seam]
onset_tolerance = 0.25
max_onset_shift = 1.0
context = 0.5
fragment_overlap = 0.5
edge_zone = 0.5
interior_times = true
"""


def _experiment(root: Path, arms: str, mode: str = "--mode=ok", executable: bool = False) -> Path:
    """The demo experiment on a constructed corpus, its recognizer ``fixed`` running the script in ``mode``: as
    ``python3 commands/fixed_words.py`` (the script an argument), or (``executable``) as ``commands/fixed_words``,
    an executable script whose ``#!`` line names python3."""
    manifest = make_corpus(root / "corpus", {"r1": "tuning", "r2": "tuning", "h1": "holdout"})
    program = ["commands/fixed_words"] if executable else ["python3", "commands/fixed_words.py"]
    command = json.dumps([*program, mode, "{audio}", "{output}"])
    folder = make_experiment(root / "exp", manifest, arms + TABLES.replace("COMMAND", command))
    (folder / "commands").mkdir()
    shutil.copy(SCRIPT, folder / "commands" / "fixed_words.py")
    tool = folder / "commands" / "fixed_words"
    tool.write_text("#!/usr/bin/env python3\n" + SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    tool.chmod(0o755)
    return folder


def _run(folder: Path, split: str) -> RunFolder:
    return latest_run(folder, split)


def test_the_command_decodes_each_window_and_its_words_come_back_in_original_time(tmp_path: Path, capsys) -> None:
    folder = _experiment(tmp_path, 'baseline = []\nfixed_windows = ["grid", "second_fixed"]\n')
    assert main(["run", str(folder), "--split", "tuning", "--arms", "fixed_windows", "--quiet"]) == 0
    run = _run(folder, "tuning")
    record = json.loads(run.record.read_text(encoding="utf-8"))
    identity = record["config"]["recognizers"]["fixed"]
    assert identity["backend"] == "command" and identity["decoding"]["version"] == "fixed-words 1"
    # (python3 may be a wrapper script, a pyenv shim: then the interpreter of its #! line is pinned too)
    assert {"executable", "argument"} <= {f["role"] for f in identity["files"]}
    for rid in ("r1", "r2"):
        output = run.read_arm_output("fixed_windows", rid)
        duration = output.duration
        units = [u for u in output.units if u["recognizer"] == "fixed"]
        assert len(units) == 4  # 13 s in windows of 4 s every 3 s: one command run each
        words = run.read_hypothesis("fixed_windows", rid).words
        check_stream(words, duration, "the arm's words")
        assert words and all(w.timed for w in words)
        for word in words:  # each word inside the window that made it, in original seconds
            window = next(u for u in units if str(word.segment_id).startswith(u["unit"]))
            assert window["original_start"] - 1e-6 <= word.start <= word.end <= window["original_end"] + 1e-6
        assert output.seams  # the windows' seams were reconciled around the command's words
        where = output.recognizer_notes["fixed"]["files"]["argument commands/fixed_words.py"]
        assert where == str(folder / "commands" / "fixed_words.py")  # where the pinned script was, on this machine
    capsys.readouterr()
    assert main(["plan", str(folder), "--hours", "10"]) == 0  # a full run planned from the command's measured cost
    assert "fixed_windows" in capsys.readouterr().out


def test_a_failing_command_fails_its_arm_alone_with_its_stderr(tmp_path: Path, capsys) -> None:
    folder = _experiment(tmp_path, 'baseline = []\nfixed = ["second_fixed"]\n', mode="--mode=fail")
    assert main(["run", str(folder), "--split", "tuning", "--arms", "fixed", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "arm fixed, stage decode (fixed, unit" in err
    assert "exited with status 3; stderr: fixed_words: fail on unit.wav | fixed_words: giving up on purpose" in err
    record = json.loads(_run(folder, "tuning").record.read_text(encoding="utf-8"))
    assert [(f["arm"], f["recording"]) for f in record["arm_failures"]] == [("fixed", "r1"), ("fixed", "r2")]
    cache = folder / "cache"
    assert not any("fixed_words" in p.read_text(errors="replace") for p in cache.rglob("*.json"))  # nothing cached


def test_an_executable_that_is_not_there_is_refused_before_anything_runs(tmp_path: Path, capsys) -> None:
    folder = _experiment(tmp_path, 'baseline = []\nfixed = ["second_fixed"]\n', executable=True)
    (folder / "commands" / "fixed_words").unlink()
    freeze = ["challenger", "freeze", str(folder), "--arm", "fixed", "--gates", str(TEMPLATE), "--allow-underpowered"]
    expected = f"ablate: error: {folder / 'commands' / 'fixed_words'}: the command's executable is not an executable"
    for command in (freeze, ["run", str(folder), "--split", "tuning", "--quiet"]):
        assert main(command) == 2
        assert one_line(capsys).startswith(expected)
    assert not (folder / "runs").exists() and not (folder / "protocol" / "challenger.json").exists()


def _speech_corpus(root: Path) -> Path:
    """One 12 s recording of two synthesized sentences (at 1 s and 7 s, silence between), frozen for tuning."""
    import numpy as np
    import soundfile
    import soxr

    from toolkit.core.transcripts import Reference, Utterance
    from toolkit.corpus.freeze import freeze
    from toolkit.demo.sounds import trim_silence
    from toolkit.demo.synth import SPEAKERS, detect_voice, synthesize
    from toolkit.formats import write_reference_textgrid

    (root / "audio").mkdir(parents=True)
    (root / "refs").mkdir()
    samples, utterances = np.zeros(12 * 16000, dtype=np.float32), []
    for text, onset in (("Ninguém sabia onde estava o documento.", 1.0), ("A reunião começou às dez horas.", 7.0)):
        clip = synthesize(text, detect_voice(), SPEAKERS[0], root / "synth-cache")
        speech = trim_silence(soxr.resample(clip.samples, clip.sample_rate, 16000), 16000)[: 4 * 16000]
        start = int(onset * 16000)
        samples[start : start + len(speech)] = 0.5 * speech / np.abs(speech).max()
        utterances.append(Utterance(onset, onset + len(speech) / 16000, text, "a"))
    soundfile.write(root / "audio" / "s1.wav", samples, 16000, subtype="PCM_16")
    write_reference_textgrid(Reference("s1", utterances), root / "refs" / "s1.TextGrid", 12.0)
    freeze(root / "audio", root / "refs", root / "manifest.json", split="tuning")
    return root / "manifest.json"


@pytest.mark.slow
def test_the_command_decodes_the_joined_vad_stream_and_its_words_land_in_speech(tmp_path: Path) -> None:
    manifest = _speech_corpus(tmp_path / "corpus")
    folder = make_experiment(
        tmp_path / "exp", manifest, 'baseline = []\nvad_fixed = ["vad", "second_fixed"]\n' + TABLES
    )
    (folder / "experiment.toml").write_text(
        (folder / "experiment.toml")
        .read_text(encoding="utf-8")
        .replace(
            "COMMAND", json.dumps(["python3", "commands/fixed_words.py", "--threshold=0.02", "{audio}", "{output}"])
        ),
        encoding="utf-8",
    )
    (folder / "commands").mkdir()
    shutil.copy(SCRIPT, folder / "commands" / "fixed_words.py")
    assert main(["run", str(folder), "--split", "tuning", "--arms", "vad_fixed", "--quiet"]) == 0
    run = _run(folder, "tuning")
    output = run.read_arm_output("vad_fixed", "s1")
    units = [u["unit"] for u in output.units]  # the joined speech (and any stretch of it decoded again alone)
    assert units[0] == "vadjoined" and all(u.startswith("vadjoined") for u in units)
    speech = output.mapped_speech()
    words = [w for w in run.read_hypothesis("vad_fixed", "s1").words if w.timed]
    assert words and speech
    for word in words:  # mapped back through the joins: inside the speech Silero kept
        assert any(a - 1e-6 <= word.start and word.end <= b + 1e-6 for a, b in speech), word


@pytest.mark.slow
def test_a_command_challenger_goes_through_the_protocol_and_a_changed_executable_is_refused(
    tmp_path: Path, capsys
) -> None:
    arms = 'baseline = []\nfixed = ["second_fixed"]\ncombined = ["combine_fixed"]\n'
    folder = _experiment(tmp_path, arms, executable=True)
    experiment = str(folder)
    assert main(["run", experiment, "--split", "tuning", "--quiet"]) == 0
    tuning = _run(folder, "tuning")
    for rid in ("r1", "r2"):  # combined word by word with the primary Whisper's words
        output = tuning.read_arm_output("combined", rid)
        assert {u["recognizer"] for u in output.units} == {"whisper_base", "fixed"}
        assert any("combined whisper_base with fixed" in note for note in output.notes)
        check_stream(tuning.read_hypothesis("combined", rid).words, output.duration, "combined words")
    freeze = ["challenger", "freeze", experiment, "--arm", "fixed", "--gates", str(TEMPLATE), "--allow-underpowered"]
    assert main(freeze) == 0
    frozen = json.loads((folder / "protocol" / "challenger.json").read_text(encoding="utf-8"))
    files = frozen["config"]["recognizers"]["fixed"]["files"]
    assert [(f["role"], f["name"]) for f in files][0] == ("executable", "commands/fixed_words")
    assert files[1]["role"] == "interpreter"  # the python3 its #! line names
    assert main(["run", experiment, "--split", "holdout", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["gate", experiment, "--format", "json"]) in (0, 1)  # PROMOTE or RETAIN BASELINE: a verdict

    tool = folder / "commands" / "fixed_words"
    tool.write_text(tool.read_text(encoding="utf-8") + "# changed after the freeze\n", encoding="utf-8")
    assert main(["gate", experiment]) == 2
    refusal = one_line(capsys)
    assert refusal.startswith(f"ablate: error: {tool}: recognizer fixed's executable commands/fixed_words (sha256 ")
    assert "changed after challenger 'fixed' was frozen and the holdout opened: needs fresh test data" in refusal
    assert main(["run", experiment, "--split", "holdout", "--quiet"]) == 2
    refusal = one_line(capsys)
    assert refusal.startswith(f"ablate: error: {tool}: the holdout was already opened; recognizer fixed's executable ")
