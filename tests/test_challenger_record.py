"""``challenger.json`` is a typed record with one reader and one writer: it reads back what was written,
and a damaged file is one line naming it, never a KeyError in the verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.core.errors import InputError
from toolkit.protocol.challenger import ChallengerRecord, Fingerprint

FINGERPRINT = Fingerprint(
    arm="vad",
    baseline="baseline",
    config={"baseline": {"name": "baseline", "components": []}, "challenger": {"name": "vad", "components": []}},
    config_sha256="a" * 64,
    gates_sha256="b" * 64,
    manifest_sha256="c" * 64,
    signature="wer|ptbr-norm-3",
    signature_hash="d" * 16,
)


def test_a_written_record_reads_back_equal(tmp_path: Path) -> None:
    record = ChallengerRecord(FINGERPRINT, "gates.toml")
    path = record.write(tmp_path / "challenger.json")
    assert ChallengerRecord.read(path) == record
    assert json.loads(path.read_text(encoding="utf-8"))["gates_source"] == "gates.toml"


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: "{not json", "challenger.json"),
        (lambda d: [1, 2], "not a challenger record"),
        (lambda d: {k: v for k, v in d.items() if k != "gates_source"}, "'gates_source'"),
        (lambda d: {k: v for k, v in d.items() if k != "manifest_sha256"}, "missing manifest_sha256"),
        (lambda d: {**d, "arm": 3}, "arm"),
        (lambda d: {**d, "extra": 1}, "unknown parameter(s) extra"),
        (lambda d: {**d, "config": {"challenger": {"name": "vad"}}}, "config.baseline must be an arm"),
    ],
)
def test_a_damaged_record_is_one_line_naming_the_file(tmp_path: Path, edit, message: str) -> None:
    path = ChallengerRecord(FINGERPRINT, "gates.toml").write(tmp_path / "challenger.json")
    edited = edit(json.loads(path.read_text(encoding="utf-8")))
    path.write_text(edited if isinstance(edited, str) else json.dumps(edited), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        ChallengerRecord.read(path)
    assert str(path) in str(raised.value) and message in str(raised.value) and "\n" not in str(raised.value)


def test_a_missing_record_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="ablate challenger freeze"):
        ChallengerRecord.read(tmp_path / "challenger.json")
