"""The experiment file is validated strictly, before any decoding, with errors naming the file."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from demo_variant import DEMO, demo_variant
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_corpus import tiny_experiment

from toolkit.core.errors import InputError, InputErrors
from toolkit.pipeline.expand import expand_arms
from toolkit.pipeline.experiment import load_experiment
from toolkit.pipeline.stages import WINDOWS


def test_demo_experiment_loads_with_stages_in_pipeline_order(tmp_path: Path) -> None:
    path = demo_variant(
        tmp_path,
        'enhance = ["gtcrn"]',
        'enhance = ["gtcrn"]\nall = ["onset_repair", "second_combine", "windows", "gtcrn", "vad"]',
    )
    experiment = load_experiment(path)
    assert list(experiment.arms)[:2] == ["baseline", "vad"]
    assert experiment.arms["baseline"].components == ()
    assert [c.stage.name for c in experiment.arms["all"].components] == [
        "enhance",
        "vad",
        "windows",
        "second_model",
        "onset_repair",
    ]
    assert experiment.arms["windows"].config(WINDOWS).seam.onset_tolerance == 0.25
    assert experiment.manifest_path == tmp_path / "corpus" / "manifest.json"


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("length_s = 30.0", "length_s = 4.0", "window length 4.0 s must be longer than its overlap 5.0 s"),
        ("length_s = 30.0", 'length_s = "long"', "components.windows.length_s must be a number"),
        ("threshold = 0.5\n", "threshold = 1.5\n", "threshold"),
        ("min_speech_duration_ms = 250\n", "", "missing min_speech_duration_ms"),
        ('stage = "vad"', 'stage = "vadd"', "unknown stage 'vadd'"),
        ('vad = ["vad"]', 'vad = ["vda"]', "unknown component(s) vda"),
        (
            'recognizer = "whisper_base_greedy"\nmode = "replace"',
            'recognizer = "whisper_base"\nmode = "replace"',
            "other than the primary",
        ),
        ('mode = "replace"', 'mode = "merge"', "must be one of 'replace', 'combine'"),
        ("pair_collar_s = 0.5\n", "", 'mode = "combine" must write out pair_collar_s'),
        ("pair_collar_s = 0.5", "pair_collar_s = -1.0", "pair_collar_s must be a finite number >= 0"),
        ('mode = "replace"', 'mode = "replace"\npair_collar_s = 0.5', 'pair_collar_s applies only to mode = "combine"'),
        ('backend = "faster-whisper"', 'backend = "kaldi"', "backend must be one of"),
        ('language = "pt"', 'language = "en"', "language"),
        ("wet = 1.0", "wet = 2.0", "wet"),
        ("tail_redecode_gap_s = 1.0", "tail_redecode_gap_s = -1.0", "tail_redecode_gap_s must be at least 0"),
        ('vad = ["vad"]', 'vad = ["vad", "vad"]', "more than one vad component"),
        ("\njoin_units = true\n", '\njoin_units = "yes"\n', "join_units must be"),
        ("\nredecode_skipped_s = 3.0\n", "\nredecode_skipped_s = -1.0\n", "redecode_skipped_s (-1.0) must be 0"),
        ("\njoin_units = true\n", "\njoin_units = false\n", "above 0 with join_units = true"),
        ("\nredecode_skipped_s = 3.0\n", "\n", "must write out every parameter; missing redecode_skipped_s"),
        ("shifted_origins_s = []", "shifted_origins_s = [0.0]", "must differ from origin_s"),
        ("seed = 0", 'seed = "zero"', "seed must be an integer in [0, 2^32)"),
        (
            "clamp_word_s = 1.0",
            "clamp_word_s = 0.0",
            "[components.onset_repair] clamp_word_s must be a finite positive",
        ),
        ("clamp_word_s = 1.0", 'clamp_word_s = "1 s"', "components.onset_repair.clamp_word_s must be a number"),
        ("clamp_word_s = 1.0\n", "", "[components.onset_repair] must write out every parameter; missing clamp_word_s"),
        ("clamp_word_s = 1.0", "clamp_word_s = 1.0\nclamp_onsets = true", "[components.onset_repair] has unknown"),
        (
            '[components.onset_repair]\nstage = "onset_repair"\nmin_pause_s = 0.3',
            '[components.onset_repair]\nstage = "onset_repair"\nmin_pause_s = -0.3',
            "[components.onset_repair] min_pause_s must be a finite number >= 0",
        ),
        (
            '# The pause pass.\nvad_profile = "demo"\n',
            "",
            "[components.onset_repair.vad] must be a table of the Silero parameters",
        ),
        (
            'onset_repair = ["onset_repair"]',
            'onset_repair = ["onset_repair", "onset_repair"]',
            "more than one onset_repair component",
        ),
        ("shifted_origins_s = []", "shifted_origins_s = [25.0]", "origin 25.0 s must lie in [0, length_s - overlap_s)"),
    ],
)
def test_bad_experiment_is_refused_naming_file_and_problem(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = demo_variant(tmp_path, old, new)
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    assert str(path) in str(raised.value)
    assert message in str(raised.value)


def test_unknown_arm_is_refused_listing_known_arms() -> None:
    experiment = load_experiment(DEMO)
    with pytest.raises(InputError) as raised:
        experiment.select_arms(["vadd", "baseline", "windos"])
    assert raised.value.lines() == [  # every unknown name on its own line, the closest arm suggested
        f"{DEMO}: no arm 'vadd'; did you mean 'vad'?  (arms: {', '.join(experiment.arms)})",
        f"{DEMO}: no arm 'windos'; did you mean 'windows'?  (arms: {', '.join(experiment.arms)})",
    ]


def test_combination_and_leave_one_out_arms_are_named_by_their_components() -> None:
    experiment = load_experiment(DEMO)
    arms = expand_arms(experiment, ["gtcrn", "vad", "windows"], leave_one_out=True)
    assert arms == {
        "gtcrn+vad+windows": ["gtcrn", "vad", "windows"],
        "vad+windows": ["vad", "windows"],
        "gtcrn+windows": ["gtcrn", "windows"],
        "gtcrn+vad": ["gtcrn", "vad"],
    }
    with pytest.raises(InputError, match="no component 'denoise' \\(components: vad, windows"):
        expand_arms(experiment, ["vad", "denoise"], leave_one_out=False)
    with pytest.raises(InputError, match="no component 'windos'; did you mean 'windows'\\?  \\(components: vad"):
        expand_arms(experiment, ["vad", "windos"], leave_one_out=False)


def _ablate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True)


def test_arms_write_appends_valid_arms_to_the_experiment_file(tmp_path: Path) -> None:
    path = demo_variant(tmp_path, "# The demo experiment", "# A copy of the demo experiment")
    result = _ablate("arms", str(path), "--combine", "vad,windows,onset_repair", "--leave-one-out", "--write")
    assert result.returncode == 0, result.stderr
    arms = load_experiment(path).arms
    # The onset repair is a stage like any other: it runs last, and leaving it out is an arm too.
    assert [c.name for c in arms["vad+windows+onset_repair"].components] == ["vad", "windows", "onset_repair"]
    assert [c.name for c in arms["vad+windows"].components] == ["vad", "windows"]
    assert [c.name for c in arms["vad+onset_repair"].components] == ["vad", "onset_repair"]
    assert "windows+onset_repair" in arms
    assert path.read_text(encoding="utf-8").count('"vad+windows"') == 1
    again = _ablate("arms", str(path), "--combine", "vad,windows", "--leave-one-out", "--write")
    assert again.returncode == 2  # the demo's "windows" arm is windows + onset_repair, not the windows alone
    assert "windows (declared as windows + onset_repair)" in again.stderr and "Traceback" not in again.stderr
    assert path.read_text(encoding="utf-8").count('"vad+windows"') == 1


def test_cli_reports_a_bad_experiment_in_one_line_without_traceback(tmp_path: Path) -> None:
    path = demo_variant(tmp_path, "overlap_s = 5.0", "overlap_s = 40.0")
    result = _ablate("run", str(path), "--split", "tuning")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0]
    assert re.search(r"overlap 40\.0 s", lines[0])
    assert not (tmp_path / "runs").exists()


# Independent mistakes, in the order the loader checks them: each stays one line, whatever else is wrong.
INDEPENDENT_MISTAKES = [
    ('name = "demo"', 'name = "demo"\ncolour = "red"', "unknown top-level key(s) colour"),
    ('language = "pt"', "language = 7", "recognizers.whisper_base.decoding.language must be a string, not 7"),
    ("length_s = 30.0", 'length_s = "long"', "components.windows.length_s must be a number, not 'long'"),
    ("overlap_s = 5.0", 'overlap_s = "x"', "components.windows.overlap_s must be a number, not 'x'"),
    ("wet = 1.0", "wet = 2.0", "gtcrn parameter wet must be >= 0.0 and <= 1.0, got 2.0"),
    ('vad = ["vad"]', 'vad = ["vda"]', "arm 'vad' uses unknown component(s) vda; components are vad, windows"),
    ("time_tolerance_s = 0.3", "time_tolerance_s = 5", "time_tolerance_s must be a number of seconds in [0, 2]"),
    ("seed = 0", 'seed = "zero"', "seed must be an integer in [0, 2^32) (CTranslate2's seed), not zero"),
]


def _with_mistakes(folder: Path, mistakes: list[tuple[str, str, str]]) -> Path:
    text = DEMO.read_text(encoding="utf-8")
    for old, new, _ in mistakes:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = folder / "experiment.toml"
    path.write_text(text, encoding="utf-8")
    return path


@settings(max_examples=25, deadline=None)
@given(chosen=st.sets(st.integers(0, len(INDEPENDENT_MISTAKES) - 1), min_size=1))
def test_every_independent_mistake_is_one_line_naming_the_file(chosen: set[int]) -> None:
    mistakes = [INDEPENDENT_MISTAKES[i] for i in sorted(chosen)]
    with tempfile.TemporaryDirectory() as folder:
        path = _with_mistakes(Path(folder), mistakes)
        with pytest.raises(InputError) as raised:
            load_experiment(path)
    lines = raised.value.lines()
    assert len(lines) == len(mistakes), lines
    for line, (_, _, message) in zip(lines, mistakes, strict=True):
        assert line.startswith(f"{path}: ") and message in line, (line, message)
    if len(mistakes) == 1:  # exactly as a file with one mistake was always reported
        assert not isinstance(raised.value, InputErrors) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "old, new, message",
    [
        # Three arms use the windows component; the onset repair's pause pass and the VAD stage the profile.
        ("length_s = 30.0", 'length_s = "long"', "components.windows.length_s must be a number"),
        ("threshold = 0.5\nneg", "threshold = 1.5\nneg", "[vad_profiles.demo] threshold 1.5 must lie in (0, 1)"),
        ('[components.vad]\nstage = "vad"', '[components.vad]\nstage = "vadd"', "unknown stage 'vadd'"),
        # Two components name this recognizer as their second model.
        (
            'label = "Whisper base, same weights, greedy',
            "label = 3\n# greedy",
            "recognizers.whisper_base_greedy.label must be",
        ),
        ('backend = "faster-whisper"', 'backend = "kaldi"', "[recognizers.whisper_base] backend must be one of"),
    ],
)
def test_what_depends_on_a_refused_table_is_not_reported_as_a_mistake_of_its_own(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    path = demo_variant(tmp_path, old, new)
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    assert raised.value.lines() == [str(raised.value)] and message in str(raised.value)


def test_cli_reports_every_mistake_of_a_file_one_line_each(tmp_path: Path) -> None:
    mistakes = [INDEPENDENT_MISTAKES[i] for i in (2, 5, 7)]
    path = _with_mistakes(tmp_path, mistakes)
    result = _ablate("run", str(path), "--split", "tuning")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3
    for line, (_, _, message) in zip(lines, mistakes, strict=True):
        assert line.startswith(f"ablate: error: {path}: ") and message in line
    assert not (tmp_path / "runs").exists()


def test_a_model_that_cannot_load_stops_the_run_before_decoding(tmp_path: Path) -> None:
    path = tiny_experiment(tmp_path)
    path.write_text(path.read_text().replace('model = "whisper-base"', f'model = "{tmp_path}/no-such-model"', 1))
    result = _ablate("run", str(path), "--split", "tuning")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "no-such-model" in result.stderr and "not found" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_a_manifest_that_fails_verification_stops_the_run(tmp_path: Path) -> None:
    path = tiny_experiment(tmp_path)
    audio = tmp_path / "corpus" / "audio" / "rec.wav"
    data = bytearray(audio.read_bytes())
    data[-10] ^= 0xFF
    audio.write_bytes(bytes(data))
    result = _ablate("run", str(path), "--split", "tuning")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "rec.wav" in result.stderr and "sha256" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_an_unknown_split_is_refused_naming_the_manifest_and_the_closest_split(tmp_path: Path) -> None:
    path = tiny_experiment(tmp_path)
    manifest = tmp_path / "corpus" / "manifest.json"
    result = _ablate("run", str(path), "--split", "holdout")
    assert result.returncode == 2
    assert result.stderr == f"ablate: error: {manifest}: no split 'holdout' (splits: tuning)\n"
    result = _ablate("run", str(path), "--split", "tunning")
    assert result.returncode == 2
    assert result.stderr == f"ablate: error: {manifest}: no split 'tunning'; did you mean 'tuning'?  (splits: tuning)\n"
    result = _ablate("run", str(path), "--split", "tuning", "--arms", "vda,baseline,windos")
    assert result.returncode == 2
    assert [line.split("  (")[0] for line in result.stderr.splitlines()] == [
        f"ablate: error: {path}: no arm 'vda'; did you mean 'vad'?",
        f"ablate: error: {path}: no arm 'windos'; did you mean 'windows'?",
    ]
    assert not (tmp_path / "runs").exists()


def test_shifted_window_origins_add_rerun_arms_next_to_each_windowed_arm(tmp_path: Path) -> None:
    path = demo_variant(tmp_path, "shifted_origins_s = []", "shifted_origins_s = [12.5, 5.0]")
    arms = load_experiment(path).arms
    assert list(arms)[:5] == ["baseline", "vad", "windows", "windows@12.5s", "windows@5s"]
    shifted = arms["windows@12.5s"]
    assert shifted.variant_of == "windows" and arms["windows"].variant_of is None
    config = shifted.config(WINDOWS)
    assert (config.origin_s, config.shifted_origins_s, config.length_s) == (12.5, (), 30.0)
    assert arms["windows"].config(WINDOWS).origin_s == 0.0


@pytest.mark.parametrize(
    "scoring, message",
    [
        ('scoring = { collar = "wide" }', "[scoring] option 'collar' must be int or float, got str"),
        ("scoring = { colar = 0.3 }", "[scoring] unknown scoring option 'colar'"),
        ('scoring = { names = ["Ana"] }', "names come with each recording's reference"),
        ('scoring = { policy = "loose" }', "[scoring] unknown policy 'loose'"),
        ("scoring = { bootstrap_samples = 0 }", "bootstrap_samples >= 1"),
        ('scoring = { normalizer = "ptbr-norm-2" }\nnormalizer = "ptbr-norm-3"', "normalizer is set twice"),
        ("scoring = 3", "[scoring] must be a table"),
    ],
)
def test_a_bad_scoring_table_is_one_line_naming_the_option(tmp_path: Path, scoring: str, message: str) -> None:
    path = demo_variant(tmp_path, "seed = 0\n", f"seed = 0\n{scoring}\n")
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    assert str(path) in str(raised.value) and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_every_bad_scoring_option_is_reported_at_once(tmp_path: Path) -> None:
    table = 'scoring = { collar = "wide", colar = 0.3, policy = "loose", short_word_max_letters = 2 }'
    with pytest.raises(InputErrors) as raised:
        load_experiment(demo_variant(tmp_path, "seed = 0\n", f"seed = 0\n{table}\n"))
    lines = str(raised.value).splitlines()
    assert len(lines) == 3 and all(line.startswith(f"{tmp_path / 'experiment.toml'}: [scoring] ") for line in lines)
    assert ["'collar' must be", "'colar'", "policy 'loose'"] == [
        next(part for part in ("'collar' must be", "'colar'", "policy 'loose'") if part in line) for line in lines
    ]


def test_the_scoring_table_sets_every_option_of_the_scorer(tmp_path: Path) -> None:
    table = (
        'scoring = { policy = "accent-folded", collar = 0.3, short_word_max_letters = 2, seam_margin_s = 1.5, '
        'bootstrap_samples = 500, bootstrap_seed = 7, normalizer = "ptbr-norm-2", time_constrained = true }'
    )
    options = load_experiment(demo_variant(tmp_path, "seed = 0\n", f"seed = 0\n{table}\n")).score_options()
    assert (options.policy, options.collar, options.short_word_max_letters, options.seam_margin_s) == (
        "accent-folded",
        0.3,
        2,
        1.5,
    )
    assert (options.bootstrap_samples, options.bootstrap_seed, options.normalizer, options.time_constrained) == (
        500,
        7,
        "ptbr-norm-2",
        True,
    )
    assert load_experiment(DEMO).score_options() == type(options)()  # no table: the scorer's defaults


def test_a_second_model_is_still_checked_when_the_primary_recognizer_is_refused(tmp_path: Path) -> None:
    text = DEMO.read_text(encoding="utf-8").replace('recognizer = "whisper_base"\n', "recognizer = 7\n", 1)
    text = text.replace('recognizer = "whisper_base_greedy"', 'recognizer = "whisper_tiny"', 1)
    path = tmp_path / "experiment.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    lines = raised.value.lines()
    assert len(lines) == 2 and all(line.startswith(f"{path}: ") for line in lines), lines
    assert "recognizer must be a non-empty string, not 7" in lines[0]
    assert "recognizer 'whisper_tiny' must be one of [recognizers]: " in lines[1] and "None" not in lines[1]
