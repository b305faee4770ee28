"""The audit log's entries and head as typed records: each line read back writes its own bytes again (the
demo's log too, and generated entries against the plain canonical JSON the log wrote before it had a record),
so the hash chain is untouched; a damaged entry or head is one line naming the file and the key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json, canonical_json, sha256_bytes
from toolkit.protocol.audit import GENESIS, AuditHead, AuditLog, NamedHash, read_entry, verify
from toolkit.protocol.report_sections import _describe

# The protocol folder `ablate demo` wrote (every protocol event: freeze, holdout opened and finished, gate).
DEMO_PROTOCOL = Path(__file__).resolve().parent / "golden" / "demo-protocol"
COMMON = ("seq", "time", "event", "prev_sha256")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
hash_items = st.fixed_dictionaries({"kind": st.text(max_size=5), "path": st.text(max_size=8), "sha256": st.text()})
event_fields = st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in COMMON), json_values)


def _log(tmp_path: Path) -> AuditLog:
    folder = tmp_path / "exp"
    shutil.copytree(DEMO_PROTOCOL, folder / "protocol")
    return AuditLog(folder)


def test_the_demo_log_reads_back_byte_for_byte_with_typed_fields(tmp_path: Path) -> None:
    log = _log(tmp_path)
    lines = log.path.read_bytes().splitlines(keepends=True)
    entries = log.entries()
    assert [entry.line() for entry in entries] == lines
    assert [entry.seq for entry in entries] == list(range(1, len(lines) + 1)) and len(lines) == 11
    assert {"challenger frozen", "holdout opened", "holdout finished", "gate evaluated"} <= {e.event for e in entries}
    assert all(isinstance(h, NamedHash) for entry in entries for h in entry.named_hashes())
    assert verify(log, None) == len(lines)
    head = log.read_head()
    assert head == AuditHead(len(lines), sha256_bytes(lines[-1]))
    atomic_write_json(tmp_path / "plain.head", {"entries": head.entries, "last_sha256": head.last_sha256})
    assert (tmp_path / "plain.head").read_bytes() == log.head.read_bytes()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=event_fields, hashes=st.one_of(st.none(), st.lists(hash_items, max_size=3)))
def test_an_appended_line_is_the_plain_canonical_json_and_reads_back(
    tmp_path: Path, fields: dict[str, Any], hashes: list[dict[str, str]] | None
) -> None:
    log = AuditLog(tmp_path / "exp")
    log.path.unlink(missing_ok=True)
    log.head.unlink(missing_ok=True)  # a fresh log: a head left without its log is tampering
    named = {} if hashes is None else {"hashes": hashes}
    entry = log.append("tuning run", **fields, **named)
    line = log.path.read_bytes()
    plain = {"seq": 1, "time": entry.time, "event": "tuning run", **fields, **named, "prev_sha256": GENESIS}
    assert line == (canonical_json(plain) + "\n").encode("utf-8")  # how a line was written before its record
    assert read_entry(line, 1, 1, log.path) == entry and entry.line() == line
    assert entry.other == fields and [h.kind for h in entry.named_hashes()] == [h["kind"] for h in hashes or []]
    assert json.loads(log.head.read_text(encoding="utf-8")) == {"entries": 1, "last_sha256": sha256_bytes(line)}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.update(seq="1"), "entry 1.seq must be int, not '1'"),
        (lambda e: e.pop("time"), "entry 1.time is missing"),
        (lambda e: e.update(hashes=[{"kind": "file", "path": "x"}]), "entry 1.hashes[0].sha256 is missing"),
        (lambda e: e.update(hashes={"kind": "file"}), "entry 1.hashes must be a list, not dict"),
    ],
)
def test_a_damaged_entry_is_one_line_naming_the_log_and_the_key(tmp_path: Path, change: Any, message: str) -> None:
    log = AuditLog(tmp_path)
    log.append("tuning run", run="a")
    data = json.loads(log.path.read_bytes())
    change(data)
    log.path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    for read in (log.entries, lambda: verify(log, None)):
        with pytest.raises(InputError) as error:
            read()
        assert str(error.value) == f"{log.path}: {message}"


@pytest.mark.parametrize(
    ("head", "message"),
    [
        ({"entries": "1", "last_sha256": GENESIS}, "entries must be int, not '1'"),
        ({"entries": 1}, "last_sha256 is missing"),
        ({"entries": 1, "last_sha256": GENESIS, "note": 1}, "the file has unknown key(s) note"),
    ],
)
def test_a_damaged_head_is_one_line_naming_it_and_the_key(tmp_path: Path, head: Any, message: str) -> None:
    log = AuditLog(tmp_path)
    log.append("tuning run", run="a")
    log.head.write_text(json.dumps(head), encoding="utf-8")
    with pytest.raises(InputError) as error:
        verify(log, None)
    assert str(error.value) == f"{log.head}: {message}"


def test_the_report_describes_the_entries_the_log_reads(tmp_path: Path) -> None:
    described = [_describe(entry) for entry in _log(tmp_path).entries()]
    assert (
        described[0].startswith("- 2026-")
        and "#1 **manifest registered**: manifest sha256 `47ea11174517…`" in described[0]
    )
    frozen = next(line for line in described if "**challenger frozen**" in line)
    assert "arm `batched`" in frozen and "file `protocol/gates.toml` sha256" in frozen
