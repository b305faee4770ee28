"""Report sections for the protocol: the gate verdict with its instances, and the audit trail in plain words.

The report never imports the protocol: whoever writes a run's report inside an experiment passes
these sections (``write_reports(evaluation, report_sections(folder))``).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from toolkit.report.run_report import Section
from toolkit.runs.folder import RunFolder


def _value(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{int(value)}" if float(value).is_integer() else f"{value:.4g}"


def report_sections(folder: RunFolder) -> list[Section]:
    """The gate sections and the audit trail of a run inside an experiment, for its report."""
    return [*gate_sections(folder), *protocol_section(folder)]


def gate_sections(folder: RunFolder) -> list[Section]:
    """Verdict, one row per gate, and the instances behind each failed gate (empty before ``ablate gate``)."""
    path = folder.scores / "gates.json"
    if not path.is_file():
        return []
    report = json.loads(path.read_text(encoding="utf-8"))
    lines = [
        f"- verdict: **{report['verdict']}** (challenger `{report['challenger']}` vs `{report['baseline']}`, "
        f"{report['split']} split)",
        f"- caveat: {report['caveat']}",
    ]
    lines += [f"- not applicable: `{g['name']}` ({g['reason']})" for g in report["gates"] if not g["applicable"]]
    if report.get("challenge"):
        lines.append(f"- challenge split, reported apart and never pooled: **{report['challenge']['verdict']}**")
    rows, instances = [], []
    for g in report["gates"]:
        failed = g["passed"] is False
        rows.append(
            {
                "gate": g["name"],
                "measures": g["measures"],
                "value": _value(g["value"]),
                "rule": f"{g['comparison'].replace('x', 'value')} {_value(g['threshold'])}",
                "passed": "n/a" if not g["applicable"] else ("yes" if g["passed"] else "NO"),
                "instances": f"{len(g['instances'])} (see Gate instances)" if failed and g["instances"] else "",
                "note": g["note"] or g["reason"],
            }
        )
        instances += (
            [
                {
                    "gate": g["name"],
                    "recording": i.get("recording", ""),
                    "time (s)": _value(i.get("time")),
                    "reference": i.get("reference", ""),
                    "baseline": i.get("baseline", ""),
                    "challenger": i.get("challenger", ""),
                    "detail": i.get("detail", i.get("kind", "")),
                }
                for i in g["instances"]
            ]
            if failed
            else []
        )
    return [
        ("Gates", "\n".join(lines)),
        ("Gate results", pd.DataFrame.from_records(rows)),
        ("Gate instances", pd.DataFrame.from_records(instances)),
    ]


def _describe(entry: dict[str, Any]) -> str:
    event = entry.get("event", "")
    details = []
    if "challenger" in entry and isinstance(entry["challenger"], dict):
        c = entry["challenger"]
        details.append(
            f"arm `{c.get('arm')}`, config sha256 `{str(c.get('config_sha256'))[:12]}…`, gates sha256 "
            f"`{str(c.get('gates_sha256'))[:12]}…`, scorer `{c.get('signature_hash')}`"
        )
    for key in ("split", "run", "verdict", "computed", "reused", "reason", "command"):
        if key in entry:
            details.append(f"{key} {entry[key]}")
    if "manifest_sha256" in entry:
        details.append(f"manifest sha256 `{entry['manifest_sha256'][:12]}…`")
    details += [
        f"{h['kind']} `{h['path']}` sha256 `{h['sha256'][:12]}…`"
        for h in entry.get("hashes", [])
        if h["kind"] != "manifest"
    ]
    return f"- {entry.get('time', '')} #{entry.get('seq')} **{event}**" + (": " + ", ".join(details) if details else "")


def protocol_section(folder: RunFolder) -> list[Section]:
    """The experiment's audit trail in plain words, with hashes, and whether its chain verifies now."""
    from toolkit.core.errors import ToolkitError
    from toolkit.protocol.audit import AuditLog, verify
    from toolkit.protocol.state import current_hash

    log = AuditLog(folder.root.parent.parent)
    if not log.path.is_file():
        return []
    try:
        status = f"- audit log `{log.path}`: {verify(log, current_hash)} entries, chain and hashes verified"
        entries = [json.loads(line) for line in log.path.read_text(encoding="utf-8").splitlines()]
    except (ToolkitError, json.JSONDecodeError) as error:
        return [("Protocol trail", f"- audit log `{log.path}` does NOT verify: {error}")]
    return [("Protocol trail", "\n".join([status, *map(_describe, entries)]))]
