"""Bad input, round 3: each defect a probe of about 470 bad inputs found, as a user would meet it.

Every one is now one line naming the file (and key or line) and the problem, exit 2, nothing written.
"""

from __future__ import annotations

import json
import multiprocessing
import signal
from pathlib import Path

import numpy as np
import pytest
import soundfile
from protocol_corpus import make_corpus, make_experiment

from toolkit.adjudication.users import read_users
from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.formats import read_hypothesis, read_reference
from toolkit.pipeline.experiment import load_experiment
from toolkit.pipeline.workers import _sigint_ignored
from toolkit.protocol.gates_file import TEMPLATE, load_gates

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"


def _one_line(capsys) -> str:
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0, error
    return error


def _json_textgrid(path: Path, start: object, end: object) -> Path:
    grid = {
        "start": 0.0,
        "end": 4.0,
        "tiers": [
            {"name": "utterances", "type": "IntervalTier", "entries": [[0.5, 2.0, "não é isso"]]},
            {"name": "speech", "type": "IntervalTier", "entries": [[0.5, 2.0, "speech"], [start, end, "nonspeech"]]},
        ],
    }
    path.write_text(json.dumps(grid).replace('"NAN"', "NaN").replace('"INF"', "Infinity"), encoding="utf-8")
    return path


@pytest.mark.parametrize("start, end", [("NAN", 3.0), (2.5, "NAN"), (2.5, "INF")])
def test_a_json_textgrid_with_nan_or_infinite_times_is_refused(tmp_path: Path, start: object, end: object) -> None:
    path = _json_textgrid(tmp_path / "r.TextGrid", start, end)
    with pytest.raises(InputError) as raised:
        read_reference(path, duration=4.0)
    assert str(path) in str(raised.value) and "not a finite number" in str(raised.value)


def test_float_audio_with_nan_or_infinite_samples_is_not_frozen(tmp_path: Path, capsys) -> None:
    manifest = make_corpus(tmp_path / "corpus", {"r1": "tuning"})
    audio = tmp_path / "corpus" / "audio" / "r1.wav"
    samples, rate = soundfile.read(audio, dtype="float32")
    samples[48_000] = np.nan
    soundfile.write(audio, samples, rate, subtype="FLOAT")
    manifest.unlink()
    assert (
        main(
            [
                "manifest",
                "freeze",
                str(audio.parent),
                "--refs",
                str(tmp_path / "corpus" / "refs"),
                "--out",
                str(manifest),
                "--split",
                "tuning",
            ]
        )
        == 2
    )
    error = _one_line(capsys)
    assert str(audio) in error and "sample 48000 (3.000 s) is not a finite number" in error
    assert not manifest.exists()


@pytest.mark.parametrize("name", ["../../../../escaped", "..", "a/b", ".hidden", "-x", "a\\b", "tab\there"])
def test_an_arm_name_that_is_a_path_is_refused_at_load(tmp_path: Path, name: str, capsys) -> None:
    text = DEMO.read_text(encoding="utf-8").replace("baseline = []", f"{json.dumps(name)} = []\nbaseline = []")
    path = tmp_path / "experiment.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    assert str(path) in str(raised.value) and "arm name" in str(raised.value)


def test_arms_write_never_leaves_a_file_that_does_not_load(tmp_path: Path, capsys) -> None:
    manifest = make_corpus(tmp_path / "corpus", {"r1": "tuning"})
    experiment = make_experiment(tmp_path / "exp", manifest, "baseline = []\n")
    text = (experiment / "experiment.toml").read_text(encoding="utf-8")
    at = text.rindex("\n[arms]")
    component = '[components.second_replace2]\nstage = "second_model"\nrecognizer = "whisper_base_greedy"\n'
    text = text[:at] + "\n" + component + 'mode = "replace"\n' + text[at:]
    (experiment / "experiment.toml").write_text(text, encoding="utf-8")
    before = (experiment / "experiment.toml").read_bytes()
    assert main(["arms", str(experiment), "--combine", "second_replace,second_replace2", "--write"]) == 2
    error = _one_line(capsys)
    assert "--write refused, nothing written" in error and "more than one second_model" in error
    assert (experiment / "experiment.toml").read_bytes() == before
    assert not list(experiment.glob(".experiment.toml*"))


