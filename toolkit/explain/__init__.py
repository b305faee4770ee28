"""Why did an arm change WER? ΔWER against the baseline split by cause, exactly, with the words behind it.

For each recording, every reference word whose outcome differs between the two systems, and every
insertion only one of them made, is one change (``toolkit.explain.changes``), given one cause
(``toolkit.explain.causes``). The changes add up: per recording and per corpus, the arm's errors
minus the baseline's are the sum of the changes, and ΔWER the sum of the causes' parts (each over
the same reference words). Every number comes with the instances behind it.
``explain(score_run(folder, options), "vad")`` in Python; ``ablate explain EXP --arm vad`` prints it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from toolkit.core.errors import InputError
from toolkit.core.names import unknown_name
from toolkit.core.transcripts import NONSPEECH
from toolkit.explain.causes import CAUSES, RecordingContext, SideRecord, cause_of, located
from toolkit.explain.changes import ARM, FIX, REGRESSION, Change, errors, word_changes
from toolkit.runs.score_files import ExplainedChange
from toolkit.runs.scored import Evaluation
from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.intervals import merge

CSV_COLUMNS = ("recording", "kind", "error", "cause", "time", "end", "reference", "baseline", "arm")
CONFIDENCE = 0.95


@dataclass(frozen=True)
class RecordingExplanation:
    """One recording: its reference words, both systems' errors, and the changes between them."""

    recording: str
    ref_words: int
    baseline_errors: int
    arm_errors: int
    changes: tuple[ExplainedChange, ...]
    turn_words: tuple[int, ...]  # reference tokens per turn (utterance), in turn order
    same_position: int = 0  # positions where both systems inserted a different word: no change, counted apart

    @property
    def delta_errors(self) -> int:
        return self.arm_errors - self.baseline_errors

    @property
    def delta_wer(self) -> float | None:
        return self.delta_errors / self.ref_words if self.ref_words else None

    def interval(self, samples: int, seed: int, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
        """A paired bootstrap interval of this recording's ΔWER over its turns (turns resampled with
        replacement, Δerrors and words summed); None with fewer than two turns holding words."""
        words = np.array(self.turn_words, dtype=float)
        if len(words) < 2:
            return None
        delta = np.zeros(len(words))
        for change in self.changes:
            delta[change.turn] += change.delta
        pick = np.random.default_rng(seed).integers(0, len(words), size=(samples, len(words)))
        ratios = delta[pick].sum(axis=1) / words[pick].sum(axis=1)
        alpha = (1 - confidence) / 2
        low, high = np.quantile(ratios, [alpha, 1 - alpha])
        return float(low), float(high)


@dataclass(frozen=True)
class Explanation:
    """An arm against a baseline on one run: per recording, and pooled (counts summed, then divided)."""

    arm: str
    against: str
    run: str
    recordings: tuple[RecordingExplanation, ...]

    @property
    def ref_words(self) -> int:
        return sum(r.ref_words for r in self.recordings)

    @property
    def delta_errors(self) -> int:
        return sum(r.delta_errors for r in self.recordings)

    @property
    def delta_wer(self) -> float | None:
        return self.delta_errors / self.ref_words if self.ref_words else None

    @property
    def changes(self) -> list[ExplainedChange]:
        return [c for r in self.recordings for c in r.changes]

    @property
    def same_position(self) -> int:
        """Positions where both systems inserted a word, different ones: neither a fix nor a regression."""
        return sum(r.same_position for r in self.recordings)

    def cause_at(self, recording: str, start: float | None, end: float | None, reference: str = "") -> str | None:
        """The cause of the arm's regression at ``[start, end]`` of ``recording`` (one quoting ``reference``
        first), for a gate instance; None when no regression lies there."""
        near = [c for c in self.changes if c.recording == recording and c.kind == REGRESSION and c.overlaps(start, end)]
        quoting = [c for c in near if reference and c.reference and c.reference in reference.split()]
        chosen = quoting or near
        return chosen[0].cause if chosen else None

    def by_cause(self, recording: str | None = None) -> dict[str, dict[str, int]]:
        """Per cause: regressions, fixes and net change in errors (pooled, or of one recording)."""
        chosen = [c for c in self.changes if recording is None or c.recording == recording]
        table = {cause: {"regressions": 0, "fixes": 0, "net": 0} for cause in CAUSES}
        for change in chosen:
            table[change.cause]["regressions" if change.kind == REGRESSION else "fixes"] += 1
            table[change.cause]["net"] += change.delta
        return table

    def to_json(self) -> dict[str, Any]:
        def part(errors: int, words: int) -> float | None:
            return round(100 * errors / words, 4) if words else None

        return {
            "arm": self.arm,
            "against": self.against,
            "run": self.run,
            "ref_words": self.ref_words,
            "delta_errors": self.delta_errors,
            "delta_wer_points": part(self.delta_errors, self.ref_words),
            "same_position_other_error": self.same_position,
            "causes": {
                cause: {**counts, "points": part(counts["net"], self.ref_words)}
                for cause, counts in self.by_cause().items()
            },
            "recordings": [
                {
                    "recording": r.recording,
                    "ref_words": r.ref_words,
                    "baseline_errors": r.baseline_errors,
                    "arm_errors": r.arm_errors,
                    "delta_wer_points": part(r.delta_errors, r.ref_words),
                    "same_position_other_error": r.same_position,
                    "causes": self.by_cause(r.recording),
                }
                for r in self.recordings
            ],
            "instances": [asdict(c) for c in self.changes],
        }

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: v for k, v in asdict(c).items() if k in CSV_COLUMNS} for c in self.changes)
        return buffer.getvalue()

    def text(self) -> str:
        """The terminal form: ΔWER, the split by cause, then each recording's."""
        total = self.ref_words
        lines = [
            f"{self.arm} against {self.against} on {self.run}: ΔWER {_points(self.delta_errors, total)} "
            f"({self.delta_errors:+d} errors over {total} reference words)"
        ]
        for cause, counts in self.by_cause().items():
            if counts["regressions"] or counts["fixes"]:
                lines.append(
                    f"  {cause:<12} {_points(counts['net'], total):>8}  ({counts['regressions']} regressions, "
                    f"{counts['fixes']} fixes)"
                )
        if self.same_position:
            lines.append(
                f"  same position, other error: {self.same_position} (both inserted a word there, a different one: "
                "neither a fix nor a regression, no part of ΔWER)"
            )
        for r in self.recordings:
            parts = ", ".join(
                f"{cause} {counts['net']:+d}"
                for cause, counts in self.by_cause(r.recording).items()
                if counts["net"] or counts["regressions"]
            )
            suffix = f" ({parts})" if parts else ""
            lines.append(f"  {r.recording}: ΔWER {_points(r.delta_errors, r.ref_words)}{suffix}")
        if self.changes:
            lines.append(
                "every changed word (recording, time s, cause, regression/fix error: reference | baseline | arm):"
            )
            lines += [f"  {change.line()}" for change in self.changes]
        return "\n".join(lines)


