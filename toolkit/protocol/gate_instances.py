"""The instances behind a gate: where the challenger went wrong, quoted beside what the reference says and what
the baseline wrote at the same place, so a failed gate shows its evidence rather than a count."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit.scorer.align import INSERT
from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.critical import Occurrence
from toolkit.scorer.normalize.same_word import word_key

if TYPE_CHECKING:
    from toolkit.scorer.results import RecordingScore


def located(
    recording: str,
    kind: str,
    instance: Any,
    baseline: str,
    *,
    reference: str | None = None,
    challenger: str | None = None,
) -> dict[str, Any]:
    """A gate's instance at a place of a recording, from a scorer instance (``time``, ``end``, ``reference``,
    ``hypothesis``): the reference's and the challenger's words are the instance's own unless given."""
    return {
        "recording": recording,
        "kind": kind,
        "time": instance.time,
        "end": instance.end,
        "reference": instance.reference if reference is None else reference,
        "baseline": baseline,
        "challenger": instance.hypothesis if challenger is None else challenger,
    }


def baseline_inserted(base: RecordingScore, instance: Any, chal: RecordingScore) -> bool:
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


def baseline_text(score: RecordingScore, start: float | None, end: float | None) -> str:
    """The baseline's words whose times fall inside ``[start, end]`` (for instances without a token position)."""
    at = score.aligned
    if at is None or start is None:
        return ""
    end = start if end is None else end
    words = at.hyp.words
    mids = np.where(np.isnan(words.end), words.start, (words.start + words.end) / 2)
    return words.quote(np.flatnonzero((mids >= start - 1e-6) & (mids <= end + 1e-6)).tolist())


def baseline_at(base: RecordingScore, chal: RecordingScore, instance: Any) -> str:
    """What the baseline wrote at the reference word an instance of the challenger quotes (same reference tokens)."""
    at = chal.audit_tokens
    for i in range(len(at.ref)):
        source = int(at.ref.source[i])
        if (
            at.ref.words.texts[source] == instance.reference
            and round(float(at.ref.words.span_start[source]), 3) == instance.time
        ):
            return base.audit_tokens.ref_instance("", i, i).hypothesis
    return baseline_text(base, instance.time, instance.end)


def occurrence_instance(
    recording: str, occurrence: Occurrence, base: RecordingScore, chal: RecordingScore
) -> dict[str, Any]:
    """A critical occurrence (negation, name, number) the challenger newly got wrong; a number written only in
    another form than the baseline's says so in its ``detail``."""
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
    item = located(recording, kind, inst, baseline, reference=reference, challenger=challenger)
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
