"""The demo experiment file as the benchmarks vary it: one of its tables, and a table with values changed.

The benchmarks run the demo's arms beside variants of its components; each variant is the demo's own
table with a few values set, so every other parameter stays exactly the demo's.
"""

from __future__ import annotations

from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
# The vad stage's WhisperX cut & merge, each unit decoded apart (the demo joins its regions instead).
MERGED_APART = {"merge_max_s": "30.0", "merge_max_gap_s": "30.0", "join_units": "false", "redecode_skipped_s": "0.0"}


def demo_head(manifest: Path) -> str:
    """The demo experiment file up to its [arms] table, reading ``manifest``."""
    text = DEMO.read_text(encoding="utf-8")
    return text[: text.rindex("\n[arms]") + 1].replace('manifest = "corpus/manifest.json"', f'manifest = "{manifest}"')


def table(text: str, header: str) -> str:
    """The TOML table ``header`` with its sub-tables, as written in ``text``."""
    start = text.index(header)
    position = start + len(header)
    while (following := text.find("\n[", position)) != -1:
        if not text.startswith(header[:-1] + ".", following + 1):  # not one of its sub-tables
            return text[start : following + 1]
        position = following + 1
    return text[start:]


def with_values(table: str, values: dict[str, str], name: str | None = None) -> str:
    """``table`` with each ``key = value`` line of ``values`` set (every key must be there), renamed to the
    component ``name`` if given."""
    lines = table.splitlines()
    for key, value in values.items():
        hits = [i for i, line in enumerate(lines) if line.startswith(f"{key} = ")]
        if not hits:
            raise SystemExit(f"no {key} in {lines[0]}")
        for i in hits:
            lines[i] = f"{key} = {value}"
    if name is not None:
        lines[0] = f"[components.{name}]"
    return "\n".join(lines) + "\n"
