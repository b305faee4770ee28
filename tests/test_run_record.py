"""run.json as one typed, checked record: it reads back what was written (the demo's run.json files byte for
byte), and refuses what is malformed."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json
from toolkit.core.json_records import ABSENT
from toolkit.report.tables import LOAD_COLUMNS, RUNTIME_COLUMNS
from toolkit.runs.arm_output_file import Reuse
from toolkit.runs.record import (
    ArmFailure,
    Hardware,
    ManifestUse,
    RunConfig,
    RunRecord,
    RuntimeRow,
    ServiceLoad,
    stored_path,
)

ARM = {"name": "baseline", "components": [], "variant_of": None}
# run.json files `ablate demo` wrote (a holdout run and a tuning run of all its arms).
DEMO_RECORDS = sorted((Path(__file__).resolve().parent / "golden" / "demo-records").glob("*.json"))


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
        measurements=(RuntimeRow("baseline", "demo01", duration_s=60.0, wall_s=1.5, cpu_s=1.2),),
        hardware=Hardware("Linux", "3.11.7", "x86_64", "AMD EPYC", 2, 23.5),
        reuse={"arm_results": Reuse(1, 0), "decode": Reuse(1, 2)},
        this_run={"cpu_s": 1.2, "wall_s": 1.5},
        recognizer_loads={"whisper_base": ServiceLoad(0.7, 0.9, 280.0, 0.6, None)},
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
        (lambda d: d.update(measurements={}), "measurements must be a list, not dict"),
        (lambda d: d["measurements"][0].pop("cpu_s"), "measurements[0].cpu_s is missing"),
        (lambda d: d["measurements"][0].update(wall_s="1.5"), "measurements[0].wall_s must be a number, not '1.5'"),
        (lambda d: d["measurements"][0].update(words=1.5), "measurements[0].words must be int, not 1.5"),
        (lambda d: d["measurements"][0].update(stray=1), "measurements[0] has unknown key(s) stray"),
        (lambda d: d["hardware"].pop("cpu"), "hardware.cpu is missing"),
        (lambda d: d["reuse"]["decode"].update(reused="2"), "reuse.decode.reused must be int, not '2'"),
        (lambda d: d.update(this_run={"wall_s": None}), "this_run.wall_s must be a number, not None"),
        (lambda d: d["recognizer_loads"]["whisper_base"].pop("ready_wall_s"), "ready_wall_s is missing"),
        (lambda d: d.update(stage_loads=[]), "stage_loads must be a JSON object, not list"),
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


@pytest.mark.parametrize("original", DEMO_RECORDS, ids=lambda path: path.stem)
def test_the_demo_records_read_back_byte_for_byte_with_typed_rows(tmp_path: Path, original: Path) -> None:
    record = RunRecord.read(original)
    assert record.write(tmp_path / "run.json").read_bytes() == original.read_bytes()
    atomic_write_json(tmp_path / "plain.json", json.loads(original.read_bytes()))  # the plain writer
    assert (tmp_path / "plain.json").read_bytes() == original.read_bytes()
    assert record.measurements and {row.arm for row in record.measurements} == set(record.config.arm_names)
    assert all(getattr(row, f.name) is not ABSENT for row in record.measurements for f in fields(RuntimeRow))
    assert isinstance(record.hardware, Hardware) and record.hardware.cpu_count
    assert all(isinstance(load, ServiceLoad) for load in record.recognizer_loads.values()) and record.recognizer_loads
    assert record.reuse["arm_results"] == Reuse(len(record.measurements), 0)


def test_a_load_holds_the_columns_the_report_explains() -> None:
    assert ["worker", *(f.name for f in fields(ServiceLoad))] == ["worker", *sorted(set(LOAD_COLUMNS) - {"worker"})]


def test_a_row_holds_every_runtime_column_and_an_older_row_reads_without_the_later_ones(tmp_path: Path) -> None:
    assert {f.name for f in fields(RuntimeRow)} == {"arm", "recording", *RUNTIME_COLUMNS}
    data = _record().to_json()
    data["measurements"] = [{"arm": "baseline", "recording": "demo01", "duration_s": 60, "wall_s": 1.5, "cpu_s": 1}]
    path = tmp_path / "run.json"
    atomic_write_json(path, data)
    row = RunRecord.read(path).measurements[0]
    assert (row.duration_s, row.words, row.this_run_wall_s) == (60, ABSENT, ABSENT)
    assert RunRecord.read(path).write(tmp_path / "again.json").read_bytes() == path.read_bytes()
