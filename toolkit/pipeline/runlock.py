"""One run at a time per run folder: an exclusive ``flock`` on ``<run folder>/.lock``.

Two runs of the same experiment and split land in the same folder; without a lock both
would decode everything and ``run.json`` would hold whichever finished last. The second run
waits for the first, says so, and then reuses every result the first finished. The lock is
released when it is released explicitly, when its holder is garbage-collected, or when the
process ends (even by ``kill -9``), so a crashed run never leaves a folder locked.
"""

from __future__ import annotations

import fcntl
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

LOCK_NAME = ".lock"


def _tell(message: str) -> None:
    print(f"ablate: {message}", file=sys.stderr, flush=True)


class RunLock:
    """An exclusive lock on one run folder; ``waited`` says whether another run held it first."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self.waited = False
        self._handle: IO[str] | None = None

    def acquire(self, notify: Callable[[str], None] = _tell) -> RunLock:
        """Take the lock, waiting (and saying so through ``notify``) while another run holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            notify(
                f"another run is working in {self.path.parent}; waiting for it to finish "
                "(its finished results will be reused, not recomputed)"
            )
            fcntl.flock(handle, fcntl.LOCK_EX)
            self.waited = True
        self._handle = handle
        return self

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the file drops the flock
            self._handle = None
