"""What an external recognizer command runs, pinned by content.

The files are the executable (a bare name is looked up on PATH, a path is read from the experiment's folder),
the interpreter its ``#!`` line names (a script's wrapper runs it), every file an argument names (the script an
interpreter runs, a configuration), and the declared model (a file, a folder hashed file by file, or the bundled
``whisper-base``). Their sha256 are the command's identity; each is hashed once per process while its size, time
and inode stay, and checked again before every unit, so a file changed during a run fails that unit.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolkit.asr.models import BUNDLED_NAME, resolve_model, weights_sha256
from toolkit.core.errors import InputError

Role = Literal["executable", "interpreter", "argument", "model"]
PLACEHOLDERS = ("{audio}", "{output}", "{output_dir}", "{model}")


@dataclass(frozen=True)
class ProgramFile:
    """One file (or folder) the command runs or reads: how the experiment names it, where it is here, its sha256."""

    role: Role
    name: str
    path: str
    sha256: str

    def identity(self) -> dict[str, str]:
        """What the identity keeps: the name as written and the content (not this machine's path)."""
        return {"role": self.role, "name": self.name, "sha256": self.sha256}


def content_sha256(path: Path) -> str:
    """A file's sha256, or for a folder the sha256 of its files' relative paths and sha256, in sorted order."""
    if path.is_file():
        return weights_sha256(path)
    digest = hashlib.sha256()
    for item in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f"{item.relative_to(path).as_posix()}\0{weights_sha256(item)}\n".encode())
    return digest.hexdigest()


def _in_folder(folder: Path, name: str) -> Path:
    """``name`` as a path: absolute or ``~`` as written, else relative to the experiment's folder."""
    path = Path(name).expanduser()
    return path if path.is_absolute() else folder / path


def find_executable(folder: Path, name: str) -> Path:
    """The executable the command names: a bare name on PATH, a path from the experiment's folder; the path to run
    (not symlink-resolved: a virtual environment's python finds its packages by the path it was started as)."""
    if "/" in name:
        path = _in_folder(folder, name)
        found: Path | str | None = path if path.is_file() and os.access(path, os.X_OK) else None
        if found is None:
            raise InputError(path, "the command's executable is not an executable file here")
    else:
        found = shutil.which(name)
        if found is None:
            raise InputError(name, "the command's executable is not on PATH here")
    if not os.access(found, os.R_OK):
        raise InputError(found, "the command's executable cannot be read here, so it cannot be pinned by its sha256")
    return Path(found).absolute()


def _interpreter(executable: Path) -> Path | None:
    """The program a ``#!`` line makes run ``executable`` (``/usr/bin/env NAME`` looked up on PATH), or None."""
    with open(executable, "rb") as handle:
        first = handle.readline(4096)
    if not first.startswith(b"#!"):
        return None
    words = shlex.split(first[2:].decode("utf-8", "replace"))
    if not words:
        return None
    if Path(words[0]).name == "env":
        named = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), None)
        found = shutil.which(named) if named else None
        return Path(found) if found else None
    return Path(words[0]) if Path(words[0]).is_file() else None


def program_files(folder: Path, command: tuple[str, ...], model: str) -> list[ProgramFile]:
    """Every file the command runs or reads, hashed: an executable or model that is not there is one InputError."""
    executable = find_executable(folder, command[0])
    files = [ProgramFile("executable", command[0], str(executable), content_sha256(executable.resolve()))]
    interpreter = _interpreter(executable.resolve())
    if interpreter is not None:
        files.append(
            ProgramFile("interpreter", str(interpreter), str(interpreter), content_sha256(interpreter.resolve()))
        )
    for argument in command[1:]:
        if any(p in argument for p in PLACEHOLDERS):
            continue
        path = _in_folder(folder, argument)
        if path.is_file():
            files.append(ProgramFile("argument", argument, str(path.absolute()), content_sha256(path.resolve())))
    if model:
        where = Path(resolve_model(model).path) if model == BUNDLED_NAME else _in_folder(folder, model)
        if not where.exists():
            raise InputError(where, "the command recognizer's model (file or folder) is not there")
        files.append(ProgramFile("model", model, str(where.absolute()), content_sha256(where.resolve())))
    return files


def locate(folder: Path, role: str, name: str) -> Path:
    """Where a file of an identity (``role``, ``name`` as written) is on this machine, to name it in a refusal."""
    if role == "executable":
        found = shutil.which(name) if "/" not in name else None
        return Path(found) if found else _in_folder(folder, name)
    if role == "model" and name == BUNDLED_NAME:
        from toolkit.asr.models import cache_dir

        return cache_dir() / BUNDLED_NAME
    return _in_folder(folder, name)


def changed(files: list[ProgramFile]) -> Iterator[tuple[ProgramFile, str]]:
    """Each file whose content differs now from its pinned sha256, with what it hashes to now (``missing``)."""
    for pinned in files:
        path = Path(pinned.path).resolve()
        now = content_sha256(path) if path.exists() else "missing"
        if now != pinned.sha256:
            yield pinned, now
