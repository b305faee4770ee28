"""Pre-registered gates: the gates file, and a PROMOTE / RETAIN BASELINE verdict.

The gates file (TOML; template ``protocol/gates.toml``, printed by ``ablate challenger template``) writes out
every gate with its threshold; a gate is skipped only when declared ``applicable = false`` with a ``reason``.
Each gate's direction is fixed here, never in the file, so a threshold cannot be turned into
its opposite. Gates compare the frozen challenger with the baseline on one run (holdout or
challenge): critical errors are "newly introduced" per reference occurrence, lost turns per
reference turn, and every failed gate lists the instances behind it. Format 2 adds one gate measured
after the holdout: whether the other gates' verdict survives the holdout re-decoded under inaudible
dither (``toolkit.protocol.stability``); a format-1 file (frozen before it existed) reads it as not
pre-registered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit.core.data_files import parse_toml
from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.core.names import unknown_name
from toolkit.core.text import read_text
from toolkit.explain import Explanation, explain
from toolkit.scorer.align import INSERT
from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.critical import Occurrence, critical_occurrences, newly_wrong
from toolkit.scorer.metrics.timing import TimingScore
from toolkit.scorer.normalize.same_word import word_key

if TYPE_CHECKING:
    from toolkit.runs.record import RunRecord
    from toolkit.runs.scored import Evaluation
    from toolkit.scorer.results import RecordingScore

FORMAT = 2
FORMATS = (1, 2)  # a gates file frozen with an earlier toolkit stays readable
PROMOTE, RETAIN = "PROMOTE", "RETAIN BASELINE"
DITHER_GATE = "verdict_flips_under_dither"
MAX_RERUNS = 100  # the most dithered reruns a stability check (and this gate) may ask for
# Package data, so an installed wheel has it (in a checkout, a link to the written protocol's protocol/gates.toml).
TEMPLATE = Path(__file__).resolve().parent / "gates.toml"


@dataclass(frozen=True)
class GateSpec:
    """What a gate measures and which way it passes: ``<=``, ``>=`` or ``|x| <=`` its threshold."""

    name: str
    measures: str
    comparison: str
    count: bool  # an integer count of failures (the zero-failure bound applies at 0)
    since: int = 1  # the gates-file format that introduced it


SPECS = (
    GateSpec("new_negation_errors", "negation flips and insertions the baseline did not make", "<=", True),
    GateSpec("new_name_errors", "name occurrences the baseline got right and the challenger got wrong", "<=", True),
    GateSpec("new_number_errors", "number occurrences the baseline got right and the challenger got wrong", "<=", True),
    GateSpec(
        "lost_speech_turns",
        "reference turns the baseline recognized (>= half the words) and the challenger deleted entirely",
        "<=",
        True,
    ),
    GateSpec("seam_omissions", "reference words the challenger omitted near a window seam", "<=", True),
    GateSpec("seam_duplications", "words the challenger duplicated near a window seam", "<=", True),
    GateSpec("vad_speech_recall", "fraction of annotated speech duration the challenger's VAD kept", ">=", False),
    GateSpec("onset_p95_s", "p95 absolute word onset error of the challenger, seconds", "<=", False),
    GateSpec(
        "drift_s_per_min", "largest per-recording |onset drift| of the challenger, seconds per minute", "|x| <=", False
    ),
    GateSpec(
        "wer_reduction_points",
        "lower bound of the paired bootstrap interval of the WER reduction, percentage points",
        ">=",
        False,
    ),
    GateSpec(
        DITHER_GATE,
        "holdout reruns under inaudible dither (seeds 1 to reruns) whose verdict of the other gates differs",
        "<=",
        True,
        since=2,
    ),
)
SPEC_BY_NAME = {spec.name: spec for spec in SPECS}


@dataclass(frozen=True)
class Gate:
    """One declared gate: its threshold, or ``applicable = false`` with the reason."""

    name: str
    applicable: bool
    threshold: float | None
    reason: str = ""
    reruns: int | None = None  # the dither gate's pre-registered number of reruns


@dataclass(frozen=True)
class DitherOutcome:
    """The other gates' verdict on the undithered holdout, then on its reruns under dither at the default
    level, seeds 1, 2, ... in order: as the audit log recorded a stability check."""

    verdicts: tuple[str, ...]


@dataclass(frozen=True)
class GatesFile:
    path: Path
    sha256: str
    gates: dict[str, Gate]


def load_gates(path: str | Path) -> GatesFile:
    """Read and strictly validate a gates file; any problem is one line naming the file and the key."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "gates file not found")
    raw = parse_toml(read_text(path), path)
    unknown = sorted(set(raw) - {"format", *SPEC_BY_NAME})
    if unknown:
        raise InputError(path, f"unknown key '{unknown[0]}'; gates are {', '.join(SPEC_BY_NAME)}")
    if "format" not in raw:
        raise InputError(path, f"missing key 'format' (this toolkit reads format = {FORMAT})")
    if raw["format"] not in FORMATS or isinstance(raw["format"], bool):
        raise InputError(path, f"key 'format' must be {' or '.join(map(str, FORMATS))}, not {raw['format']!r}")
    gates = {}
    for spec in SPECS:
        if spec.since > raw["format"]:
            if spec.name in raw:
                raise InputError(path, f"key '{spec.name}' is a gate of format = {spec.since}, not {raw['format']}")
            reason = f"not pre-registered: a format-{raw['format']} gates file has no such gate"
            gates[spec.name] = Gate(spec.name, False, None, reason)
            continue
        if spec.name not in raw:
            raise InputError(
                path,
                f"missing key '{spec.name}': every gate must be written out "
                f"(or declared applicable = false with a reason)",
            )
        gates[spec.name] = _gate(path, spec, raw[spec.name])
    return GatesFile(path, sha256_file(path), gates)


