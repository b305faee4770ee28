"""The report as a document: sections of text, tables and figures, written as Markdown and as HTML.

One list of sections makes both files, so the Markdown says the same as the HTML in the same order
(a figure appears in Markdown as the table of its numbers). The HTML is one self-contained page:
plots inline, no script beyond opening folded blocks for printing, tables that scroll inside their
block instead of running off the page.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import pandas as pd


@dataclass(frozen=True)
class Figure:
    """A plot (PNG, base64) with its title, and the numbers it draws (what Markdown shows instead)."""

    title: str
    png: str
    numbers: pd.DataFrame

    @classmethod
    def of(cls, title: str, figure: Any, numbers: pd.DataFrame) -> Figure:
        """From a matplotlib figure, which it closes."""
        from matplotlib import pyplot

        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
        pyplot.close(figure)
        return cls(title, base64.b64encode(buffer.getvalue()).decode("ascii"), numbers)


Body: TypeAlias = str | pd.DataFrame | Figure


@dataclass(frozen=True)
class Section:
    """A heading and its blocks (Markdown text, tables, figures).

    ``lead`` puts it on the first screen; ``folded`` shows it collapsed (glossaries, long lists);
    ``when_empty`` is the one line shown when every block is empty (without it the section is left out).
    """

    heading: str
    blocks: tuple[Body, ...]
    lead: bool = False
    folded: bool = False
    when_empty: str = ""

    @classmethod
    def of(cls, heading: str, *blocks: Body, lead: bool = False, folded: bool = False, when_empty: str = "") -> Section:
        return cls(heading, tuple(blocks), lead, folded, when_empty)

    @property
    def empty(self) -> bool:
        return all(_empty(block) for block in self.blocks)


def _empty(block: Body) -> bool:
    if isinstance(block, str):
        return not block.strip()
    if isinstance(block, pd.DataFrame):
        return block.empty
    return False


def shown(sections: Sequence[Section]) -> list[Section]:
    """The sections to print, lead ones first: an empty one becomes its one line, or is left out."""
    ordered = [s for s in sections if s.lead] + [s for s in sections if not s.lead]
    return [
        Section.of(s.heading, s.when_empty, lead=s.lead) if s.empty else s
        for s in ordered
        if not s.empty or s.when_empty
    ]


# ---------------------------------------------------------------- Markdown


def markdown_document(title: str, sections: Sequence[Section]) -> str:
    """The whole report as Markdown."""
    parts = [f"# {title}\n"]
    for section in shown(sections):
        parts.append(f"## {section.heading}\n")
        parts.extend(_markdown_block(block) for block in section.blocks if not _empty(block))
    return "\n".join(parts)


def _markdown_block(block: Body) -> str:
    if isinstance(block, str):
        return block.rstrip() + "\n"
    if isinstance(block, Figure):
        return f"_{block.title} (figure in report.html; its numbers):_\n\n" + markdown_table(block.numbers)
    return markdown_table(block)


def markdown_table(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(_cell(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body]) + "\n"


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else float_cell(value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def float_cell(value: float) -> str:
    """Four significant digits below 100; from 100 up, to 0.01 with trailing zeros dropped: a time of 1117.6 s
    in a long recording stays 1117.6, not 1118 (to four digits seam times a second apart read alike)."""
    if abs(value) >= 100:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.4g}"


# ---------------------------------------------------------------- HTML

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.2em 2em;max-width:1300px;color:#222;line-height:1.4}
h1{font-size:1.45em;margin:.2em 0 .5em} h2{font-size:1.15em;margin:1.4em 0 .4em;border-bottom:1px solid #ddd}
.lead{border:2px solid #555;border-radius:6px;padding:.2em 1em .6em;margin-bottom:1.5em;background:#fafafa}
.lead h2{border:none;margin-top:.6em}
.verdict-promote{color:#1b7a2b} .verdict-retain{color:#b3261e}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;margin:.3em 0}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top}
th{background:#eee;position:sticky;top:0} td:first-child,th:first-child{text-align:left}
code{overflow-wrap:anywhere;word-break:break-word;font-size:12px}
li{overflow-wrap:anywhere}
img{max-width:100%;height:auto}
details{margin:.4em 0} summary{cursor:pointer;color:#335}
@media print{body{margin:0;max-width:none} .scroll{overflow:visible} th{position:static}
 .lead{break-inside:avoid} h2{break-after:avoid} table,img{break-inside:avoid}}
"""
# Folded blocks (glossaries, instance lists) open before printing, so paper holds the whole report.
PRINT_SCRIPT = "addEventListener('beforeprint',()=>document.querySelectorAll('details').forEach(d=>d.open=true))"


def html_document(title: str, sections: Sequence[Section]) -> str:
    """The whole report as one self-contained HTML page."""
    parts = [f"<h1>{html.escape(title)}</h1>"]
    ordered = shown(sections)
    lead = [s for s in ordered if s.lead]
    if lead:
        parts.append("<div class='lead'>" + "".join(map(_html_section, lead)) + "</div>")
    parts.extend(_html_section(s) for s in ordered if not s.lead)
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style><script>{PRINT_SCRIPT}</script></head><body>{''.join(parts)}</body></html>\n"
    )


def _html_section(section: Section) -> str:
    body = "".join(_html_block(block) for block in section.blocks if not _empty(block))
    heading = markdown_html(section.heading, inline=True)
    if section.folded:
        return f"<details><summary><b>{heading}</b></summary>{body}</details>"
    return f"<h2>{heading}</h2>{body}"


def _html_block(block: Body) -> str:
    if isinstance(block, str):
        return markdown_html(block)
    if isinstance(block, Figure):
        title = html.escape(block.title)
        return (
            f"<figure><img alt='{title}' src='data:image/png;base64,{block.png}'>"
            f"<details><summary>the numbers behind “{title}”</summary>{_html_table(block.numbers)}</details></figure>"
        )
    return _html_table(block)


def _html_table(frame: pd.DataFrame) -> str:
    html = frame.to_html(index=False, na_rep="n/a", border=0, classes="table", float_format=float_cell)
    return "<div class='scroll'>" + html + "</div>"


def markdown_html(text: str, inline: bool = False) -> str:
    """The report's Markdown (lists, emphasis, code) as HTML; raw HTML in it is escaped, not passed on.

    CommonMark by markdown-it-py, so the HTML page shows what report.md means, not its syntax.
    """
    from markdown_it import MarkdownIt

    renderer = MarkdownIt("commonmark", {"html": False})
    return renderer.renderInline(text) if inline else renderer.render(text)
