"""Alignment you can read: each aligned token pair with its operation, times and critical-word marks.

Rows follow the scored alignment of normalized tokens (the audit policy's: the primary one, or
``normalized`` when the primary is verbatim). Times are the source word's own times in the
original recording (None when untimed). ``render_pra`` prints sclite's ``pra`` layout: REF, HYP
and EVAL lines (correct words lower case, errors upper case, ``***`` for the missing side,
S/D/I under errors, an optional reference word left out in parentheses over nothing, as sclite
shows it), with onset lines where there are times, wrapped into blocks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from itertools import chain, product
from json.encoder import encode_basestring
from typing import Any

import numpy as np

from toolkit.core.json_text import number_texts
from toolkit.scorer.align import DELETE, EQUAL, INSERT, OP_NAMES, SKIP
from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.audits import name_occurrences, negation_masks

EVAL = {"equal": "", "substitute": "S", "delete": "D", "insert": "I", "skip": ""}
GAP = "***"


@dataclass(frozen=True)
class AlignedWord:
    """One alignment step: reference and hypothesis token (None when absent), operation, times, marks."""

    reference: str | None
    hypothesis: str | None
    op: str
    ref_start: float | None
    ref_end: float | None
    hyp_start: float | None
    hyp_end: float | None
    critical: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        # Field by field: dataclasses.asdict deep-copies each value and cost seconds on a long recording.
        return _step_json(*(getattr(self, name) for name in STEP_FIELDS))


# The fields of a step, in order: its JSON keys (_step_json writes them in this order; a test checks it).
STEP_FIELDS = tuple(f.name for f in fields(AlignedWord))


def _step_json(
    reference: str | None,
    hypothesis: str | None,
    op: str,
    ref_start: float | None,
    ref_end: float | None,
    hyp_start: float | None,
    hyp_end: float | None,
    critical: tuple[str, ...],
) -> dict[str, Any]:
    """One step as JSON, from its fields (a dict display: the quickest way to build tens of thousands)."""
    return {
        "reference": reference,
        "hypothesis": hypothesis,
        "op": op,
        "ref_start": ref_start,
        "ref_end": ref_end,
        "hyp_start": hyp_start,
        "hyp_end": hyp_end,
        "critical": list(critical),
    }


def _times(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index]`` in seconds rounded to the millisecond as Python's ``round(value, 3)`` rounds them (as
    the files always had it); NaN where the index is -1 (no word) or the time is NaN (untimed)."""
    if not len(values):
        return np.full(len(index), np.nan)
    return milliseconds(np.where(index < 0, np.nan, values[np.maximum(index, 0)]))


def milliseconds(seconds: np.ndarray) -> np.ndarray:
    """``round(value, 3)`` of each value (NaN stays NaN), vectorized.

    ``rint(x * 1000) / 1000`` is Python's correctly rounded result wherever the product ``x * 1000`` is not
    within its own rounding error of a half (the division is exact to the last bit): the few values that are
    (or too large to tell) are rounded one by one by Python.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = seconds * 1000.0
        rounded = np.rint(scaled) / 1000.0
        unsure = (np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6) | (np.abs(scaled) >= 1e9)
    for k in np.flatnonzero(unsure).tolist():
        rounded[k] = round(float(seconds[k]), 3)
    return rounded


# Which audits watch a reference token, by its code: 4 if a negation, plus 2 if in a name, plus 1 if a number.
_WATCHED = tuple(
    tuple(label for label, on in zip(("negation", "name", "number"), key) if on)
    for key in product((False, True), repeat=3)
)


def critical_marks(
    at: AlignedTokens, negations: frozenset[str], names: Iterable[Sequence[str]]
) -> list[tuple[str, ...]]:
    """Per reference token, which audits watch it: ``negation``, ``name``, ``number``."""
    negation = negation_masks(at, negations)[0]
    name = np.zeros(len(at.ref), dtype=bool)
    for first, last in name_occurrences(at, names):
        name[first : last + 1] = True
    code = 4 * negation + 2 * name + at.ref.is_number.astype(np.int64)
    return list(map(_WATCHED.__getitem__, code.tolist()))


def alignment_columns(at: AlignedTokens, critical: Sequence[tuple[str, ...]] | None = None) -> tuple[list[Any], ...]:
    """The alignment's steps as columns, one list per field of :class:`AlignedWord`, in its field order."""
    refs, hyps, ops, times, marks = _columns(at, critical)
    lists = ([None if math.isnan(value) else value for value in column.tolist()] for column in times)
    return (refs, hyps, ops, *lists, marks)


