"""The review queue: every span of a run folder that needs a listener, ranked.

Sources, all files a run already wrote (nothing is recomputed):

- ``scores/<arm>/<rec>.json``: negation, name and number audit instances (``critical``), seam
  omissions, duplications and split words (``seam``) and words in confirmed non-speech (``nonspeech_text``);
- ``scores/explain/<arm>.json``: every word an arm got wrong that the baseline got right, or inserted
  where the baseline did not, with its cause (``regression``; the cause is the detail);
- ``disagreements/<arm>/<rec>.json``: where an arm disagrees with the baseline (``disagreement``);
- ``outputs/<arm>/<rec>.json``: disagreements between an arm's two recognizers
  (``disagreement``) and seams flagged for review (``seam``);
- the reference's ``unresolved`` intervals (``unresolved``).

Rank: kind in :data:`KINDS` order, then (for critical words) negation, name, number, then
recording and time. Items of one kind and detail whose spans overlap in a recording are merged
into one span listing every arm that produced them, so a listener decides each place once.
An instance known only by its onset is given :data:`ONSET_ONLY_SPAN_S` seconds for listening.
A missing or unreadable file is reported in ``problems``, never fatal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from toolkit.core.errors import InputError
from toolkit.core.json_records import Absent
from toolkit.core.transcripts import Reference
from toolkit.runs.folder import RunFolder
from toolkit.runs.score_files import REGRESSION as REGRESSED

CRITICAL, REGRESSION, DISAGREEMENT, SEAM, NONSPEECH_TEXT, UNRESOLVED = (
    "critical",
    "regression",
    "disagreement",
    "seam",
    "nonspeech_text",
    "unresolved",
)
KINDS = (CRITICAL, REGRESSION, DISAGREEMENT, SEAM, NONSPEECH_TEXT, UNRESOLVED)
KIND_LABELS = {
    CRITICAL: "critical word",
    REGRESSION: "regression against the baseline",
    DISAGREEMENT: "disagreement",
    SEAM: "seam problem",
    NONSPEECH_TEXT: "text in non-speech",
    UNRESOLVED: "unresolved audio",
}
CRITICAL_DETAILS = ("negation", "name", "number")
ONSET_ONLY_SPAN_S = 1.0
Read = TypeVar("Read")


@dataclass(frozen=True)
class QueueItem:
    """One span to listen to; ``hypotheses`` pairs a label (arm or recognizer) with what it says there."""

    kind: str
    detail: str
    recording_id: str
    start: float | None
    end: float | None
    arms: tuple[str, ...] = ()
    reference: str = ""
    hypotheses: tuple[tuple[str, str], ...] = ()

    @property
    def timed(self) -> bool:
        return self.start is not None and self.end is not None and self.end > self.start

    @property
    def rank(self) -> tuple[Any, ...]:
        detail = CRITICAL_DETAILS.index(self.detail) if self.detail in CRITICAL_DETAILS else len(CRITICAL_DETAILS)
        return (
            KINDS.index(self.kind),
            detail,
            self.recording_id,
            self.start is None,
            self.start or 0.0,
            self.end or 0.0,
        )

    @property
    def key(self) -> str:
        """Stable name of the item, used as the decision's ``source``."""
        where = "untimed" if not self.timed else f"{self.start:.3f}-{self.end:.3f}"
        return f"{self.kind}:{self.detail}:{self.recording_id}:{where}"