def _gate(path: Path, spec: GateSpec, table: Any) -> Gate:
    where = spec.name
    if not isinstance(table, dict):
        raise InputError(path, f"key '{where}' must be a table [{where}], not {table!r}")
    keys = ("applicable", "threshold", "reason", *(("reruns",) if spec.name == DITHER_GATE else ()))
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise InputError(path, f"unknown key '{where}.{unknown[0]}'; this gate has {', '.join(keys)}")
    if "applicable" not in table:
        raise InputError(path, f"missing key '{where}.applicable' (true, or false with a reason)")
    applicable = table["applicable"]
    if not isinstance(applicable, bool):
        raise InputError(path, f"key '{where}.applicable' must be true or false, not {applicable!r}")
    reason = table.get("reason", "")
    if not isinstance(reason, str):
        raise InputError(path, f"key '{where}.reason' must be a string, not {reason!r}")
    if not applicable:
        if not reason.strip():
            raise InputError(path, f"missing key '{where}.reason': a gate is not applicable only with a reason")
        threshold = table.get("threshold")
    else:
        if "threshold" not in table:
            raise InputError(path, f"missing key '{where}.threshold'")
        threshold = table["threshold"]
    if threshold is not None:
        if spec.count and (isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0):
            raise InputError(path, f"key '{where}.threshold' must be a non-negative integer count, not {threshold!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
            raise InputError(path, f"key '{where}.threshold' must be a number, not {threshold!r}")
        if spec.name == "vad_speech_recall" and not 0 <= threshold <= 1:
            raise InputError(path, f"key '{where}.threshold' must be a fraction in [0, 1], not {threshold!r}")
        if spec.comparison == "|x| <=" and threshold < 0:
            raise InputError(path, f"key '{where}.threshold' must be >= 0, not {threshold!r}")
    reruns = _reruns(path, table) if spec.name == DITHER_GATE and applicable else None
    return Gate(spec.name, applicable, None if threshold is None else float(threshold), reason.strip(), reruns)


def _reruns(path: Path, table: dict[str, Any]) -> int:
    """The dither gate's ``reruns``: how many dithered reruns of the holdout the verdict must survive."""
    where = f"{DITHER_GATE}.reruns"
    if "reruns" not in table:
        raise InputError(path, f"missing key '{where}' (how many dithered reruns of the holdout, 1 to {MAX_RERUNS})")
    reruns = table["reruns"]
    if isinstance(reruns, bool) or not isinstance(reruns, int) or not 1 <= reruns <= MAX_RERUNS:
        raise InputError(path, f"key '{where}' must be a whole number from 1 to {MAX_RERUNS}, not {reruns!r}")
    if table.get("threshold", 0) > reruns:
        raise InputError(path, f"key '{DITHER_GATE}.threshold' allows more flips than there are reruns ({reruns})")
    return reruns


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
        if self.challenge is not None:
            lines.append("-- challenge split (reported apart, never pooled with the holdout) --")
            lines.extend("  " + line for line in self.challenge.text().splitlines())
        lines.append(f"signature: {self.signature}")
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


def _baseline_inserted(base: RecordingScore, instance: Any, chal: RecordingScore) -> bool:
    """Whether the baseline inserted the same word within the seam margin of a challenger seam duplication:
    then the window seam did not introduce it (the gates count what the challenger introduced)."""
    at = base.aligned
    if at is None or instance.time is None or chal.seams is None:
        return False
    margin, key = chal.seams.margin_s, word_key(instance.hypothesis)
    words = at.hyp.words
    for token in np.flatnonzero(at.hyp_op == INSERT).tolist():
        source = int(at.hyp.source[token])
        start = words.start[source]
        if not np.isnan(start) and abs(start - instance.time) <= margin and word_key(words.texts[source]) == key:
            return True
    return False


def _baseline_text(score: RecordingScore, start: float | None, end: float | None) -> str:
    """The baseline's words whose times fall inside ``[start, end]`` (for instances without a token position)."""
    at = score.aligned
    if at is None or start is None:
        return ""
    end = start if end is None else end
    words = at.hyp.words
    mids = np.where(np.isnan(words.end), words.start, (words.start + words.end) / 2)
    return words.quote(np.flatnonzero((mids >= start - 1e-6) & (mids <= end + 1e-6)).tolist())


def _baseline_at(base: RecordingScore, chal: RecordingScore, instance: Any) -> str:
    """What the baseline wrote at the reference word an instance of the challenger quotes (same reference tokens)."""
    at = chal.audit_tokens
    for i in range(len(at.ref)):
        source = int(at.ref.source[i])
        if (
            at.ref.words.texts[source] == instance.reference
            and round(float(at.ref.words.span_start[source]), 3) == instance.time
        ):
            return base.audit_tokens.ref_instance("", i, i).hypothesis
    return _baseline_text(base, instance.time, instance.end)


def _occurrence_instance(
    recording: str, occurrence: Occurrence, base: RecordingScore, chal: RecordingScore
) -> dict[str, Any]:
    at_c, at_b = chal.audit_tokens, base.audit_tokens
    extra = None if occurrence.hyp_token < 0 else np.array([occurrence.hyp_token])
    inst = at_c.ref_instance(occurrence.audit, occurrence.first, occurrence.last, extra)
    reference = "" if occurrence.key[0] == "inserted" else inst.reference
    challenger = at_c.hyp.texts[at_c.hyp.source[occurrence.hyp_token]] if occurrence.hyp_token >= 0 else inst.hypothesis
    baseline = at_b.ref_instance(occurrence.audit, occurrence.first, occurrence.last).hypothesis
    kind = {
        "negation": "negation inserted" if occurrence.key[0] == "inserted" else "negation flip",
        "names": "name error",
        "numbers": "number error",
    }[occurrence.audit]
    item = {
        "recording": recording,
        "kind": kind,
        "time": inst.time,
        "end": inst.end,
        "reference": reference,
        "baseline": baseline,
        "challenger": challenger,
    }
    if occurrence.audit == "numbers":
        form = _form_only(at_b, at_c, occurrence.first, occurrence.last)
        if form is not None:
            item["detail"] = form
    return item


def _said_values(at: AlignedTokens, first: int, last: int) -> list[str]:
    """The values of the hypothesis numbers aligned to reference tokens ``first..last``, in order."""
    groups = at.hyp.number_group[at.hyp_tokens_for(first, last)]
    seen = dict.fromkeys(int(g) for g in groups if g >= 0)
    values = {int(g): at.hyp.number_value[k] for k, g in enumerate(at.hyp.number_group.tolist()) if g in seen}
    return [str(values[g]) for g in seen]


def _form_only(base: AlignedTokens, chal: AlignedTokens, first: int, last: int) -> str | None:
    """A note when the challenger wrote the baseline's number in another form only (an ordinal for a
    cardinal, digits for words the normalizer reads otherwise): a formatting difference, not recognition."""
    said_b, said_c = _said_values(base, first, last), _said_values(chal, first, last)
    plain = [value.rstrip("ºª") for value in said_c]
    if not said_c or said_b == said_c or plain != [value.rstrip("ºª") for value in said_b]:
        return None
    return (
        f"differs from the baseline only in form ({' '.join(said_b)} / {' '.join(said_c)}): the same number "
        "written another way, a formatting difference, not a recognition error"
    )


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
    from toolkit.corpus.manifest import load_manifest
    from toolkit.scorer.score import audit_rules, audit_vocabulary

    for arm in (baseline, challenger):
        if arm not in evaluation.scores:
            raise InputError(evaluation.folder.root, unknown_name("arm", arm, list(evaluation.scores)))
    refuse_failed_arms(evaluation.record, evaluation.folder.record, challenger=challenger, baseline=baseline)
    base_scores, chal_scores = evaluation.scores[baseline], evaluation.scores[challenger]
    manifest = load_manifest(evaluation.record.manifest_path(evaluation.folder.root))
    entries = {e.id: e for e in manifest.recordings if e.id in chal_scores}

    measured: dict[str, tuple[float | None, int | None, str, list[dict[str, Any]]]] = {}
    new: dict[str, list[dict[str, Any]]] = {a: [] for a in ("negation", "names", "numbers")}
    chances = {a: 0 for a in new}
    rules = audit_rules(evaluation.options)
    for rid in sorted(chal_scores):
        base, chal = base_scores[rid], chal_scores[rid]
        negations, names = audit_vocabulary(entries[rid].load_reference().names, evaluation.options)
        turns = base.word_utterances[base.audit_tokens.ref.source]  # the reference is the same for both arms
        base_occ = critical_occurrences(base.audit_tokens, negations, names, turns, rules)
        for o in base_occ:
            if o.key[0] == "ref" and not o.wrong:
                chances[o.audit] += 1
        for o in newly_wrong(base_occ, critical_occurrences(chal.audit_tokens, negations, names, turns, rules)):
            new[o.audit].append(_occurrence_instance(rid, o, base, chal))
    for gate_name, audit in (
        ("new_negation_errors", "negation"),
        ("new_name_errors", "names"),
        ("new_number_errors", "numbers"),
    ):
        measured[gate_name] = (len(new[audit]), chances[audit], "", new[audit])

    lost, recognized, lost_items = 0, 0, []
    for rid, chal in sorted(chal_scores.items()):
        turns = chal.lost_turns
        if turns is None:
            continue
        lost, recognized = lost + turns.lost, recognized + turns.recognized
        for i in turns.instances:
            lost_items.append(
                {
                    "recording": rid,
                    "kind": "lost turn",
                    "time": i.time,
                    "end": i.end,
                    "reference": i.reference,
                    "baseline": _baseline_text(base_scores[rid], i.time, i.end),
                    "challenger": i.hypothesis,
                }
            )
    measured["lost_speech_turns"] = (lost, recognized, "", lost_items)

    seamed = [(rid, s, s.seams) for rid, s in sorted(chal_scores.items()) if s.seams is not None]
    n_seams = sum(seams.seams for _, _, seams in seamed)
    for gate_name, kind in (("seam_omissions", "seam omission"), ("seam_duplications", "seam duplication")):
        items = [
            {
                "recording": rid,
                "kind": kind,
                "time": i.time,
                "end": i.end,
                "reference": i.reference,
                "baseline": _baseline_at(base_scores[rid], s, i)
                if i.reference and kind == "seam omission"
                else _baseline_text(base_scores[rid], i.time, i.end),
                "challenger": i.hypothesis,
            }
            for rid, s, seams in seamed
            for i in seams.instances
            if i.kind == kind and not (kind == "seam duplication" and _baseline_inserted(base_scores[rid], i, s))
        ]
        note = "" if seamed else "the challenger has no window seams"
        measured[gate_name] = (len(items), n_seams, note, items)

    vads = [(rid, s.vad) for rid, s in sorted(chal_scores.items()) if s.vad is not None]
    if vads:
        speech = sum(v.speech_s for _, v in vads)
        recall = sum(v.retained_s for _, v in vads) / speech if speech else None
        items = [
            {
                "recording": rid,
                "kind": i.kind,
                "time": i.time,
                "end": i.end,
                "reference": i.reference,
                "baseline": _baseline_text(base_scores[rid], i.time, i.end),
                "challenger": "",
            }
            for rid, v in vads
            for i in v.instances
        ]
        measured["vad_speech_recall"] = (recall, None, "" if speech else "no annotated speech", items)
    else:
        measured["vad_speech_recall"] = (
            1.0,
            None,
            "the challenger decodes all audio: nothing drops any before the recognizer",
            [],
        )

    pooled = sum((s.timing for s in chal_scores.values()), TimingScore(recordings=0))  # the corpus's onset errors
    p95, errors = pooled.onset_abs_p95_s, pooled.onset_errors
    per_rec_p95 = [
        {"recording": rid, "detail": f"p95 |onset error| {s.timing.to_json()['onset_abs_p95_s']} s"}
        for rid, s in sorted(chal_scores.items())
        if s.timing.available
    ]
    measured["onset_p95_s"] = (
        p95,
        len(errors),
        "" if p95 is not None else "no matched timed reference words",
        per_rec_p95,
    )
    drifts = {rid: s.timing.drift_s_per_min for rid, s in sorted(chal_scores.items())}
    known = {rid: d for rid, d in drifts.items() if d is not None}
    worst = max(known.values(), key=abs) if known else None
    measured["drift_s_per_min"] = (
        worst,
        len(known),
        "" if known else "no recording has enough timed words",
        [{"recording": rid, "detail": f"drift {d:+.4f} s/min"} for rid, d in known.items()],
    )
    comparison = evaluation.comparisons.get(challenger)
    reduction = 100 * comparison.reduction_ci[0] if comparison is not None else None
    wer_items = (
        []
        if comparison is None
        else [
            {
                "recording": r["recording_id"],
                "detail": f"baseline WER {100 * r['baseline_wer']:.1f}%, challenger "
                f"{100 * r['challenger_wer']:.1f}% (N={r['ref_words']})",
            }
            for r in comparison.per_recording.to_dict(orient="records")
        ]
    )
    wer_note = (
        ""
        if comparison is None
        else (
            f"reduction {100 * -comparison.delta:+.2f} points, {int(100 * comparison.confidence)}% CI "
            f"[{100 * comparison.reduction_ci[0]:+.2f}, {100 * comparison.reduction_ci[1]:+.2f}]"
            + (f"; {comparison.warning}" if comparison.warning else "")
        )
    )
    measured["wer_reduction_points"] = (reduction, comparison.recordings if comparison else None, wer_note, wer_items)

    measured[DITHER_GATE] = _dither_measure(gates.gates[DITHER_GATE], dither)
    _name_causes(measured, explain(evaluation, challenger, baseline))
    results = [_result(spec, gates.gates[spec.name], *measured[spec.name]) for spec in SPECS]
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


def _result(
    spec: GateSpec, gate: Gate, value: float | None, opportunities: int | None, note: str, items: list[dict[str, Any]]
) -> GateResult:
    """``gate`` against its measure, built once for both cases (n/a: its reason; a failure: its instances)."""
    passed: bool | None = None
    if gate.applicable:
        passed = value is not None and gate.threshold is not None and _compare(spec, value, gate.threshold)
        if value is None and spec.name != DITHER_GATE:
            note = f"not measurable: {note}; declare it not applicable with a reason, or it fails"
    reason = "" if gate.applicable else gate.reason
    instances = items if passed is False else []
    return GateResult(
        spec.name,
        gate.applicable,
        passed,
        value,
        gate.threshold,
        spec.comparison,
        spec.measures,
        opportunities,
        note,
        reason,
        instances,
    )


def verdict_of(results: list[GateResult], excluding: str = "") -> str:
    """PROMOTE when every applicable gate (but ``excluding``) passed, else RETAIN BASELINE."""
    return PROMOTE if all(r.passed for r in results if r.applicable and r.name != excluding) else RETAIN


def _dither_measure(gate: Gate, dither: DitherOutcome | None) -> tuple[int | None, int | None, str, list[Any]]:
    """The dither gate's value: of the pre-registered reruns, how many changed the other gates' verdict;
    None (the gate fails) until a stability check measured that many."""
    wanted = gate.reruns or 0
    if not gate.applicable:
        return None, None, "", []
    if dither is None or len(dither.verdicts) - 1 < wanted:
        measured = "not measured" if dither is None else f"{len(dither.verdicts) - 1} rerun(s) measured"
        return (
            None,
            None,
            f"{measured}, {wanted} pre-registered: re-decode the holdout under dither "
            f"(ablate explain EXPERIMENT --split holdout --stability {wanted}), then evaluate the gates again",
            [],
        )
    flips = sum(v != dither.verdicts[0] for v in dither.verdicts[1 : wanted + 1])
    return flips, wanted, f"the other gates say {dither.verdicts[0]} undithered; {flips} of {wanted} reruns differ", []


def _name_causes(measured: dict[str, Any], explanation: Explanation) -> None:
    """Give each located instance the cause of the challenger's regression there (``toolkit.explain``)."""
    for _, _, _, items in measured.values():
        for item in items:
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
    spec = {s.name: s for s in SPECS}
    bounds = [
        f"{r.name}: {bound}"
        for r in results
        if r.applicable and spec[r.name].count and (bound := zero_failure_bound(int(r.value or 0), r.opportunities))
    ]
    text = (
        f"{split} is {size['recordings']} recording(s), {size['minutes']:.1f} min, "
        f"{size['reference_words']} reference words; a small pass cannot establish rare-failure reliability"
    )
    return text + (" (" + "; ".join(bounds) + ")" if bounds else "")
