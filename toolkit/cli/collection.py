"""Less memory bookkeeping for a command that builds many objects and frees them only when it ends.

CPython's cyclic collector runs after every 700 new container objects and, now and then, walks every object
alive, every imported module's included: scoring a long recording builds hundreds of thousands of small
objects (words, tokens, alignment steps) that all stay alive until the command ends, so the collector
walks the same objects again and again for little garbage (on a 9,000-word pair: one collection of the 50,000
youngest, 8-10 ms, found 737 objects in cycles). Freezing what is loaded and not collecting while the command
runs (mypy freezes and collects rarely, for the same reason) changes nothing a command computes or prints; the
few cycles it leaves wait for the next collection after it (a 10-hour recording leaves a few megabytes).

When such a command runs as the program, the interpreter would then free every module and object one by one on
its way out (0.05-0.1 s of CPU for ``ablate score``); the operating system takes the memory back at once, so the
program ends right after its output is flushed (mypy ends the same way).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, the objects alive before it are left out of collections (``gc.freeze``) and nothing is
    collected; both are undone after it (a test or the app may call a command in a long-lived process)."""
    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.unfreeze()


def end_without_teardown(code: int) -> None:
    """Flush the output and end the process with ``code`` at once, without freeing every object first; when the
    output cannot be flushed (a closed pipe or stream), return and leave it to the interpreter's usual ending."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
