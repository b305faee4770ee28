"""The loudness stage (toolkit/pipeline/loudness.py), the worked "add a stage" example: its gain reaches the
target level or the peak ceiling and leaves time alone; in an arm on real speech its gain is applied, every
cache key after it differs from the arm without it, its words stay in original time, and explain blames
the changes it makes on it."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_data import PTBR_DEV

from toolkit.audio.io import load_audio
from toolkit.audio.signal import Signal, resample
from toolkit.core.errors import InputError
from toolkit.core.json_records import ABSENT, Absent
from toolkit.pipeline.loudness import LOUDNESS, LoudnessConfig, measure_level
from toolkit.pipeline.stage_registry import STAGES

RATE = 16_000
TABLE = {"target_dbfs": -23.0, "gate_dbfs": -70.0, "max_peak_dbfs": -1.0}
CONFIG = LoudnessConfig(**TABLE)


def test_the_loudness_stage_is_registered_between_enhancement_and_vad() -> None:
    names = [stage.name for stage in STAGES]
    assert names.index("enhance") < names.index("loudness") < names.index("vad")
    assert LOUDNESS.cause == "loudness" and LOUDNESS.sources


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target_dbfs": 3.0}, "target_dbfs must be a finite level below 0 dBFS"),
        ({"gate_dbfs": -10.0}, "gate_dbfs .* must lie below target_dbfs"),
        ({"max_peak_dbfs": "loud"}, "max_peak_dbfs must be a number"),
        ({"gain_db": 6.0}, "unknown parameter"),
    ],
)
def test_bad_loudness_settings_are_one_line_naming_the_table(change: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=rf"components\.loud.*{message}"):
        LOUDNESS.parse({**TABLE, **change}, path=Path("experiment.toml"), where="components.loud")


@settings(max_examples=60, deadline=None)
@given(
    level=st.floats(min_value=-60.0, max_value=-3.0),
    crest=st.floats(min_value=1.0, max_value=30.0),
    seconds=st.floats(min_value=0.05, max_value=3.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_gain_reaches_the_target_or_the_ceiling_and_keeps_time(
    level: float, crest: float, seconds: float, seed: int
) -> None:
    """Noise at any level with one peak ``crest`` times its RMS: afterwards its level is the target, or its
    peak is the ceiling (whichever the gain met first), never above either; its time map is the identity."""
    rng = np.random.default_rng(seed)
    samples = rng.standard_normal(round(seconds * RATE)).astype(np.float32)
    samples *= np.float32(10 ** (level / 20) / np.sqrt(np.mean(np.square(samples.astype(np.float64)))))
    samples[len(samples) // 2] = np.float32(min(0.99, crest * 10 ** (level / 20)))
    prepared = LOUDNESS.prepare(CONFIG, Signal.original(samples, RATE))
    after = measure_level(prepared.signal.samples, RATE, CONFIG.gate_dbfs)
    assert after.rms_dbfs is not None and after.peak_dbfs is not None
    assert after.rms_dbfs <= CONFIG.target_dbfs + 1e-3 and after.peak_dbfs <= CONFIG.max_peak_dbfs + 1e-3
    assert min(CONFIG.target_dbfs - after.rms_dbfs, CONFIG.max_peak_dbfs - after.peak_dbfs) < 1e-3
    assert prepared.record["gain_db"] == pytest.approx(
        20 * np.log10(np.max(np.abs(prepared.signal.samples)) / np.max(np.abs(samples))), abs=1e-3
    )
    assert len(prepared.signal.samples) == len(samples)
    times = [k * len(samples) / RATE / 4 for k in range(4)]
    assert [prepared.signal.timemap(t) for t in times] == pytest.approx(times)


def test_silence_keeps_a_gain_of_zero() -> None:
    prepared = LOUDNESS.prepare(CONFIG, Signal.original(np.zeros(RATE, dtype=np.float32), RATE))
    assert prepared.record == {"rms_dbfs": None, "peak_dbfs": None, "gain_db": 0.0}
    assert not prepared.signal.samples.any()


LEAD_S = 3.0  # silence before the speech: a word mapped anywhere but original time lands in it
CLIP = "LapsBM_0240"
ARMS = (
    "[components.loudness]\n"
    'stage = "loudness"\n'
    "target_dbfs = -23.0\n"
    "gate_dbfs = -70.0\n"
    "max_peak_dbfs = -1.0\n\n"
    '[arms]\nbaseline = []\nloud = ["loudness"]\n'
)


@pytest.mark.slow
@pytest.mark.needs_model
def test_a_loudness_arm_on_real_speech(tmp_path: Path) -> None:
    """A quiet real recording (a LapsBM clip at -30 dB after 3 s of silence), decoded by the bundled model with
    and without the stage."""
    if not PTBR_DEV.is_dir():
        pytest.skip(f"shared pt-BR recordings not found at {PTBR_DEV}")
    from toolkit.corpus.freeze import freeze
    from toolkit.evaluate import score_run
    from toolkit.explain import explain
    from toolkit.explain.causes import RECOGNITION
    from toolkit.pipeline.engine import run_experiment
    from toolkit.pipeline.experiment import load_experiment

    audio, refs = tmp_path / "corpus" / "audio", tmp_path / "corpus" / "refs"
    audio.mkdir(parents=True)
    refs.mkdir()
    speech = resample(load_audio(PTBR_DEV / "lapsbm" / f"{CLIP}.wav"), RATE).samples * np.float32(10 ** (-30 / 20))
    quiet = np.concatenate([np.zeros(round(LEAD_S * RATE), dtype=np.float32), speech])
    soundfile.write(audio / f"{CLIP}.wav", quiet, RATE, subtype="FLOAT")
    shutil.copy(PTBR_DEV / "lapsbm" / f"{CLIP}.txt", refs / f"{CLIP}.txt")
    freeze(audio, refs, tmp_path / "corpus" / "manifest.json", split="tuning")
    demo = (Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml").read_text("utf-8")
    (tmp_path / "experiment.toml").write_text(demo[: demo.rindex("\n[arms]") + 1] + ARMS, encoding="utf-8")

    summary = run_experiment(load_experiment(tmp_path), "tuning", progress=False)
    base, loud = (summary.folder.read_arm_output(arm, CLIP) for arm in ("baseline", "loud"))

    # The gain brought the recording to the target (or its peak to the ceiling), as measured on the file.
    assert base.prepared is ABSENT and not isinstance(loud.prepared, Absent)
    gain = loud.prepared["loudness"]["gain_db"]
    assert isinstance(gain, float) and gain > 20
    after = measure_level(quiet * np.float32(10 ** (gain / 20)), RATE, CONFIG.gate_dbfs)
    assert after.rms_dbfs is not None and after.peak_dbfs is not None
    assert min(CONFIG.target_dbfs - after.rms_dbfs, CONFIG.max_peak_dbfs - after.peak_dbfs) == pytest.approx(
        0, abs=0.01
    )
    # Every decode of the arm is keyed apart from the arm without the stage, and so is its result.
    decodes = [{key for key, unit in output.work.items() if unit.kind == "decode"} for output in (base, loud)]
    assert decodes[0] and decodes[1] and not decodes[0] & decodes[1]
    assert loud.unit_key != base.unit_key
    # Its words are in original time: none in the silence before the speech (Whisper starts a first word up to
    # about a second early; toolkit/pipeline/runner.py maps nothing there), none past the end.
    timed = [w for w in loud.words if w.start is not None and w.end is not None]
    assert timed and min(w.start for w in timed) > LEAD_S - 1.3 and max(w.end for w in timed) <= len(quiet) / RATE
    # Whatever changed (the recognized words are this machine's), explain blames the stage, never recognition.
    explanation = explain(score_run(summary.folder), "loud")
    assert all(change.cause != RECOGNITION for change in explanation.changes)


@pytest.mark.parametrize(("baseline_stages", "cause"), [([], "loudness"), (["loudness"], "recognition")])
def test_explain_blames_a_changed_word_on_a_loudness_stage_only_the_arm_has(
    tmp_path: Path, baseline_stages: list[str], cause: str
) -> None:
    from protocol_corpus import correct, make_corpus, make_run, turns

    from toolkit.evaluate import score_run
    from toolkit.explain import explain

    manifest = make_corpus(tmp_path / "corpus", {"r1": "tuning"})
    words = correct(turns())
    changed = [replace(w, text="xyz") if k == 3 else w for k, w in enumerate(words)]
    hypotheses = {"baseline": {"r1": words}, "loud": {"r1": changed}}
    stages = {"baseline": baseline_stages, "loud": ["loudness"]}
    folder = make_run(tmp_path / "exp" / "runs" / "tuning-constructed", manifest, "tuning", hypotheses, stages=stages)
    explanation = explain(score_run(folder), "loud")
    assert [(change.kind, change.cause) for change in explanation.changes] == [("regression", cause)]
    assert explanation.by_cause()[cause]["net"] == 1
