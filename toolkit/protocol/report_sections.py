"""Report sections for the protocol: the gate verdict with its instances, and the audit trail in plain words.

The report never imports the protocol: whoever writes a run's report inside an experiment passes
these sections (``write_reports(evaluation, report_sections(folder))``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from toolkit.core.json_records import Absent, record_to_json
from toolkit.protocol.audit import Entry
from toolkit.protocol.planning import calibration_text, planning_text
from toolkit.report.document import Section
from toolkit.runs.folder import RunFolder
from toolkit.runs.score_files import GateInstance, GateOutcome, GateVerdict
from toolkit.scorer.power import power_text


def _value(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{int(value)}" if float(value).is_integer() else f"{value:.4g}"


def report_sections(folder: RunFolder) -> list[Section]:
    """The gate sections (the verdict opens the report), the gates' calibration on a tuning run (it opens that
    report) and the audit trail of a run inside an experiment."""
    return [*gate_sections(folder), *calibration_section(folder), *protocol_section(folder)]


def calibration_section(folder: RunFolder) -> list[Section]:
    """The gates' error rates measured on this tuning run (``ablate calibrate``), when measured."""
    if not folder.calibration.is_file():
        return []
    data = record_to_json(folder.read_calibration())
    lines = [power_text(data["power_plan"]), *calibration_text(data).splitlines()]
    text = "\n".join(f"- {line.strip()}" for line in lines)
    return [Section.of("Gates calibrated on this split: false PROMOTE and power", text, lead=True)]


def gate_sections(folder: RunFolder) -> list[Section]:
    """The verdict with its failing gates (first screen); every gate and the instances behind each failure
    (near the end). Nothing before ``ablate gate``."""
    if not folder.gates.is_file():
        return []
    report = folder.read_gates()
    rows, instances = [], []
    for g in report.gates:
        failed = g.passed is False
        rows.append(
            {
                "gate": g.name,
                "measures": g.measures,
                "value": _value(g.value),
                "rule": _rule(g),
                "passed": "n/a" if not g.applicable else ("yes" if g.passed else "NO"),
                "instances": len(g.instances) if failed else "",
                "note": g.note or g.reason,
            }
        )
        instances += [_instance_row(g.name, i) for i in g.instances] if failed else []
    return [
        Section.of("Verdict", _verdict_lines(report), lead=True),
        Section.of(
            "Gates",
            pd.DataFrame.from_records(rows),
            "Instances behind each failed gate (cause: why the challenger differs from the baseline there):"
            if instances
            else "",
            pd.DataFrame.from_records(instances),
        ),
    ]


def _rule(gate: GateOutcome) -> str:
    """ "<= 0", ">= 0.5", "|value| <= 0.1": what the gate's value must satisfy."""
    return f"{gate.rule} {_value(gate.threshold)}"


def _given(value: Any) -> Any:
    """A gate instance's value, None where the instance has no such key."""
    return None if isinstance(value, Absent) else value


def _instance_row(gate: str, item: GateInstance) -> dict[str, Any]:
    detail = _given(item.detail)
    return {
        "gate": gate,
        "recording": _given(item.recording) or "",
        "time (s)": _value(_given(item.time)),
        "reference": _given(item.reference) or "",
        "baseline": _given(item.baseline) or "",
        "challenger": _given(item.challenger) or "",
        "cause": _given(item.cause) or "",
        "detail": detail if not isinstance(item.detail, Absent) else _given(item.kind) or "",
    }


