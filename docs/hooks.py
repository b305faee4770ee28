"""MkDocs hooks: pages generated from the code, so the reference never drifts from it.

``<!-- cli-reference -->`` in a page becomes every ``ablate`` subcommand's help, read from the parser
the command itself uses (toolkit.cli.build_parser).
"""

from __future__ import annotations

import argparse
from typing import Any

MARKER = "<!-- cli-reference -->"


def _subcommands(parser: argparse.ArgumentParser, prefix: str) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(prefix, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _subcommands(sub, f"{prefix} {name}")
    return found


def cli_reference() -> str:
    """Markdown: one section per command and subcommand, its full ``--help`` text."""
    from toolkit.cli import build_parser

    parts = []
    for name, parser in _subcommands(build_parser(), "ablate")[1:]:
        parser.prog = name
        parts.append(f"## `{name}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return markdown.replace(MARKER, cli_reference()) if MARKER in markdown else markdown
