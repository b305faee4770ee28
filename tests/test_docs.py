"""The documentation is built and its Python snippets run: a page that no longer matches the code fails here."""

from __future__ import annotations

import dataclasses
import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
SNIPPET = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "ablate run" in cli and "ablate gate" in cli  # generated from the parser
    # Generated from the loaders' dataclasses and the gates' specification: every key and every gate.
    from toolkit.asr.faster_whisper_backend import DecodingConfig
    from toolkit.pipeline.stages import WindowsConfig
    from toolkit.protocol.gates_file import SPECS

    files = (tmp_path / "site" / "reference" / "experiment-file" / "index.html").read_text(encoding="utf-8")
    keys = [f.name for config in (DecodingConfig, WindowsConfig) for f in dataclasses.fields(config)]
    assert all(f"<code>{key}</code>" in files for key in keys + [spec.name for spec in SPECS])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_snippet_runs(page: Path, tmp_path: Path, monkeypatch) -> None:
    """A ``>>>`` snippet is a doctest (its printed results must match); any other runs as a script."""
    monkeypatch.chdir(tmp_path)
    for number, code in enumerate(SNIPPET.findall(page.read_text(encoding="utf-8")), 1):
        name = f"{page.name} snippet {number}"
        if code.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(code, {}, name, str(page), 0)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            output: list[str] = []
            runner.run(test, out=output.append)
            assert runner.failures == 0, "".join(output)
            continue
        try:
            exec(compile(code, name, "exec"), {"__name__": "__snippet__"})
        except Exception as error:  # the page names the failing snippet
            pytest.fail(f"{name}: {type(error).__name__}: {error}")


def test_the_architecture_page_works_one_example_of_each_extension_point() -> None:
    """Each "Add a ..." section holds a snippet, which the test above runs."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for title in ("Add a stage", "Add a recognizer backend", "Add a gate", "Add a normalizer rule"):
        assert f"### {title}\n" in text, title
        section = text.split(f"### {title}\n", 1)[1].split("\n### ", 1)[0]
        assert SNIPPET.search(section), title


def test_no_docstring_or_page_cites_what_lies_outside_the_repository() -> None:
    """A reader has the repository: not the specification, the issue tracker or the design card it grew from
    (where the shared recordings lie is said in tests/shared_data.py and, for a user setting up, the README)."""
    files = [
        *(path for folder in ("toolkit", "app", "benchmarks") for path in (ROOT / folder).rglob("*.py")),
        *(ROOT / "docs").rglob("*.md"),
    ]
    cited = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"SPEC section|\.\./shared|\bissue \d|design card", line, re.IGNORECASE)
    ]
    assert cited == []