def _points(errors: int, words: int) -> str:
    return f"{100 * errors / words:+.2f} pts" if words else "n/a"


def explain(evaluation: Evaluation, arm: str, against: str | None = None) -> Explanation:
    """ΔWER of ``arm`` against ``against`` (the run's reference arm, the baseline, by default), by cause."""
    base_name = against or evaluation.reference_arm
    for name in (arm, base_name):
        if name not in evaluation.scores:
            raise InputError(evaluation.folder.root, unknown_name("arm", name, list(evaluation.scores)))
    recordings = []
    for rid in evaluation.scores[arm]:
        arm_at = _primary(evaluation.scores[arm][rid])
        base_at = _primary(evaluation.scores[base_name][rid])
        reference = evaluation.references.get(rid)
        nonspeech = (
            merge([(i.start, i.end) for i in reference.speech if i.label == NONSPEECH])
            if reference
            else np.zeros((0, 2))
        )
        context = RecordingContext(
            SideRecord.of(evaluation.outputs.get((arm, rid)), _stages(evaluation, arm)),
            SideRecord.of(evaluation.outputs.get((base_name, rid)), _stages(evaluation, base_name)),
            nonspeech,
            evaluation.options.seam_margin_s,
        )
        turns = _turns(evaluation.scores[arm][rid].utterance_of_word, arm_at)
        found = word_changes(base_at, arm_at)
        changes = [_explained(rid, change, arm_at, base_at, context, turns) for change in found.changes]
        recording = RecordingExplanation(
            rid,
            len(arm_at.ref),
            errors(base_at),
            errors(arm_at),
            tuple(changes),
            tuple(np.bincount(turns).tolist()) if len(turns) else (),
            found.same_position,
        )
        if sum(c.delta for c in changes) != recording.delta_errors:  # by construction; checked, never assumed
            raise AssertionError(f"{rid}: the changes do not add up to the difference in errors")
        recordings.append(recording)
    return Explanation(arm, base_name, evaluation.folder.root.name, tuple(recordings))