@dataclass
class ReviewQueue:
    items: list[QueueItem]
    problems: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Items per kind, every kind listed (zero included), in rank order."""
        found = Counter(item.kind for item in self.items)
        return {kind: found.get(kind, 0) for kind in KINDS}

    def filtered(
        self, recordings: Iterable[str] = (), arms: Iterable[str] = (), kinds: Iterable[str] = ()
    ) -> list[QueueItem]:
        """Items matching every non-empty filter (an item matches an arm filter if any of its arms is named)."""
        recordings, arms, kinds = set(recordings), set(arms), set(kinds)
        return [
            item
            for item in self.items
            if (not recordings or item.recording_id in recordings)
            and (not kinds or item.kind in kinds)
            and (not arms or arms & set(item.arms))
        ]


def build_queue(folder: RunFolder, references: Mapping[str, Reference] | None = None) -> ReviewQueue:
    """The ranked queue of one run folder (``references`` adds each recording's unresolved intervals)."""
    problems: list[str] = []
    try:
        record = folder.read_record()
    except InputError as error:
        return ReviewQueue([], [str(error)])
    recordings, arms = list(record.recordings), record.config.arm_names
    compared = [arm for arm in arms if arm != record.config.reference_arm]
    raw: list[QueueItem] = [item for arm in compared for item in _from_explanation(folder, arm, problems)]
    for recording in recordings:
        for arm in arms:
            raw.extend(_from_scores(folder, arm, recording, problems))
            raw.extend(_from_output(folder, arm, recording, problems))
            if arm != arms[0]:
                raw.extend(_from_disagreements(folder, arm, recording, problems))
        reference = (references or {}).get(recording)
        if reference is not None:
            raw.extend(
                QueueItem(UNRESOLVED, "unresolved", recording, i.start, i.end, (), i.label)
                for i in reference.unresolved
            )
    return ReviewQueue(sorted(_merge(raw), key=lambda item: item.rank), problems)


def _read_run_file(path: Path, read: Callable[[], Read], problems: list[str], required: bool) -> Read | None:
    """A run folder's file through its record's reader; missing (when ``required``) or damaged: one line in
    ``problems``."""
    if not path.is_file():
        if required:
            problems.append(f"{path}: missing")
        return None
    try:
        return read()
    except InputError as error:
        problems.append(str(error))
        return None


def _span(start: Any, end: Any) -> tuple[float | None, float | None]:
    if start is None:
        return None, None
    start = float(start)
    end = float(end) if end is not None and float(end) > start else start + ONSET_ONLY_SPAN_S
    return start, end


def _from_scores(folder: RunFolder, arm: str, recording: str, problems: list[str]) -> list[QueueItem]:
    """Critical-word, seam and non-speech instances of one scored arm (absent until the run is scored)."""
    path = folder.recording_score(arm, recording)
    score = _read_run_file(path, lambda: folder.read_recording_score(arm, recording), problems, folder.scores.is_dir())
    if score is None:
        return []
    items = []
    audits = score.audits
    for detail, audit in (("negation", audits.negation), ("name", audits.names), ("number", audits.numbers)):
        items += [
            QueueItem(
                CRITICAL,
                detail,
                recording,
                *_span(instance.time, instance.end),
                (arm,),
                instance.reference,
                ((arm, f"{instance.hypothesis} ({instance.kind})"),),
            )
            for instance in audit.instances
        ]
    seams = () if isinstance(score.seams, Absent) else score.seams.instances
    items += [
        QueueItem(
            SEAM,
            instance.kind.removeprefix("seam "),
            recording,
            *_span(instance.time, instance.end),
            (arm,),
            instance.reference,
            ((arm, instance.hypothesis),),
        )
        for instance in seams
    ]
    items += [
        QueueItem(
            NONSPEECH_TEXT,
            "words in non-speech",
            recording,
            *_span(instance.start, instance.end),
            (arm,),
            "",
            ((arm, instance.text),),
        )
        for instance in score.nonspeech.instances
    ]
    return items


def _from_output(folder: RunFolder, arm: str, recording: str, problems: list[str]) -> list[QueueItem]:
    """Recognizer disagreements and flagged seams from one arm's full output."""
    path = folder.arm_output(arm, recording)
    output = _read_run_file(path, lambda: folder.read_arm_output(arm, recording), problems, True)
    if output is None:
        return []
    items = []
    for span in output.disagreements:
        labels = [key for key in span if key not in ("start", "end", "kept") and not key.endswith("_confidence")]
        items.append(
            QueueItem(
                DISAGREEMENT,
                "recognizers",
                recording,
                *_span(span.get("start"), span.get("end")),
                (arm,),
                "",
                tuple((f"{arm}: {label}", str(span[label])) for label in labels),
            )
        )
    for seam in output.seams:
        if seam.get("review"):
            flags = ", ".join(sorted({flag.get("kind", "") for flag in seam.get("flags", [])})) or "flagged"
            items.append(
                QueueItem(
                    SEAM,
                    f"flagged seam ({flags})",
                    recording,
                    *_span(seam["start"], seam["end"]),
                    (arm,),
                    "",
                    ((arm, " ".join(w["text"] for w in seam.get("kept_left", []) + seam.get("kept_right", []))),),
                )
            )
    return items


def _from_explanation(folder: RunFolder, arm: str, problems: list[str]) -> list[QueueItem]:
    """The arm's regressions against the baseline, each under its cause (absent until the run is scored)."""
    path = folder.explanation(arm)
    explanation = _read_run_file(path, lambda: folder.read_explanation(arm), problems, folder.scores.is_dir())
    if explanation is None:
        return []
    return [
        QueueItem(
            REGRESSION,
            change.cause,
            change.recording,
            *_span(change.time, change.end),
            (arm,),
            change.reference,
            ((explanation.against, change.baseline), (arm, f"{change.arm} ({change.error})")),
        )
        for change in explanation.instances
        if change.kind == REGRESSED
    ]


def _from_disagreements(folder: RunFolder, arm: str, recording: str, problems: list[str]) -> list[QueueItem]:
    """Where ``arm`` disagrees with the baseline."""
    path = folder.disagreements(arm, recording)
    listing = _read_run_file(path, lambda: folder.read_disagreement_list(arm, recording), problems, True)
    if listing is None:
        return []
    base = listing.label_a
    return [
        QueueItem(
            DISAGREEMENT,
            "arms",
            recording,
            *_span(span.start, span.end),
            (base, arm),
            "",
            ((base, span.text_a), (arm, span.text_b)),
        )
        for span in listing.spans
    ]


def _merge(items: list[QueueItem]) -> list[QueueItem]:
    """Merge items of one kind, detail and recording whose spans overlap; untimed items stay apart."""
    groups: dict[tuple[str, str, str], list[QueueItem]] = {}
    merged: list[QueueItem] = []
    for item in items:
        if item.timed:
            groups.setdefault((item.kind, item.detail, item.recording_id), []).append(item)
        else:
            merged.append(item)
    for group in groups.values():
        group.sort(key=lambda item: (item.start, item.end))
        current = group[0]
        for item in group[1:]:
            if item.start < current.end:  # type: ignore[operator]
                current = replace(
                    current,
                    end=max(current.end, item.end),  # type: ignore[type-var]
                    arms=_union(current.arms, item.arms),
                    reference=current.reference
                    if item.reference in current.reference
                    else f"{current.reference} | {item.reference}".strip(" |"),
                    hypotheses=_union(current.hypotheses, item.hypotheses),
                )
            else:
                merged.append(current)
                current = item
        merged.append(current)
    return merged


def _union(first: tuple, second: tuple) -> tuple:
    return first + tuple(value for value in second if value not in first)
