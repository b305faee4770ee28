"""What each gate measures on one run, challenger against baseline: a value, the opportunities it had, a note,
and the instances behind it. Critical errors are "newly introduced" per reference occurrence, lost turns per
reference turn; the dither gate counts the stability check's reruns whose verdict differs. ``MEASURES`` is the
one table of how each gate of ``gates_file.SPECS`` is measured (a new gate is its spec and its line there)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolkit.core.transcripts import DerivedTimes
from toolkit.protocol.gate_instances import baseline_at, baseline_inserted, baseline_text, located, occurrence_instance
from toolkit.protocol.gates_file import DITHER_GATE, WER_GATE, Gate, GatesFile
from toolkit.scorer.metrics.critical import critical_occurrences, newly_wrong
from toolkit.scorer.metrics.timing import TimingScore

if TYPE_CHECKING:
    from toolkit.runs.scored import Evaluation
    from toolkit.scorer.results import RecordingScore
    from toolkit.scorer.stats import PairedComparison

Scores = dict[str, "RecordingScore"]  # one arm's scores by recording
CRITICAL_GATES = {"new_negation_errors": "negation", "new_name_errors": "names", "new_number_errors": "numbers"}
SEAM_GATES = {"seam_omissions": "seam omission", "seam_duplications": "seam duplication"}


@dataclass(frozen=True)
class Measured:
    """A gate's measure: its value (None: not measurable, said in ``note``), its opportunities, and the instances
    a failure lists."""

    value: float | None
    opportunities: int | None
    note: str = ""
    instances: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class DitherOutcome:
    """The other gates' verdict on the undithered holdout, then on its reruns under dither at the default
    level, seeds 1, 2, ... in order: as the audit log recorded a stability check."""

    verdicts: tuple[str, ...]


@dataclass(frozen=True)
class GateInputs:
    """What a gate's measure may read: both arms' scores by recording, their paired comparison, the critical-word
    gates (measured beforehand: they need the manifest's names), the gates file and the stability check."""

    base: Scores
    chal: Scores
    comparison: PairedComparison | None
    critical: dict[str, Measured]
    gates: GatesFile
    dither: DitherOutcome | None


GateMeasure = Callable[[GateInputs], Measured]


def _critical(gate: str) -> GateMeasure:
    return lambda inputs: inputs.critical[gate]


def _seam(kind: str) -> GateMeasure:
    return lambda inputs: seam_errors(inputs.base, inputs.chal, kind)


def _threshold(inputs: GateInputs, gate: str) -> float | None:
    return inputs.gates.gates[gate].threshold


# How each gate is measured, in the gates' order.
MEASURES: dict[str, GateMeasure] = {
    **{gate: _critical(gate) for gate in CRITICAL_GATES},
    "lost_speech_turns": lambda inputs: lost_turns(inputs.base, inputs.chal),
    **{gate: _seam(kind) for gate, kind in SEAM_GATES.items()},
    "vad_speech_recall": lambda inputs: vad_recall(inputs.base, inputs.chal),
    "onset_p95_s": lambda inputs: onset_p95(inputs.chal, _threshold(inputs, "onset_p95_s")),
    "drift_s_per_min": lambda inputs: drift(inputs.chal, _threshold(inputs, "drift_s_per_min")),
    WER_GATE: lambda inputs: wer_reduction(inputs.comparison),
    DITHER_GATE: lambda inputs: dither_flips(inputs.gates.gates[DITHER_GATE], inputs.dither),
}


def measure_gates(
    evaluation: Evaluation, baseline: str, challenger: str, gates: GatesFile, dither: DitherOutcome | None
) -> dict[str, Measured]:
    """Every gate's measure on ``evaluation``, by gate name."""
    base, chal = evaluation.scores[baseline], evaluation.scores[challenger]
    critical = critical_errors(evaluation, base, chal)
    return measure_scores(base, chal, evaluation.comparisons.get(challenger), critical, gates, dither)


def measure_scores(
    base: Scores,
    chal: Scores,
    comparison: PairedComparison | None,
    critical: dict[str, Measured],
    gates: GatesFile,
    dither: DitherOutcome | None,
) -> dict[str, Measured]:
    """Every gate's measure from two arms' scores by recording, their paired comparison and the critical-word
    gates already measured (they need the manifest's names): what calibration resamples."""
    inputs = GateInputs(base, chal, comparison, critical, gates, dither)
    return {gate: measure(inputs) for gate, measure in MEASURES.items()}


def critical_errors(evaluation: Evaluation, base_scores: Scores, chal_scores: Scores) -> dict[str, Measured]:
    """Negations, names and numbers the challenger got wrong where the baseline got them right, out of the
    reference occurrences the baseline got right."""
    from toolkit.corpus.manifest import load_manifest
    from toolkit.scorer.score import audit_rules, audit_vocabulary

    manifest = load_manifest(evaluation.record.manifest_path(evaluation.folder.root))
    entries = {e.id: e for e in manifest.recordings if e.id in chal_scores}
    new: dict[str, list[dict[str, Any]]] = {audit: [] for audit in CRITICAL_GATES.values()}
    chances = dict.fromkeys(new, 0)
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
            new[o.audit].append(occurrence_instance(rid, o, base, chal))
    return {gate: Measured(len(new[audit]), chances[audit], "", new[audit]) for gate, audit in CRITICAL_GATES.items()}


def lost_turns(base_scores: Scores, chal_scores: Scores) -> Measured:
    """Reference turns the baseline recognized and the challenger deleted entirely, out of those recognized."""
    lost, recognized, items = 0, 0, []
    for rid, chal in sorted(chal_scores.items()):
        turns = chal.lost_turns
        if turns is None:
            continue
        lost, recognized = lost + turns.lost, recognized + turns.recognized
        items += [located(rid, "lost turn", i, baseline_text(base_scores[rid], i.time, i.end)) for i in turns.instances]
    return Measured(lost, recognized, "", items)


def seam_errors(base_scores: Scores, chal_scores: Scores, kind: str) -> Measured:
    """Words the challenger omitted (``kind`` "seam omission") or duplicated ("seam duplication") near a window
    seam, out of its seams; a duplication the baseline also inserted there is not the seam's."""
    seamed = [(rid, s, s.seams) for rid, s in sorted(chal_scores.items()) if s.seams is not None]
    n_seams = sum(seams.seams for _, _, seams in seamed)
    note = "" if seamed else "the challenger has no window seams"
    items = [
        located(
            rid,
            kind,
            i,
            baseline_at(base_scores[rid], s, i)
            if i.reference and kind == "seam omission"
            else baseline_text(base_scores[rid], i.time, i.end),
        )
        for rid, s, seams in seamed
        for i in seams.instances
        if i.kind == kind and not (kind == "seam duplication" and baseline_inserted(base_scores[rid], i, s))
    ]
    return Measured(len(items), n_seams, note, items)


def vad_recall(base_scores: Scores, chal_scores: Scores) -> Measured:
    """The share of annotated speech the challenger's VAD kept (all of it when nothing cuts audio)."""
    vads = [(rid, s.vad) for rid, s in sorted(chal_scores.items()) if s.vad is not None]
    if not vads:
        return Measured(1.0, None, "the challenger decodes all audio: nothing drops any before the recognizer")
    speech = sum(v.speech_s for _, v in vads)
    recall = sum(v.retained_s for _, v in vads) / speech if speech else None
    items = [
        located(rid, i.kind, i, baseline_text(base_scores[rid], i.time, i.end), challenger="")
        for rid, v in vads
        for i in v.instances
    ]
    return Measured(recall, None, "" if speech else "no annotated speech", items)


def onset_p95(chal_scores: Scores, threshold: float | None = None) -> Measured:
    """The p95 absolute onset error over the corpus's matched timed words, each recording's beside it; not
    measurable when reference times derived by forced alignment are coarser than the ``threshold`` judged."""
    pooled = sum((s.timing for s in chal_scores.values()), TimingScore(recordings=0))
    p95 = pooled.onset_abs_p95_s
    derived = pooled.derived
    if derived is not None and threshold is not None and threshold < derived.error_bound_s:
        return Measured(None, len(pooled.onset_errors), too_coarse(derived, f"{threshold:g} s"))
    per_recording = [
        {"recording": rid, "detail": f"p95 |onset error| {s.timing.to_json()['onset_abs_p95_s']} s"}
        for rid, s in sorted(chal_scores.items())
        if s.timing.available
    ]
    note = "" if p95 is not None else "no matched timed reference words"
    return Measured(p95, len(pooled.onset_errors), note, per_recording)


def drift(chal_scores: Scores, threshold: float | None = None) -> Measured:
    """The largest per-recording onset drift (by magnitude), out of the recordings with enough timed words; not
    measurable when a recording's derived reference times are coarser than the drift ``threshold`` allows over
    its reference span (the least drift the gate could tell from the derived times' own error)."""
    drifts = {rid: s.timing.drift_s_per_min for rid, s in sorted(chal_scores.items())}
    for rid, score in sorted(chal_scores.items()):
        timing, span = score.timing, score.timing.span
        if timing.derived is None or threshold is None or drifts[rid] is None or span is None:
            continue
        allowed = abs(threshold) * (span[1] - span[0]) / 60
        if allowed < timing.derived.error_bound_s:
            judged = f"{allowed:.2f} s ({threshold:g} s/min over {rid})"
            return Measured(None, None, too_coarse(timing.derived, judged))
    known = {rid: d for rid, d in drifts.items() if d is not None}
    worst = max(known.values(), key=abs) if known else None
    items = [{"recording": rid, "detail": f"drift {d:+.4f} s/min"} for rid, d in known.items()]
    return Measured(worst, len(known), "" if known else "no recording has enough timed words", items)


def too_coarse(derived: DerivedTimes, allowed: str) -> str:
    """The one line a time gate says when it refuses derived reference times (at freeze and at gate time)."""
    return (
        f"refused: the reference word times are {derived.describe()}, coarser than the {allowed} this gate "
        "judges; mark word times by hand or declare the gate not applicable"
    )


def wer_reduction(comparison: PairedComparison | None) -> Measured:
    """The lower bound of the paired bootstrap interval of the WER reduction, in points, each recording's WERs."""
    if comparison is None:
        return Measured(None, None)
    items = [
        {
            "recording": r["recording_id"],
            "detail": f"baseline WER {100 * r['baseline_wer']:.1f}%, challenger "
            f"{100 * r['challenger_wer']:.1f}% (N={r['ref_words']})",
        }
        for r in comparison.per_recording.to_dict(orient="records")
    ]
    note = (
        f"reduction {100 * -comparison.delta:+.2f} points, {int(100 * comparison.confidence)}% CI "
        f"[{100 * comparison.reduction_ci[0]:+.2f}, {100 * comparison.reduction_ci[1]:+.2f}]"
        + (f"; {comparison.warning}" if comparison.warning else "")
    )
    return Measured(100 * comparison.reduction_ci[0], comparison.recordings, note, items)


def dither_flips(gate: Gate, dither: DitherOutcome | None) -> Measured:
    """The dither gate's value: of the pre-registered reruns, how many changed the other gates' verdict;
    None (the gate fails) until a stability check measured that many."""
    wanted = gate.reruns or 0
    if not gate.applicable:
        return Measured(None, None)
    if dither is None or len(dither.verdicts) - 1 < wanted:
        measured = "not measured" if dither is None else f"{len(dither.verdicts) - 1} rerun(s) measured"
        return Measured(
            None,
            None,
            f"{measured}, {wanted} pre-registered: re-decode the holdout under dither "
            f"(ablate explain EXPERIMENT --split holdout --stability {wanted}), then evaluate the gates again",
        )
    flips = sum(v != dither.verdicts[0] for v in dither.verdicts[1 : wanted + 1])
    return Measured(
        flips, wanted, f"the other gates say {dither.verdicts[0]} undithered; {flips} of {wanted} reruns differ"
    )
