"""Combining two recognizers' words for the +second-model ``combine`` mode.

The rule, documented so results can be defended: align the two word sequences (written words
compared by ``toolkit.normalize.same_word.word_key``: case and punctuation folded); keep agreeing words from the first
recognizer; in each run of disagreement keep the side whose mean word confidence is higher
(a side without confidences scores 0; ties keep the first). Every disagreement run is
returned with times so it can feed the review queue.
"""

from __future__ import annotations

from typing import Any

from rapidfuzz.distance import Levenshtein

from toolkit.normalize.same_word import word_key
from toolkit.records import Word


def _confidence(words: list[Word]) -> float:
    values = [w.confidence for w in words if w.confidence is not None]
    return sum(values) / len(values) if values else 0.0


def _span(words: list[Word]) -> tuple[float | None, float | None]:
    starts = [w.start for w in words if w.start is not None]
    ends = [w.end for w in words if w.end is not None]
    return (min(starts) if starts else None, max(ends) if ends else None)


def combine_streams(first: list[Word], second: list[Word],
                    labels: tuple[str, str]) -> tuple[list[Word], list[dict[str, Any]]]:
    """Merged words and the disagreement spans between ``first`` and ``second``."""
    merged: list[Word] = []
    spans: list[dict[str, Any]] = []
    ops = Levenshtein.opcodes([word_key(w.text) for w in first], [word_key(w.text) for w in second])
    for op in ops:
        a, b = first[op.src_start:op.src_end], second[op.dest_start:op.dest_end]
        if op.tag == "equal":
            merged.extend(a)
            continue
        conf_a, conf_b = _confidence(a), _confidence(b)
        keep_second = conf_b > conf_a
        merged.extend(b if keep_second else a)
        start, end = _span(a + b)
        spans.append({
            "start": start, "end": end,
            labels[0]: " ".join(w.text for w in a), labels[1]: " ".join(w.text for w in b),
            f"{labels[0]}_confidence": round(conf_a, 4), f"{labels[1]}_confidence": round(conf_b, 4),
            "kept": labels[1] if keep_second else labels[0],
        })
    return merged, spans