def _columns(
    at: AlignedTokens, critical: Sequence[tuple[str, ...]] | None
) -> tuple[list[str | None], list[str | None], list[str], list[np.ndarray], list[tuple[str, ...]]]:
    """The steps' reference and hypothesis texts, operations, four time columns (NaN for none) and marks."""
    ops, ref_index, hyp_index = at.alignment.ops, at.alignment.ref_index, at.alignment.hyp_index
    r, h = _sources(at)
    steps = list(zip(ref_index.tolist(), (r >= 0).tolist()))
    ref_texts, hyp_texts, marks = at.ref.texts, at.hyp.texts, critical
    return (
        [ref_texts[i] if has_ref else None for i, has_ref in steps],
        [hyp_texts[j] if has_hyp else None for j, has_hyp in zip(hyp_index.tolist(), (h >= 0).tolist())],
        [OP_NAMES[op] for op in ops.tolist()],
        _time_columns(at, r, h),
        [tuple(marks[i]) if has_ref else () for i, has_ref in steps] if marks is not None else [()] * len(ops),
    )


def _sources(at: AlignedTokens) -> tuple[np.ndarray, np.ndarray]:
    """The source word of each step's reference and hypothesis side, -1 where that side has no word (an insertion
    has no reference word; a deletion or a skipped optional word no hypothesis word)."""
    ops, ref_index, hyp_index = at.alignment.ops, at.alignment.ref_index, at.alignment.hyp_index
    r = np.where(ops != INSERT, at.ref.source[np.maximum(ref_index, 0)] if len(at.ref) else -1, -1)
    h = np.where((ops != DELETE) & (ops != SKIP), at.hyp.source[np.maximum(hyp_index, 0)] if len(at.hyp) else -1, -1)
    return r, h


def _time_columns(at: AlignedTokens, r: np.ndarray, h: np.ndarray) -> list[np.ndarray]:
    """The steps' four time columns (reference start and end, hypothesis start and end), NaN for none."""
    return [
        _times(at.ref.words.start, r),
        _times(at.ref.words.end, r),
        _times(at.hyp.words.start, h),
        _times(at.hyp.words.end, h),
    ]


def aligned_words(at: AlignedTokens, critical: Sequence[tuple[str, ...]] | None = None) -> list[AlignedWord]:
    """The alignment's steps in order, as records."""
    return [AlignedWord(*step) for step in zip(*alignment_columns(at, critical))]


def alignment_json(at: AlignedTokens, critical: Sequence[tuple[str, ...]] | None = None, between: str = "\n") -> str:
    """Each step as ``json.dumps(step.to_json(), ensure_ascii=False)`` writes it, for every step of
    ``aligned_words(at, critical)``, joined by ``between`` (a step's JSON holds no line break). Made from columns
    without records, dicts or a text per step and field: each distinct token text encoded once by the compiled
    string encoder with the keys around it (and ``between`` before a step), each time column in one call with its
    key (``number_texts``), all eight pieces of every step joined at once, without a text per step (a long
    recording has tens of thousands of steps)."""
    r, h = _sources(at)
    # Each side's token index per step, -1 (the side's piece without a token, put last) where it has none.
    ref_at = np.where(r >= 0, at.alignment.ref_index, -1).tolist()
    hyp_at = np.where(h >= 0, at.alignment.hyp_index, -1).tolist()
    marks = _marks_json(critical if critical is not None else [()] * len(at.ref))
    ref_start, *later_times = _time_columns(at, r, h)
    columns = [
        _picked(_distinct_texts_json(at.ref.texts, between + _STEP_KEYS[0], _STEP_KEYS[1]), ref_at),
        _picked(_distinct_texts_json(at.hyp.texts, "", _STEP_KEYS[2]), hyp_at),
        list(map(_OP_PIECES.__getitem__, at.alignment.ops.tolist())),
        number_texts(ref_start),
        *map(number_texts, later_times, _STEP_KEYS[4:7]),
        _picked(marks, ref_at),
    ]
    if columns[0]:
        columns[0][0] = columns[0][0][len(between) :]  # ``between`` goes before every step but the first
    return "".join(chain.from_iterable(zip(*columns)))


