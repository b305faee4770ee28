"""The stage registry is the one list of stages: the loader, the runner, explain, the protocol and the app
find a stage through it, and no module of the package picks a stage by comparing its name."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from toolkit.core.errors import InputError
from toolkit.explain.causes import CAUSES, RECOGNITION
from toolkit.pipeline.code_version import STEP_SOURCES
from toolkit.pipeline.stage_registry import STAGES, names, presence_causes, stage_named

ROOT = Path(__file__).resolve().parents[1]


def test_every_stage_has_its_own_name_and_its_sources_exist() -> None:
    assert len(set(names())) == len(STAGES)
    for stage in STAGES:
        if stage.sources:  # its step's digest keys its results (toolkit/pipeline/code_version.py)
            assert STEP_SOURCES[stage.name] == stage.sources
        assert all((ROOT / "toolkit" / source).exists() for source in stage.sources)


def test_an_unknown_stage_is_one_line_listing_the_registered_ones() -> None:
    with pytest.raises(InputError, match=r"\[components\.x\] has unknown stage 'loud'; stages are enhance, loudness"):
        stage_named("loud", path=Path("experiment.toml"), where="components.x")


def test_explain_lists_each_stage_cause_between_the_recorded_causes_and_recognition() -> None:
    causes = presence_causes(list(names()))
    assert causes == ("enhancement", "loudness")
    assert CAUSES[-1] == RECOGNITION and CAUSES[-1 - len(causes) : -1] == causes


def test_the_app_names_every_cause_in_both_languages() -> None:
    pytest.importorskip("streamlit")
    spec = importlib.util.spec_from_file_location("i18n", ROOT / "app" / "i18n.py")
    assert spec is not None and spec.loader is not None
    i18n = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(i18n)
    missing = [cause for cause in CAUSES if f"detail_{cause}" not in i18n.TEXT]
    assert missing == []


# A stage picked by its name: arm.stage("vad"), stage == "windows", c["stage"] != "enhance", ...
BY_NAME = re.compile(r"""(\.stage\(\s*["']|stage["']?\]?\s*[!=]=\s*["']|["']\s*[!=]=\s*\w*\.?stage\b)""")
# Readers of run folders written before the registry, below the pipeline in the import graph, read the stage
# names a run record holds (its data, not a choice of code).
RECORD_READERS = {"toolkit/runs/record.py"}


def test_no_module_picks_a_stage_by_comparing_its_name() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for folder in ("toolkit", "app")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "toolkit/app/" not in path.as_posix() and str(path.relative_to(ROOT)) not in RECORD_READERS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if BY_NAME.search(line)
    ]
    assert found == []
