"""Atomic file writes and content hashes.

Every file the toolkit writes goes through here: write to a temporary sibling, flush, then
rename, so an interrupted run never leaves a file that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError

_CHUNK = 1 << 20


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_json(data: Any) -> str:
    """Stable JSON text (sorted keys, no spaces) for hashing configurations."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def config_hash(data: Any) -> str:
    return sha256_bytes(canonical_json(data).encode("utf-8"))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file and rename; parents are created.

    A place that cannot be written (read-only folder, full disk) is an InputError naming ``path``.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as error:
        raise InputError(target, f"cannot write the file ({error.strerror or error})") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as error:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(target, f"cannot write the file ({error.strerror or error})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], data: Any) -> Path:
    return atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def machine_cache(name: str) -> Path:
    """A cache folder of this machine's (models, synthesis, CPU probes): ``$ABLATE_CACHE/NAME`` or
    ``~/.cache/ptbr-ablate/NAME``. What is kept there is keyed by content, so any run may share it."""
    root = os.environ.get("ABLATE_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "ptbr-ablate") / name