def explain_arms(evaluation: Evaluation) -> dict[str, Explanation]:
    """Every arm compared with the baseline in ``evaluation``, explained against it, in the run's order."""
    return {arm: explain(evaluation, arm) for arm in evaluation.comparisons}


def _stages(evaluation: Evaluation, arm: str) -> list[str]:
    """The names of ``arm``'s stages, as its run recorded them."""
    record = evaluation.record.config.arm(arm)
    return [] if record is None else [component["stage"] for component in record["components"]]


def _turns(utterance_of_word: np.ndarray | None, at: AlignedTokens) -> np.ndarray:
    """Each reference token's turn, renumbered 0.. in order of appearance (one turn when none is known)."""
    if utterance_of_word is None or not len(at.ref):
        return np.zeros(len(at.ref), dtype=np.int64)
    _, turns = np.unique(utterance_of_word[at.ref.source], return_inverse=True)
    return turns.astype(np.int64)


def _primary(score: Any) -> AlignedTokens:
    return score.primary_aligned if score.primary_aligned is not None else score.aligned


def _explained(
    rid: str, change: Change, arm: AlignedTokens, base: AlignedTokens, context: RecordingContext, turns: np.ndarray
) -> ExplainedChange:
    erred = arm if change.erred == ARM else base
    span = located(change, erred)
    if change.error == "insertion":
        inserted = erred.hyp.words.quote([int(erred.hyp.source[change.hyp_token])])
        texts = ("", inserted, "") if change.kind == FIX else ("", "", inserted)
    else:
        i = change.ref_token
        texts = (arm.ref.words.quote([int(arm.ref.source[i])]), _written(base, i), _written(arm, i))
    return ExplainedChange(
        rid,
        change.kind,
        change.error,
        cause_of(change, arm, base, context),
        None if span is None else round(span[0], 3),
        None if span is None else round(span[1], 3),
        *texts,
        _turn_of(change, turns),
    )


def _turn_of(change: Change, turns: np.ndarray) -> int:
    """A reference word's turn; an insertion's is that of the reference word before it (else after it)."""
    if not len(turns):
        return 0
    if change.error != "insertion":
        return int(turns[change.ref_token])
    return int(turns[min(max(change.ref_token - 1, 0), len(turns) - 1)])


def _written(at: AlignedTokens, i: int) -> str:
    """What a system wrote at reference token ``i`` ("" when it deleted it)."""
    tokens = at.hyp_tokens_for(i, i)
    return at.hyp.words.quote(sorted({int(t) for t in at.hyp.source[tokens]})) if len(tokens) else ""
