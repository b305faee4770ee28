"""The run folder reference explains every runtime and memory column the run record and the report carry."""

from __future__ import annotations

from pathlib import Path

from toolkit.report.tables import LOAD_COLUMNS, RUNTIME_COLUMNS, SUMMARY_RUNTIME_COLUMNS

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "run-folder.md"


def test_the_run_folder_page_explains_every_runtime_and_memory_column() -> None:
    page = PAGE.read_text(encoding="utf-8")
    section = page.split("## Runtime and memory columns")[1].split("\n## ")[0]
    for column in (*SUMMARY_RUNTIME_COLUMNS, *RUNTIME_COLUMNS, *LOAD_COLUMNS):
        assert f"`{column}`" in section, column
