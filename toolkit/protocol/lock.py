"""One protocol command at a time per experiment: an exclusive ``flock`` on ``protocol/.lock``.

A test-split run (from opening to its last recorded result), a challenger freeze and a gate
verdict each hold it, so two concurrent holdout runs cannot both open the holdout. A second
command is refused at once, not queued: what it would do depends on what the first decides.
The lock dies with its process (even ``kill -9``), so a crash never leaves it held.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolkit.core.errors import InputError

LOCK_NAME = ".lock"


@contextmanager
def protocol_lock(experiment_folder: Path, command: str) -> Iterator[None]:
    """Hold the experiment's protocol lock for ``command``; refuse with one line if another holds it."""
    path = Path(experiment_folder) / "protocol" / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", errors="replace").strip() or "another process"
            raise InputError(
                path, f"refused: {holder} holds the protocol of this experiment; wait for it to finish, then {command}"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"'{command}' (pid {os.getpid()})".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing drops the flock
