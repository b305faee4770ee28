"""Where the shared pt-BR development recordings are: ``../shared/data/ptbr-dev`` beside the clone.

``ABLATE_SHARED_DATA`` overrides it. Tests that need the folder skip with a reason when it is
absent (a fresh clone of the project alone); CI has it beside the clone.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

PTBR_DEV = Path(
    os.environ.get("ABLATE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data" / "ptbr-dev")
)


def lapsbm_tuning_corpus(corpus: Path, clips: Iterable[str]) -> Path:
    """Copy LapsBM ``clips`` (audio and transcript) into ``corpus/audio`` and ``corpus/refs`` and freeze them
    as the tuning split; returns the manifest. Copies, so a test may hide or change one."""
    from toolkit.corpus.freeze import freeze

    audio, refs = corpus / "audio", corpus / "refs"
    audio.mkdir(parents=True)
    refs.mkdir()
    for clip in clips:
        shutil.copy(PTBR_DEV / "lapsbm" / f"{clip}.wav", audio / f"{clip}.wav")
        shutil.copy(PTBR_DEV / "lapsbm" / f"{clip}.txt", refs / f"{clip}.txt")
    freeze(audio, refs, corpus / "manifest.json", split="tuning")
    return corpus / "manifest.json"
