"""Named Silero profiles: the demo defines one and names it in four places; the loader resolves it into
exactly the configurations the four copied tables gave, and bad profiles are one line naming the file."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from demo_variant import DEMO, INLINE_SILERO, demo_variant

from toolkit.audio.vad import LIBRARY_DEFAULTS, SileroVadConfig
from toolkit.core.config import build_config
from toolkit.core.errors import InputError, Mistakes
from toolkit.pipeline.cache import unenhanced_lineage, vad_key
from toolkit.pipeline.experiment import Experiment, load_experiment
from toolkit.pipeline.vad_profiles import profile_table, resolve_vad_profiles

LINEAGE = unenhanced_lineage("0" * 64, 16000)


def _silero_configs(experiment: Experiment) -> dict[str, SileroVadConfig]:
    """Every Silero configuration the experiment holds, by where it is used."""
    batched = experiment.recognizers["whisper_base_batched"].decoding["silero"]
    return {
        "recognizers.whisper_base_batched.decoding.silero": build_config(
            SileroVadConfig, batched, path="-", where="silero"
        ),
        "components.vad": experiment.components["vad"].config.silero(),
        "components.windows.pauses.vad": experiment.components["windows"].config.pauses.vad,
        "components.onset_repair.vad": experiment.components["onset_repair"].config.vad,
    }


def test_the_demo_with_one_profile_resolves_to_the_four_copied_tables_it_replaced() -> None:
    profiled, copied = load_experiment(DEMO), load_experiment(INLINE_SILERO)
    assert "[vad_profiles.demo]" in DEMO.read_text(encoding="utf-8")
    assert "vad_profile" not in INLINE_SILERO.read_text(encoding="utf-8")
    assert profiled.recognizers == copied.recognizers
    assert profiled.components == copied.components
    assert profiled.arms == copied.arms
    # What run.json records of the configuration, byte for byte, and every VAD cache key.
    for name in profiled.recognizers:
        assert json.dumps(profiled.recognizers[name].to_json()) == json.dumps(copied.recognizers[name].to_json())
    for name in profiled.arms:
        assert json.dumps(profiled.arms[name].to_json()) == json.dumps(copied.arms[name].to_json())
    configs = _silero_configs(profiled)
    assert configs == _silero_configs(copied)
    keys = {where: vad_key(LINEAGE, config) for where, config in configs.items()}
    assert len(set(keys.values())) == 1, keys  # one profile: one cached VAD pass per recording


def test_resolving_does_not_change_the_parsed_file() -> None:
    raw = {
        "vad_profiles": {"p": dict(json.loads(json.dumps(vars(LIBRARY_DEFAULTS))))},
        "components": {
            "v": {
                "stage": "vad",
                "vad_profile": "p",
                "merge_max_s": 0.0,
                "merge_max_gap_s": 0.0,
                "join_units": False,
                "redecode_skipped_s": 0.0,
            }
        },
    }
    before = json.dumps(raw)
    mistakes = Mistakes()
    resolved = resolve_vad_profiles(raw, Path("e.toml"), mistakes).raw
    assert not mistakes.found
    assert json.dumps(raw) == before
    assert "vad_profiles" not in resolved and "vad_profile" not in resolved["components"]["v"]
    assert resolved["components"]["v"]["threshold"] == LIBRARY_DEFAULTS.threshold


def test_a_profile_written_out_loads_back_as_the_same_configuration(tmp_path: Path) -> None:
    config = replace(load_experiment(DEMO).components["vad"].config.silero(), speech_pad_ms=30, device="cpu")
    text = DEMO.read_text(encoding="utf-8")
    start = text.index("\n[vad_profiles.demo]\n")
    end = text.index("\n\n", start) + 1
    path = demo_variant(tmp_path, text[start:end], "\n" + profile_table("demo", config))
    assert _silero_configs(load_experiment(path)) == dict.fromkeys(_silero_configs(load_experiment(DEMO)), config)


VAD_STAGE, PAUSE_PASS = 'stage = "vad"\nvad_profile = "demo"', '# The pause pass.\nvad_profile = "demo"'
WINDOW_PAUSES = '# The Silero pass that finds the pauses.\nvad_profile = "demo"'
# Case -> (text of the demo file, what replaces it, what the one-line error says).
BAD_PROFILES = {
    "unknown name": (
        VAD_STAGE,
        VAD_STAGE.replace("demo", "dmeo"),
        "[components.vad] vad_profile = 'dmeo' is not a profile; profiles: demo",
    ),
    "not a name": (
        PAUSE_PASS,
        PAUSE_PASS.replace('"demo"', "3"),
        "[components.onset_repair] vad_profile = 3 is not a profile; profiles: demo",
    ),
    "a list, not a name": (
        PAUSE_PASS,
        PAUSE_PASS.replace('"demo"', '["demo"]'),
        "[components.onset_repair] vad_profile = ['demo'] is not a profile; profiles: demo",
    ),
    "typo in a profile": (
        "threshold = 0.5\nneg",
        "treshold = 0.5\nneg",
        "[vad_profiles.demo] has unknown parameter(s) treshold",
    ),
    "field missing": (
        "threshold = 0.5\nneg",
        "neg",
        "[vad_profiles.demo] must write out every parameter; missing threshold",
    ),
    "value out of range": (
        "threshold = 0.5\nneg",
        "threshold = 1.5\nneg",
        "[vad_profiles.demo] threshold 1.5 must lie",
    ),
    "profile and inline fields": (
        VAD_STAGE,
        VAD_STAGE + "\nspeech_pad_ms = 30",
        "[components.vad] names vad_profile = 'demo' and also sets Silero field(s) speech_pad_ms: neither wins",
    ),
    "profile and a table": (
        PAUSE_PASS,
        PAUSE_PASS + "\nvad = { threshold = 0.5 }",
        "[components.onset_repair] names vad_profile = 'demo' and also sets a vad table: neither wins",
    ),
    "pauses: profile and a table": (
        WINDOW_PAUSES,
        WINDOW_PAUSES + "\nvad = {}",
        "[components.windows.pauses] names vad_profile = 'demo' and also sets a vad table",
    ),
    "recognizer: profile and a table": (
        'aligner = ""\n',
        'aligner = ""\nsilero = {}\n',
        "[recognizers.whisper_base_batched.decoding] names vad_profile = 'demo' and also sets a silero table",
    ),
    "a stage without Silero": (
        'method = "gtcrn"',
        'method = "gtcrn"\nvad_profile = "demo"',
        "[components.gtcrn] has unknown key(s)",
    ),
    "a faster-whisper recognizer": (
        'language = "pt"',
        'language = "pt"\nvad_profile = "demo"',
        "[recognizers.whisper_base.decoding] has unknown parameter(s) vad_profile",
    ),
}


@pytest.mark.parametrize("old, new, message", BAD_PROFILES.values(), ids=BAD_PROFILES)
def test_a_bad_profile_or_reference_is_one_line_naming_file_and_table(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    path = demo_variant(tmp_path, old, new)
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    assert str(raised.value).startswith(f"{path}: ") and "\n" not in str(raised.value)
    assert message in str(raised.value)


def test_a_profile_no_table_names_is_refused(tmp_path: Path) -> None:
    """Decided: an error, not a warning; a profile nothing uses would look as if it decided a result."""
    spare = profile_table("spare", LIBRARY_DEFAULTS)
    path = demo_variant(tmp_path, "\n[vad_profiles.demo]\n", f"\n{spare}\n[vad_profiles.demo]\n")
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    assert str(raised.value) == (
        f"{path}: [vad_profiles.spare] is never used: name it with vad_profile = 'spare' where Silero settings go, "
        "or remove it"
    )


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("seed = 0", 'seed = 0\nvad_profiles = "demo"', "[vad_profiles] must hold tables of Silero parameters"),
        (
            '[components.vad]\nstage = "vad"',
            '[components.vad]\nstage = "vad"\nvad_profile = "demo"',
            "[components.vad] vad_profile = 'demo' is not a profile; profiles: none (no [vad_profiles] table)",
        ),
        (
            "[components.onset_repair.vad]\nthreshold = 0.5",
            "[components.onset_repair.vad]\nthreshold = 1.5",
            "[components.onset_repair.vad] threshold 1.5 must lie in (0, 1)",
        ),
        (
            "[components.windows.pauses.vad]\nthreshold = 0.5",
            "[components.windows.pauses.vad]\nthreshold = 1.5",
            "[components.windows.pauses.vad] threshold 1.5 must lie in (0, 1)",
        ),
        (
            "[recognizers.whisper_base_batched.decoding.silero]\nthreshold = 0.5",
            "[recognizers.whisper_base_batched.decoding.silero]\nthreshold = 1.5",
            "[recognizers.whisper_base_batched.decoding] [silero] threshold 1.5 must lie in (0, 1)",
        ),
    ],
)
def test_copied_silero_tables_are_still_checked_where_they_stand(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    """Files written before profiles (frozen protocols among them) load and are checked as before."""
    path = demo_variant(tmp_path, old, new, source=INLINE_SILERO)
    with pytest.raises(InputError) as raised:
        load_experiment(path)
    assert str(raised.value).startswith(f"{path}: ") and "\n" not in str(raised.value)
    assert message in str(raised.value)
