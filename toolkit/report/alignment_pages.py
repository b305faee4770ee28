"""Per-recording alignment pages of a run report: the aligned words, errors coloured, critical words marked.

One self-contained HTML page per arm and recording, ``alignment/<arm>/<recording>.html`` in
the run folder, linked from ``report.html``: each step shows the reference token over the
hypothesis token; substitutions, deletions and insertions are coloured, reference words an
audit watches (negations, names, numbers) are outlined and labelled, and hovering a step shows
both sides' times in the original recording.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from pathlib import Path

from toolkit.core.files import atomic_write_text
from toolkit.scorer.alignment_view import GAP, AlignedWord, aligned_words, critical_marks
from toolkit.scorer.results import RecordingScore

FOLDER = "alignment"
STYLE = (
    "body{font-family:sans-serif;margin:2em;max-width:1200px} .w{display:inline-block;margin:2px;"
    "padding:1px 3px;border-radius:3px;text-align:center;vertical-align:top;font-size:14px}"
    ".w span{display:block} .w .h{color:#555} .substitute{background:#ffe08a} .delete{background:#f6a6a6}"
    ".insert{background:#a9c8f5} .skip{color:#888;font-style:italic} .critical{outline:2px solid #000;font-weight:bold}"
    ".mark{font-size:10px;color:#a00} .legend .w{font-size:12px}"
)
LEGEND = (
    '<p class="legend">reference over hypothesis: <span class="w">correct</span>'
    '<span class="w substitute">substituted</span><span class="w delete">deleted</span>'
    '<span class="w insert">inserted</span><span class="w skip">optional, left out (no error)</span>'
    '<span class="w critical">audited word</span> '
    "(negation, name or number); hover for times in the original recording (s).</p>"
)


def page_path(root: Path, arm: str, recording_id: str) -> Path:
    return root / FOLDER / arm / f"{recording_id}.html"


def _times(row: AlignedWord) -> str:
    def span(start: float | None, end: float | None) -> str:
        return "untimed" if start is None else f"{start:.2f}-{end:.2f} s" if end is not None else f"{start:.2f} s"

    return f"{row.op}; reference {span(row.ref_start, row.ref_end)}; hypothesis {span(row.hyp_start, row.hyp_end)}"


def _step(row: AlignedWord) -> str:
    classes = " ".join(["w", row.op if row.op != "equal" else "", "critical" if row.critical else ""]).split()
    mark = f'<span class="mark">{html.escape(", ".join(row.critical))}</span>' if row.critical else ""
    return (
        f'<span class="{" ".join(classes)}" title="{html.escape(_times(row))}">'
        f'<span class="r">{html.escape(row.reference or GAP)}</span>'
        f'<span class="h">{html.escape(row.hypothesis or GAP)}</span>{mark}</span>'
    )


def alignment_page(score: RecordingScore, rows: Sequence[AlignedWord]) -> str:
    """The HTML page of one recording's alignment."""
    c = score.counts
    title = f"Alignment: {score.arm} / {score.recording_id}"
    policy = score.signature.fields["audit_policy"]
    summary = (
        f"<p>policy {html.escape(policy)}: S={c.substitutions} D={c.deletions} I={c.insertions} "
        f"N={c.ref_words} (primary policy {html.escape(score.policy)}); "
        f"signature <code>{html.escape(score.signature.text)}</code></p>"
    )
    body = "".join(_step(row) for row in rows)
    return (
        f"<!doctype html><html lang='pt-BR'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{summary}{LEGEND}"
        f"<div>{body}</div></body></html>\n"
    )


def write_alignment_page(
    root: Path, score: RecordingScore, negations: frozenset[str], names: Iterable[Sequence[str]]
) -> Path:
    """Write one recording's page (the audits' negations and normalized names mark critical words)."""
    at = score.aligned
    if at is None:
        raise ValueError(f"{score.recording_id}: the score keeps no alignment")
    rows = aligned_words(at, critical_marks(at, negations, names))
    return atomic_write_text(page_path(root, score.arm, score.recording_id), alignment_page(score, rows))
