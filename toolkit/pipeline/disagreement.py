"""Disagreement spans between two word sequences of one recording (two recognizers, or two arms).

The sequences are aligned after light normalization (``toolkit.scorer.normalize.same_word.word_key``:
casefold, punctuation stripped; words that are nothing but punctuation are left out). Each run of
non-matching alignment operations becomes a span in original time, and spans closer than
``merge_gap`` seconds are merged (the agreeing words between them join the span, so each
side reads as contiguous text). A side with untimed words is timed from its neighbouring
words in the same sequence only when both neighbours are timed (``time_source`` says
"neighbours"); otherwise the span has no time. The disagreement list feeds the adjudication queue.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

from toolkit.core.errors import InputError, ToolkitError
from toolkit.core.files import atomic_write_text
from toolkit.core.json_records import record_from_json, write_record
from toolkit.core.transcripts import Word
from toolkit.runs.disagreement_file import DisagreementListFile
from toolkit.scorer.normalize.same_word import word_key

_KINDS = {frozenset({"replace"}): "substitution", frozenset({"delete"}): "only_a", frozenset({"insert"}): "only_b"}
CSV_COLUMNS = ("recording_id", "label_a", "label_b", "start", "end", "time_source", "kind", "text_a", "text_b")


@dataclass(frozen=True)
class DisagreementSpan:
    """Where two sequences differ: times in original seconds (None when unknown) and each side's words.

    ``kind`` is substitution, only_a, only_b, or mixed (merged spans of different kinds);
    ``time_source`` is "words" (every word timed), "neighbours" (untimed words bounded by
    timed neighbours) or None.
    """

    start: float | None
    end: float | None
    words_a: tuple[Word, ...]
    words_b: tuple[Word, ...]
    kind: str
    time_source: str | None

    @property
    def text_a(self) -> str:
        return " ".join(w.text for w in self.words_a)

    @property
    def text_b(self) -> str:
        return " ".join(w.text for w in self.words_b)

    def to_json(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "time_source": self.time_source,
            "kind": self.kind,
            "text_a": self.text_a,
            "text_b": self.text_b,
            "words_a": [asdict(w) for w in self.words_a],
            "words_b": [asdict(w) for w in self.words_b],
        }


@dataclass(frozen=True)
class _Run:
    """Index ranges [a_lo, a_hi) and [b_lo, b_hi) of one disagreement run, and its operation tags."""

    a_lo: int
    a_hi: int
    b_lo: int
    b_hi: int
    tags: frozenset[str]

    def join(self, other: _Run) -> _Run:
        return _Run(self.a_lo, other.a_hi, self.b_lo, other.b_hi, self.tags | other.tags)


def disagreement_spans(
    words_a: Sequence[Word], words_b: Sequence[Word], merge_gap: float = 1.0
) -> list[DisagreementSpan]:
    """Spans where ``words_a`` and ``words_b`` disagree, merged when less than ``merge_gap`` s apart."""
    if not (math.isfinite(merge_gap) and merge_gap >= 0):
        raise ToolkitError(f"merge_gap must be a finite number >= 0, not {merge_gap!r}")
    seq_a = [w for w in words_a if word_key(w.text)]
    seq_b = [w for w in words_b if word_key(w.text)]
    runs: list[_Run] = []
    ops = Levenshtein.opcodes([word_key(w.text) for w in seq_a], [word_key(w.text) for w in seq_b])
    for op in ops:
        if op.tag == "equal":
            continue
        run = _Run(op.src_start, op.src_end, op.dest_start, op.dest_end, frozenset({op.tag}))
        if runs and runs[-1].a_hi == run.a_lo and runs[-1].b_hi == run.b_lo:
            runs[-1] = runs[-1].join(run)
        else:
            runs.append(run)
    merged: list[tuple[_Run, DisagreementSpan]] = []
    for run in runs:
        span = _span(seq_a, seq_b, run)
        if merged:
            last_run, last = merged[-1]
            if last.end is not None and span.start is not None and span.start - last.end < merge_gap:
                joined = last_run.join(run)
                merged[-1] = (joined, _span(seq_a, seq_b, joined))
                continue
        merged.append((run, span))
    return [span for _, span in merged]


def write_disagreements(
    spans: Sequence[DisagreementSpan], path: str | PathLike[str], *, recording_id: str, label_a: str, label_b: str
) -> Path:
    """Write spans atomically as JSON (full words) or CSV (one row per span), chosen by the suffix."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix == ".json":
        listing = {"recording_id": recording_id, "label_a": label_a, "label_b": label_b}
        data = {**listing, "spans": [span.to_json() for span in spans]}
        return write_record(target, record_from_json(DisagreementListFile, data, target))
    if suffix == ".csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for span in spans:
            writer.writerow(
                [
                    recording_id,
                    label_a,
                    label_b,
                    _cell(span.start),
                    _cell(span.end),
                    span.time_source or "",
                    span.kind,
                    span.text_a,
                    span.text_b,
                ]
            )
        return atomic_write_text(target, buffer.getvalue())
    raise InputError(target, "a disagreement list must be written as .json or .csv")


def _cell(value: float | None) -> str:
    return "" if value is None else repr(value)


def _span(seq_a: list[Word], seq_b: list[Word], run: _Run) -> DisagreementSpan:
    words_a, words_b = tuple(seq_a[run.a_lo : run.a_hi]), tuple(seq_b[run.b_lo : run.b_hi])
    kind = _KINDS.get(run.tags, "mixed")
    sides = [
        _side_time(seq, lo, hi) for seq, lo, hi in ((seq_a, run.a_lo, run.a_hi), (seq_b, run.b_lo, run.b_hi)) if hi > lo
    ]
    known = [side for side in sides if side is not None]
    if len(known) < len(sides):
        return DisagreementSpan(None, None, words_a, words_b, kind, None)
    source = "neighbours" if any(side[2] == "neighbours" for side in known) else "words"
    return DisagreementSpan(min(s[0] for s in known), max(s[1] for s in known), words_a, words_b, kind, source)


def _side_time(seq: list[Word], lo: int, hi: int) -> tuple[float, float, str] | None:
    """Time of seq[lo:hi]: from its words when all are timed, else from both timed neighbours, else None."""
    words = seq[lo:hi]
    starts = [w.start for w in words if w.start is not None and w.end is not None]
    ends = [w.end for w in words if w.start is not None and w.end is not None]
    if len(starts) == len(words):
        return min(starts), max(ends), "words"
    before = seq[lo - 1] if lo > 0 else None
    after = seq[hi] if hi < len(seq) else None
    if before is None or after is None or not (before.timed and after.timed):
        return None
    return min([before.span[1], *starts]), max([after.span[0], *ends]), "neighbours"
