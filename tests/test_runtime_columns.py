"""The README explains every runtime and memory column the run record and the report carry."""

from __future__ import annotations

from pathlib import Path

from toolkit.report.tables import LOAD_COLUMNS, RUNTIME_COLUMNS, SUMMARY_RUNTIME_COLUMNS


def test_readme_explains_every_runtime_and_memory_column() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Runtime and memory columns")[1].split("\n## ")[0]
    for column in (*SUMMARY_RUNTIME_COLUMNS, *RUNTIME_COLUMNS, *LOAD_COLUMNS):
        assert f"`{column}`" in section, column
