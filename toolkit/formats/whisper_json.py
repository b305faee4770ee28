"""Whisper's own JSON output with word timestamps, as openai-whisper, whisper-ctranslate2 and other faster-whisper
command lines write it: ``{"segments": [{"words": [{"word", "start", "end", "probability"}, ...]}, ...]}``."""

from __future__ import annotations

import math
from pathlib import Path

from toolkit.core.data_files import read_json
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Word
from toolkit.formats.words import TIME_EPS, checked_word


def read_whisper_json(path: str | Path) -> list[Word]:
    """Every segment's words in order (``seg0000``-numbered, probability as confidence), each checked like a CTM
    line; Whisper's blank words are skipped, and a segment without words (timestamps off) or a word that starts
    before the one before it is refused."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("segments"), list):
        raise InputError(path, "not Whisper JSON: expected an object with a list 'segments'")
    words: list[Word] = []
    previous = -math.inf
    for s, segment in enumerate(data["segments"]):
        if not isinstance(segment, dict) or not isinstance(segment.get("words"), list):
            raise InputError(path, f"segment {s + 1} has no list 'words' (word timestamps must be on)")
        for w, item in enumerate(segment["words"], 1):
            where = f"segment {s + 1} word {w}"
            if not isinstance(item, dict) or "word" not in item:
                raise InputError(
                    path, f"{where}: expected an object with 'word', 'start' and 'end', got {item!r}"[:300]
                )
            text = item["word"]
            if isinstance(text, str) and not text.strip():
                continue
            word = checked_word(
                path,
                where,
                text.strip() if isinstance(text, str) else text,
                item.get("start"),
                item.get("end"),
                item.get("probability"),
                f"seg{s:04d}",
            )
            if word.start is not None:
                if word.start < previous - TIME_EPS:
                    raise InputError(path, f"{where} '{word.text}' at {word.start:g} s is out of order")
                previous = word.start
            words.append(word)
    return words
