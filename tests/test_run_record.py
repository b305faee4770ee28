"""run.json as one typed, checked record: it reads back what was written, and refuses what is malformed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.core.errors import InputError
from toolkit.runs.record import ArmFailure, ManifestUse, RunConfig, RunRecord, stored_path

ARM = {"name": "baseline", "components": [], "variant_of": None}


def _record() -> RunRecord:
    config = RunConfig("demo", "whisper_base", {"whisper_base": {"model": "whisper-base"}}, (ARM,), seed=3)
    return RunRecord(
        "complete",
        "2026-12-01T00:00:00+00:00",
        "tuning",
        config,
        ManifestUse("corpus/manifest.json", "ab" * 32),
        ("demo01", "demo02"),
        arm_failures=(ArmFailure("baseline", "demo02", "onset_repair", "arm baseline, stage onset_repair, ..."),),
        measurements=({"arm": "baseline", "recording": "demo01", "wall_s": 1.5},),
    )


def test_a_record_reads_back_as_written(tmp_path: Path) -> None:
    record = _record()
    path = record.write(tmp_path / "run.json")
    assert RunRecord.read(path) == record
    assert RunRecord.read(path).failed_recordings("baseline") == ["demo02"]


def test_the_manifest_path_is_kept_relative_to_the_experiment_folder(tmp_path: Path) -> None:
    experiment = tmp_path / "exp"
    assert stored_path(experiment / "corpus" / "manifest.json", experiment) == "corpus/manifest.json"
    assert stored_path(tmp_path / "elsewhere" / "m.json", experiment) == (tmp_path / "elsewhere" / "m.json").as_posix()
    run_root = experiment / "runs" / "tuning-0123456789"
    assert _record().manifest_path(run_root) == experiment / "corpus" / "manifest.json"


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("config"), "config must be an object"),
        (lambda d: d.update(status="finished"), "status must be one of running, complete, failed"),
        (lambda d: d.update(recordings="demo01"), "recordings must be a list of strs"),
        (lambda d: d["config"].update(seed="three"), "config.seed must be an integer"),
        (lambda d: d["manifest"].update(hash="x"), "[manifest] has unknown parameter(s) hash"),
        (lambda d: d.update(arm_failures=[{"arm": "baseline"}]), "[arm_failures]"),
    ],
)
def test_a_malformed_record_is_one_line_naming_the_file_and_key(tmp_path: Path, change, message: str) -> None:
    data = _record().to_json()
    change(data)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        RunRecord.read(path)
    assert str(path) in str(raised.value) and message in str(raised.value) and "\n" not in str(raised.value)


def test_a_missing_or_unreadable_record_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no run record here"):
        RunRecord.read(tmp_path / "run.json")
    (tmp_path / "run.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not a readable run record"):
        RunRecord.read(tmp_path / "run.json")
