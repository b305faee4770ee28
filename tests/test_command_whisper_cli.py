"""A second Whisper program from PyPI as a command recognizer: whisper-ctranslate2 (the dev extra) decoding
synthesized Portuguese with the bundled weights, as an external process, from the very table
docs/command-recognizer.md shows. The words are this machine's (CTranslate2 picks kernels by CPU): only
invariants are asserted."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from toolkit.asr import make_recognizer
from toolkit.audio.signal import Signal
from toolkit.core.wordstream import check_stream
from toolkit.demo.synth import SPEAKERS, detect_voice, synthesize

pytestmark = [pytest.mark.slow, pytest.mark.needs_model]

DOCS = Path(__file__).resolve().parents[1] / "docs" / "command-recognizer.md"
TOOL = Path(sys.executable).parent / "whisper-ctranslate2"


def _documented_table() -> dict[str, object]:
    """The ``[recognizers.whisper_cli]`` table of the page's worked example."""
    blocks = re.findall(r"^```toml\n(.*?)^```", DOCS.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    (block,) = [b for b in blocks if "[recognizers.whisper_cli]" in b]
    table: dict[str, object] = tomllib.loads(block)["recognizers"]["whisper_cli"]
    return table


@pytest.mark.skipif(not TOOL.is_file(), reason="whisper-ctranslate2 (the dev extra) is not installed beside python")
def test_whisper_ctranslate2_decodes_a_unit_with_the_bundled_model(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", f"{TOOL.parent}:{__import__('os').environ.get('PATH', '')}")
    table = _documented_table()
    settings = {k: v for k, v in table.items() if k not in ("backend", "label", "model")}
    recognizer = make_recognizer(
        {"backend": table["backend"], "model": table["model"], "folder": str(tmp_path), "decoding": settings}
    )
    clip = synthesize("Maria Aparecida não concordou com a proposta.", detect_voice(), SPEAKERS[0], tmp_path)
    signal = Signal.original(clip.samples.astype(np.float32), clip.sample_rate)
    transcript = recognizer.transcribe(signal)
    assert len(transcript.words) >= 3 and all(w.timed for w in transcript.words)
    check_stream(transcript.words, signal.duration, "whisper-ctranslate2's words")
    identity = recognizer.identity()
    assert {f["role"] for f in identity["files"]} == {"executable", "interpreter", "model"}
    assert identity["model"] == "whisper-base" and identity["weights_sha256"]
    assert recognizer.notes["external_cpu_s"] > 0