@pytest.mark.parametrize(
    "old, new, key",
    [
        ("seed = 0", "seed = 99999999999999999999999999", "seed"),
        ("seed = 0", "seed = 4294967296", "seed must be an integer in [0, 2^32)"),
        ("length_s = 30.0", "length_s = inf", "components.windows.length_s = inf is not a finite number"),
        ("length_s = 30.0", "length_s = nan", "components.windows.length_s = nan is not a finite number"),
        ("overlap_s = 5.0", "overlap_s = 1e400", "components.windows.overlap_s = inf is not a finite number"),
        ("seed = 0", "seed = " + "9" * 5000, "not valid TOML"),
    ],
)
def test_every_number_of_an_experiment_is_checked_at_load(tmp_path: Path, old: str, new: str, key: str) -> None:
    path = tmp_path / "experiment.toml"
    path.write_text(DEMO.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    message = str(raised.value)
    assert str(path) in message and key in message and "\n" not in message


@pytest.mark.parametrize("threshold", ["1e400", "9" * 5000, "nan", "inf"])
def test_a_gate_threshold_that_is_not_a_finite_number_is_one_line(tmp_path: Path, threshold: str) -> None:
    text = TEMPLATE.read_text(encoding="utf-8")
    start = text.index("[onset_p95_s]")
    line_start = text.index("threshold", start)
    line_end = text.index("\n", line_start)
    path = tmp_path / "gates.toml"
    path.write_text(text[:line_start] + f"threshold = {threshold}" + text[line_end:], encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_gates(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("value", ["1" + "0" * 400, "1e400", "9" * 5000, "[" * 5000 + "]" * 5000])
def test_huge_numbers_and_deep_nesting_in_json_are_one_line(tmp_path: Path, value: str) -> None:
    words = tmp_path / "r.json"
    words.write_text(f'{{"recording_id": "r", "words": [{{"text": "a", "start": {value}, "end": 1.0}}]}}')
    with pytest.raises(InputError) as raised:
        read_hypothesis(words)
    assert str(words) in str(raised.value) and "malformed JSON" in str(raised.value)
    users = tmp_path / "users.json"
    users.write_text(f'{{"format": {value}, "users": {{}}}}', encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_users(users)
    assert str(users) in str(raised.value) and "not a users file" in str(raised.value)


def test_a_manifest_with_a_huge_number_is_one_line(tmp_path: Path, capsys) -> None:
    manifest = make_corpus(tmp_path / "corpus", {"r1": "tuning"})
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace('"format": 1', '"format": 1e400'), encoding="utf-8")
    assert main(["manifest", "verify", str(manifest)]) == 2
    assert "not a manifest: malformed JSON" in _one_line(capsys)


def _report_sigint_handler(queue: multiprocessing.Queue) -> None:
    queue.put(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)


def test_a_worker_starts_with_ctrl_c_ignored_so_it_never_prints_a_keyboardinterrupt() -> None:
    """Ctrl-C reaches the whole process group; a worker still starting used to die with a traceback. Started
    inside _sigint_ignored it inherits the ignore through exec and Python installs no handler in it."""
    context = multiprocessing.get_context("spawn")
    before = signal.getsignal(signal.SIGINT)  # not always Python's default: a shell's background job ignores it
    for ignored in (True, False):
        queue = context.Queue()
        process = context.Process(target=_report_sigint_handler, args=(queue,))
        if ignored:
            with _sigint_ignored():
                process.start()
        else:
            process.start()
        assert queue.get(timeout=60) is (ignored or before is signal.SIG_IGN)  # an ignore is inherited
        process.join(30)
    assert signal.getsignal(signal.SIGINT) is before  # the parent's is restored
