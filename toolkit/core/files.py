"""Atomic file writes and content hashes.

Every file the toolkit writes goes through here: write to a temporary sibling, flush, then
rename, so an interrupted run never leaves a file that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
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


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, mode: int = 0o666) -> Path:
    """Write ``data`` to ``path`` via a temporary file and rename; parents are created.

    The file gets ``mode`` less the umask (``0o600`` for a file only its owner may read, e.g.
    password hashes). A place that cannot be written (read-only folder, full disk) is an
    InputError naming ``path``.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temporary(target, mode)
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


def _create_temporary(target: Path, mode: int) -> tuple[int, str]:
    """A new, empty sibling of ``target`` open for writing, with the permissions the umask gives a new file.

    ``tempfile.mkstemp`` would make it 0600 whatever the umask, and the rename would carry that
    mode to ``target``: a shared corpus folder would hold files only their writer can read.
    """
    for _ in range(100):
        name = target.parent / f".{target.name}.{secrets.token_hex(6)}.part"
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode), str(name)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


def make_new_directory(parent: Path, prefix: str) -> Path:
    """A new, empty, uniquely named folder in ``parent`` with the permissions the umask gives a new folder.

    ``tempfile.mkdtemp`` would make it 0700 whatever the umask.
    """
    parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        candidate = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            candidate.mkdir(mode=0o777)
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"no free folder name in {parent}")


def atomic_write_text(path: str | os.PathLike[str], text: str, mode: int = 0o666) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"), mode)


def atomic_write_json(path: str | os.PathLike[str], data: Any, mode: int = 0o666) -> Path:
    return atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n", mode)


def machine_cache(name: str) -> Path:
    """A cache folder of this machine's (models, synthesis, CPU probes): ``$ABLATE_CACHE/NAME`` or
    ``~/.cache/ptbr-ablate/NAME``. What is kept there is keyed by content, so any run may share it."""
    root = os.environ.get("ABLATE_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "ptbr-ablate") / name
