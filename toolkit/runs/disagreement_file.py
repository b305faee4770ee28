"""Where an arm disagrees with the baseline on one recording, as its run folder stores it
(``disagreements/<arm>/<recording>.json``; the review queue's input).

Written by ``toolkit.pipeline.disagreement.write_disagreements`` through this record (the CSV beside it is
for people) and read back by ``RunFolder.read_disagreement_list``, strictly (toolkit.core.json_records).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.core.transcripts import Word


@dataclass(frozen=True)
class ListedDisagreement:
    """One span where the two sides differ: original-time bounds (None when unknown) and each side's words."""

    start: float | None
    end: float | None
    time_source: str | None  # "words", "neighbours" (timed from both timed neighbours) or None
    kind: str  # substitution, only_a, only_b or mixed
    text_a: str
    text_b: str
    words_a: tuple[Word, ...]
    words_b: tuple[Word, ...]


@dataclass(frozen=True)
class DisagreementListFile:
    """The spans where side ``label_b`` (the arm) disagrees with side ``label_a`` (the baseline)."""

    recording_id: str
    label_a: str
    label_b: str
    spans: tuple[ListedDisagreement, ...]
