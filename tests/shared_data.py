"""Where the shared pt-BR recordings are: ``../shared/data`` beside the clone, holding ``ptbr-dev`` (short
clips) and ``ptbr-longform`` (the audiobook).

``ABLATE_SHARED_DATA`` names that folder elsewhere (its ``ptbr-dev`` folder is taken too). Tests that need
the data skip with a reason when it is absent (a fresh clone of the project alone); CI has it beside the clone.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path


def _shared_data() -> Path:
    """``$ABLATE_SHARED_DATA`` (or its parent, when it names the ``ptbr-dev`` folder), else ``../shared/data``."""
    given = os.environ.get("ABLATE_SHARED_DATA")
    if not given:
        return Path(__file__).resolve().parents[2] / "shared" / "data"
    return Path(given).parent if Path(given).name == "ptbr-dev" else Path(given)


SHARED_DATA = _shared_data()
PTBR_DEV = SHARED_DATA / "ptbr-dev"
PTBR_LONGFORM = SHARED_DATA / "ptbr-longform"


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
