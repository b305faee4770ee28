"""The version of the code that computes each step: a digest of its source files.

A cached result is reused only when its configuration *and* the code that made it are unchanged:
decode, VAD and enhancement cache keys and every arm result's unit key hold the digest of the
modules that compute them, so an update that changes what a stage computes recomputes it, while
a decode is still reused when only the pipeline around the recognizer changed. A digest changes
with any edit to those files (a comment too): recomputing is the safe side of that trade.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from toolkit.pipeline.stage_registry import STAGES

PACKAGE = Path(__file__).resolve().parents[1]
# The source of each step, as paths under toolkit/ (a folder stands for its .py files): the steps below, and
# each stage that names its own code (``Stage.sources``: its cached or signal step) under the stage's name.
STEP_SOURCES: dict[str, tuple[str, ...]] = {
    "decode": (
        "asr",
        "audio/io.py",
        "audio/signal.py",
        "audio/timemap.py",
        "core/transcripts.py",
        "core/wordstream.py",
        # The readers of an external command's words (toolkit/asr/command_backend.py).
        "formats/__init__.py",
        "formats/ctm.py",
        "formats/words.py",
        "formats/whisper_json.py",
    ),
    "vad": ("audio/vad.py", "audio/signal.py", "audio/timemap.py"),
    "dither": ("audio/dither.py", "audio/signal.py"),
    "arm": (
        "pipeline",
        "asr",
        "audio",
        "enhance",
        "core",
        "formats",
        "scorer/align.py",
        "scorer/normalize/same_word.py",
    ),
    **{stage.name: stage.sources for stage in STAGES if stage.sources},
}


def source_digest(root: Path, sources: tuple[str, ...]) -> str:
    """sha256 over the relative path and text (line endings normalized) of every .py file named by ``sources``."""
    files: set[Path] = set()
    for source in sources:
        path = root / source
        files.update(path.rglob("*.py") if path.is_dir() else [path])
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()[:16]


@cache
def code_digest(step: str) -> str:
    """The digest of the code that computes ``step`` (one of STEP_SOURCES) in this installation."""
    return source_digest(PACKAGE, STEP_SOURCES[step])
