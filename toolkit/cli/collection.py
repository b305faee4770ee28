"""Less memory bookkeeping for a command that builds many objects and frees them only when it ends.

CPython's cyclic collector runs after every 700 new container objects and, now and then, walks every object
alive, every imported module's included: scoring a long recording builds hundreds of thousands of small
objects (words, tokens, alignment steps) that all stay alive until the command ends, so the collector
walks the same objects again and again for no garbage. Freezing what is loaded and collecting after
50,000 new objects (mypy does the same for the same reason) changes nothing a command computes or prints.

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

YOUNG_THRESHOLD = 50_000  # new container objects between two collections of the youngest generation


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, the objects alive before it are left out of collections (``gc.freeze``) and the
    youngest generation is collected every ``YOUNG_THRESHOLD`` new objects; both are undone after it (a test
    or the app may call a command in a long-lived process)."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
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