def _picked(encoded: list[str], index: list[int]) -> list[str]:
    """``encoded[i]`` for each index (-1: the last, for a side without a token)."""
    return list(map(encoded.__getitem__, index))


def _distinct_texts_json(texts: Sequence[str], before: str = "", after: str = "") -> list[str]:
    """Each text as the JSON encoder writes it without ``ensure_ascii``, between ``before`` and ``after``, each
    distinct text encoded once; then ``null`` between them (for a step's side without a token)."""
    encoded = {text: f"{before}{encode_basestring(text)}{after}" for text in set(texts)}
    return [*map(encoded.__getitem__, texts), f"{before}null{after}"]


def _marks_json(critical: Sequence[tuple[str, ...]]) -> list[str]:
    """Each token's marks as the step's closing piece (its key, the JSON list, the brace); then no marks."""
    keyed = list(map(tuple, critical))
    encoded = {mark: f"{_STEP_KEYS[-1]}{json.dumps(list(mark), ensure_ascii=False)}}}" for mark in {*keyed, ()}}
    return [*map(encoded.__getitem__, keyed), encoded[()]]


# What comes before each field's encoded value in one step's JSON, in field order.
_STEP_KEYS = tuple(("{" if k == 0 else ", ") + f'"{name}": ' for k, name in enumerate(STEP_FIELDS))
# The operation's piece: its name and the next field's key (a step's texts carry the keys around them, its marks'
# piece its key and the closing brace, each time its key but the first's, which the operation's piece holds).
_OP_PIECES = tuple(f"{encode_basestring(name)}{_STEP_KEYS[3]}" for name in OP_NAMES)


def _cell(text: str | None, op: str) -> str:
    if op == OP_NAMES[SKIP]:
        return "" if text is None else f"({text})"
    if text is None:
        return GAP
    return text if op == OP_NAMES[EQUAL] else text.upper()


def _onset(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def render_pra(rows: Sequence[AlignedWord], width: int = 100) -> str:
    """sclite-``pra``-style REF/HYP/EVAL blocks, plus a reference (R_T1) and a hypothesis (H_T1) onset line
    when that side has times."""
    ref_timed = any(r.ref_start is not None for r in rows)
    hyp_timed = any(r.hyp_start is not None for r in rows)
    labels = ["REF:", "HYP:", "EVAL:"] + (["R_T1:"] if ref_timed else []) + (["H_T1:"] if hyp_timed else [])
    columns = []
    for row in rows:
        cells = [_cell(row.reference, row.op), _cell(row.hypothesis, row.op), EVAL[row.op]]
        cells += [_onset(row.ref_start)] if ref_timed else []
        cells += [_onset(row.hyp_start)] if hyp_timed else []
        size = max(len(c) for c in cells)
        columns.append([c.ljust(size) for c in cells])
    blocks: list[list[list[str]]] = []
    used = width + 1
    for column in columns:
        size = len(column[0]) + 1
        if used + size > width and (not blocks or blocks[-1]):
            blocks.append([])
            used = 6
        blocks[-1].append(column)
        used += size
    out = []
    for block in blocks:
        for line, label in enumerate(labels):
            out.append(f"{label:<6}" + " ".join(column[line] for column in block).rstrip())
        out.append("")
    return "\n".join(out).rstrip("\n")