def _verdict_lines(report: GateVerdict) -> str:
    """The verdict in a few lines: which gates failed, on what, and the caveat."""
    size = report.holdout
    lines = [
        f"**{report.verdict}**: challenger `{report.challenger}` against `{report.baseline}` on the "
        f"{report.split} split ({size.recordings} recordings, {size.minutes} min, "
        f"{size.reference_words} reference words)",
        "",
    ]
    failed = [g for g in report.gates if g.passed is False]
    for g in failed:
        lines.append(f"- failed `{g.name}`: {_value(g.value)}, must be {_rule(g)}" + _first(g.instances))
    passed = [g.name for g in report.gates if g.passed is True]
    if passed:
        lines.append(f"- passed: {', '.join(f'`{name}`' for name in passed)}")
    missing = [f"`{g.name}` ({g.reason})" for g in report.gates if not g.applicable]
    if missing:
        lines.append(f"- not applicable: {'; '.join(missing)}")
    if isinstance(report.challenge, GateVerdict):
        lines.append(f"- challenge split, reported apart and never pooled: **{report.challenge.verdict}**")
    lines += ["", f"**Caveat:** {report.caveat}"]
    if isinstance(report.openings, str):
        lines += ["", f"**Test data:** {report.openings}"]
    if isinstance(report.planning, dict):
        lines += ["", "**Planned at the freeze** (power and the gates' error rates, from the audit log):", ""]
        lines += [f"- {line.strip()}" for line in planning_text(report.planning).splitlines()]
    return "\n".join(lines)


def _first(instances: tuple[GateInstance, ...], shown: int = 2) -> str:
    """The first instances of a failed gate in a few words each, with their cause."""
    if not instances:
        return ""
    words = []
    for item in instances[:shown]:
        time = _given(item.time)
        at = (_given(item.recording) or "") + ("" if time is None else f" @ {time:.2f} s")
        said = (
            f"“{_given(item.reference) or ''}” → “{_given(item.challenger) or '∅'}”"
            if not isinstance(item.reference, Absent)
            else _given(item.detail) or ""
        )
        cause = f" ({item.cause})" if _given(item.cause) else ""
        words.append(f"{at} {said}{cause}")
    more = f"; {len(instances) - shown} more under *Gates*" if len(instances) > shown else ""
    return " — " + "; ".join(words) + more


def _describe(entry: Entry) -> str:
    other = entry.other
    details = []
    if isinstance(other.get("challenger"), dict):
        c = other["challenger"]
        details.append(
            f"arm `{c.get('arm')}`, config sha256 `{str(c.get('config_sha256'))[:12]}…`, gates sha256 "
            f"`{str(c.get('gates_sha256'))[:12]}…`, scorer `{c.get('signature_hash')}`"
        )
    for key in ("split", "run", "verdict", "computed", "reused", "reason", "command"):
        if key in other:
            details.append(f"{key} {other[key]}")
    if "manifest_sha256" in other:
        details.append(f"manifest sha256 `{other['manifest_sha256'][:12]}…`")
    details += [f"{h.kind} `{h.path}` sha256 `{h.sha256[:12]}…`" for h in entry.named_hashes() if h.kind != "manifest"]
    return f"- {entry.time} #{entry.seq} **{entry.event}**" + (": " + ", ".join(details) if details else "")


def protocol_section(folder: RunFolder) -> list[Section]:
    """The experiment's audit trail in plain words, with hashes, and whether its chain verifies now."""
    from toolkit.core.errors import ToolkitError
    from toolkit.protocol.audit import AuditLog, verify
    from toolkit.protocol.state import current_hash

    log = AuditLog(folder.root.parent.parent)
    if not log.path.is_file():
        return []
    try:
        status = (
            f"- audit log `{log.path}`: {verify(log, current_hash)} entries, chain and hashes verified; head to "
            f"publish `{log.published_head()}` (`ablate audit verify EXP --head HEAD` checks a log against it)"
        )
        entries = log.entries()
    except ToolkitError as error:
        return [Section.of("Protocol trail", f"- audit log `{log.path}` does NOT verify: {error}")]
    return [
        Section.of(
            f"Protocol trail ({len(entries)} entries, verified)",
            "\n".join([status, *map(_describe, entries)]),
            folded=True,
        )
    ]
