"""A PROMOTE / RETAIN BASELINE verdict: every gate of a gates file (toolkit.protocol.gates_file) against its
measure on one run (toolkit.protocol.gate_measures), the instances behind each failure, and a caveat on what a
small test set can show. The challenge split is judged apart, never pooled with the holdout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.errors import InputError
from toolkit.core.names import unknown_name
from toolkit.explain import Explanation, explain
from toolkit.protocol.gate_measures import DitherOutcome, Measured, measure_gates
from toolkit.protocol.gates_file import DITHER_GATE, SPEC_BY_NAME, SPECS, Gate, GatesFile, GateSpec
from toolkit.protocol.planning import planning_text

if TYPE_CHECKING:
    from toolkit.runs.record import RunRecord
    from toolkit.runs.scored import Evaluation

PROMOTE, RETAIN = "PROMOTE", "RETAIN BASELINE"


@dataclass
class GateResult:
    """One gate evaluated: its value against its threshold, and the instances behind a failure."""

    name: str
    applicable: bool
    passed: bool | None
    value: float | None
    threshold: float | None
    comparison: str
    measures: str
    opportunities: int | None = None
    note: str = ""
    reason: str = ""
    instances: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "value": self.value,
            "threshold": self.threshold,
            "applicable": self.applicable,
            "comparison": self.comparison,
            "measures": self.measures,
            "opportunities": self.opportunities,
            "note": self.note,
            "reason": self.reason,
            "instances": self.instances,
        }


@dataclass
class GateReport:
    """The verdict on one run; ``challenge`` holds the challenge split's report, never pooled."""

    split: str
    baseline: str
    challenger: str
    verdict: str
    gates: list[GateResult]
    caveat: str
    holdout: dict[str, Any]
    signature: str
    challenge: GateReport | None = None
    openings: str = ""  # what the openings ledgers know of this test content (toolkit.protocol.ledger)
    audit_head: str = ""  # the audit log's head after this verdict was logged, to publish
    planning: dict[str, Any] = field(default_factory=dict)  # the freeze's power and calibration (protocol.planning)

    @property
    def others_verdict(self) -> str:
        """The verdict of every gate but the dither gate: what a dithered rerun is compared on."""
        return verdict_of(self.gates, excluding=DITHER_GATE)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "verdict": self.verdict,
            "gates": [g.to_json() for g in self.gates],
            "caveat": self.caveat,
            "holdout": self.holdout,
            "signature": self.signature,
            "split": self.split,
            "baseline": self.baseline,
            "challenger": self.challenger,
        }
        if self.split == "holdout":
            data["challenge"] = self.challenge.to_json() if self.challenge is not None else None
        if self.openings:
            data["openings"] = self.openings
        if self.planning:
            data["planning"] = self.planning
            data["minimum_detectable_effect_points"] = self.planning["minimum_detectable_effect_points"]
        return data

    def text(self) -> str:
        """Human-readable: one line per gate, instances under failed gates, caveat, verdict last."""
        lines = [f"gates on {self.split}: challenger {self.challenger!r} vs {self.baseline!r}"]
        for g in self.gates:
            if not g.applicable:
                lines.append(f"  n/a   {g.name}: not applicable ({g.reason})")
                continue
            mark = "PASS" if g.passed else "FAIL"
            lines.append(
                f"  {mark}  {g.name}: {_fmt(g.value)} (must be {g.comparison.replace('x', 'value')} "
                f"{_fmt(g.threshold)}){' — ' + g.note if g.note else ''}"
            )
            if not g.passed:
                for item in g.instances:
                    lines.append("          " + _instance_line(item))
        lines.append(f"caveat: {self.caveat}")
        if self.planning:
            lines.extend(planning_text(self.planning).splitlines())
        if self.openings:
            lines.append(self.openings)
        if self.challenge is not None:
            lines.append("-- challenge split (reported apart, never pooled with the holdout) --")
            lines.extend("  " + line for line in self.challenge.text().splitlines())
        lines.append(f"signature: {self.signature}")
        if self.audit_head:
            lines.append(
                f"audit head: {self.audit_head} (publish it; 'ablate audit verify EXP --head {self.audit_head}' "
                "checks a log against it)"
            )
        lines.append(f"verdict ({self.split}): {self.verdict}")
        return "\n".join(lines)


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{int(value)}" if float(value).is_integer() else f"{value:.4g}"


def _instance_line(item: dict[str, Any]) -> str:
    parts = [item.get("recording", "") + ("" if item.get("time") is None else f" @ {item['time']:.2f} s")]
    for key in ("reference", "baseline", "challenger"):
        if key in item:
            parts.append(f"{key}: {item[key] or '∅'!s}")
    if "detail" in item:
        parts.append(str(item["detail"]))
    if item.get("cause"):
        parts.append(f"cause: {item['cause']}")
    return " | ".join(parts)


def _compare(spec: GateSpec, value: float, threshold: float) -> bool:
    if spec.comparison == "<=":
        return value <= threshold + 1e-12
    if spec.comparison == ">=":
        return value >= threshold - 1e-12
    return abs(value) <= threshold + 1e-12


def refuse_failed_arms(record: RunRecord, path: Path, *, challenger: str, baseline: str) -> None:
    """No verdict when a stage failed for the challenger or the baseline on any recording of the run."""
    for role, arm in (("challenger", challenger), ("baseline", baseline)):
        failed = [f for f in record.arm_failures if f.arm == arm]
        if failed:
            raise InputError(
                path,
                f"no verdict: the {role} failed on {len(failed)} of {len(record.recordings)} "
                f"recordings ({failed[0].error})",
            )


def evaluate_gates(
    evaluation: Evaluation,
    challenger: str,
    gates: GatesFile,
    *,
    baseline: str = "baseline",
    dither: DitherOutcome | None = None,
) -> GateReport:
    """Every gate of ``gates`` on ``evaluation`` (a run holding ``baseline`` and ``challenger``); the dither
    gate from ``dither`` (None: not measured)."""
    for arm in (baseline, challenger):
        if arm not in evaluation.scores:
            raise InputError(evaluation.folder.root, unknown_name("arm", arm, list(evaluation.scores)))
    refuse_failed_arms(evaluation.record, evaluation.folder.record, challenger=challenger, baseline=baseline)
    measured = measure_gates(evaluation, baseline, challenger, gates, dither)
    _name_causes(measured, explain(evaluation, challenger, baseline))
    results = judge(measured, gates)
    holdout = _size(evaluation, baseline)
    report = GateReport(
        evaluation.record.split,
        baseline,
        challenger,
        verdict_of(results),
        results,
        caveat(evaluation.record.split, holdout, results),
        holdout,
        evaluation.signature,
    )
    dithered = next(r for r in results if r.name == DITHER_GATE)
    if dithered.applicable and dithered.value is None and report.others_verdict == RETAIN:
        dithered.note += "; the other gates retain the baseline already, so it cannot change this verdict"
    return report


def judge(measured: dict[str, Measured], gates: GatesFile) -> list[GateResult]:
    """Every gate of ``gates`` against its measure, in the gates' order."""
    return [_result(spec, gates.gates[spec.name], measured[spec.name]) for spec in SPECS]


def _result(spec: GateSpec, gate: Gate, measured: Measured) -> GateResult:
    """``gate`` against its measure, built once for both cases (n/a: its reason; a failure: its instances)."""
    passed: bool | None = None
    value, note = measured.value, measured.note
    if gate.applicable:
        passed = value is not None and gate.threshold is not None and _compare(spec, value, gate.threshold)
        if value is None and spec.name != DITHER_GATE:
            note = f"not measurable: {note}; declare it not applicable with a reason, or it fails"
    reason = "" if gate.applicable else gate.reason
    instances = measured.instances if passed is False else []
    return GateResult(
        spec.name,
        gate.applicable,
        passed,
        value,
        gate.threshold,
        spec.comparison,
        spec.measures,
        measured.opportunities,
        note,
        reason,
        instances,
    )


def verdict_of(results: list[GateResult], excluding: str = "") -> str:
    """PROMOTE when every applicable gate (but ``excluding``) passed, else RETAIN BASELINE."""
    return PROMOTE if all(r.passed for r in results if r.applicable and r.name != excluding) else RETAIN


def _name_causes(measured: dict[str, Measured], explanation: Explanation) -> None:
    """Give each located instance the cause of the challenger's regression there (``toolkit.explain``)."""
    for gate in measured.values():
        for item in gate.instances:
            if "time" in item:
                cause = explanation.cause_at(
                    item["recording"], item["time"], item.get("end"), item.get("reference", "")
                )
                if cause is not None:
                    item["cause"] = cause


def _size(evaluation: Evaluation, baseline: str) -> dict[str, Any]:
    seconds = sum(r.duration_s for r in evaluation.record.measurements if r.arm == baseline)
    words = sum(s.counts.ref_words for s in evaluation.scores[baseline].values())
    return {
        "recordings": len(evaluation.scores[baseline]),
        "minutes": round(seconds / 60, 2),
        "reference_words": int(words),
    }


def zero_failure_bound(failures: int, opportunities: int | None) -> str | None:
    """For a zero-failure count, the exact one-sided 95% upper bound on the failure rate, 1 - 0.05^(1/n)
    (the rule of three, 3/n, is its large-n approximation and exceeds 100% below n = 3)."""
    if failures != 0 or opportunities is None:
        return None
    if opportunities == 0:
        return "0 opportunities: this gate tested nothing"
    bound = 1 - 0.05 ** (1 / opportunities)
    if bound > 0.5:
        return f"0 failures in {opportunities}: too few to bound the failure rate (95% upper bound {bound:.1%})"
    return f"0 failures in {opportunities}: exact one-sided 95% upper bound on the failure rate {bound:.1%}"


def caveat(split: str, size: dict[str, Any], results: list[GateResult]) -> str:
    """Always printed: the test set's size and what a zero-failure pass can and cannot show."""
    bounds = [
        f"{r.name}: {bound}"
        for r in results
        if r.applicable
        and SPEC_BY_NAME[r.name].count
        and (bound := zero_failure_bound(int(r.value or 0), r.opportunities))
    ]
    text = (
        f"{split} is {size['recordings']} recording(s), {size['minutes']:.1f} min, "
        f"{size['reference_words']} reference words; a small pass cannot establish rare-failure reliability"
    )
    return text + (" (" + "; ".join(bounds) + ")" if bounds else "")
