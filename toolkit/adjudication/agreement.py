"""How far independent listeners agree: blind transcriptions of one stretch compared, span decisions
compared, and the agreed transcription written from both.

**Transcriptions.** For each pair of listeners of a recording, their segments are grouped where
they overlap in time (one group = one stretch both listened to); the text of the listener who
transcribed it first is the reference and the other's text the hypothesis, scored with the
experiment's own normalizer (so "pra"/"para" or a capital letter is no disagreement). A stretch
is a *conflict* for a lead when any word differs or one listener confirmed non-speech where the
other heard speech. Inter-listener WER pools the pairs' counts (errors over the first
listeners' words), as the scorer pools recordings.

**Decisions.** Cohen's kappa on the first and second listeners' decisions of each span decided
by two (categories: keep, correct, unresolved, non-speech; a correction that changes nothing is
a keep), with its 95% interval, the observed agreement and the counts, and how many spans both
corrected with the same text. A span a third (or later) listener decided counts every listener:
Krippendorff's alpha (nominal) over every listener's latest decision of every span decided by two
or more, with a 95% interval from resampling spans, and each named pair of listeners' agreement
on the spans both decided.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from toolkit.adjudication.blind import Segment, Settlement, TranscriptStore
from toolkit.adjudication.store import ACTIONS, CORRECT, SpanState
from toolkit.core.errors import InputError
from toolkit.core.transcripts import NONSPEECH, SPEECH, Hypothesis, Interval, Reference, Utterance, Word
from toolkit.formats import write_reference_textgrid
from toolkit.scorer.options import ScoreOptions

AGREED_FOLDER = "_agreed"  # beside each listener's folder; no listener's name gives a folder starting with "_"


@dataclass(frozen=True)
class StretchComparison:
    """Two listeners' transcriptions of the stretch they both listened to."""

    recording_id: str
    start: float
    end: float
    first: str  # the listener who transcribed it first: the reference side
    second: str
    first_text: str
    second_text: str
    first_speech: str  # speech / nonspeech / "" (not said)
    second_speech: str
    errors: int
    ref_words: int
    settlement: Settlement | None = None

    @property
    def wer(self) -> float | None:
        """Errors over the first listener's words (None when the first heard no words)."""
        return self.errors / self.ref_words if self.ref_words else (0.0 if not self.errors else None)

    @property
    def disagree(self) -> bool:
        nonspeech = {self.first_speech == NONSPEECH, self.second_speech == NONSPEECH}
        return self.errors > 0 or len(nonspeech) > 1

    @property
    def conflict(self) -> bool:
        """They disagree and no lead has settled the stretch since."""
        return self.disagree and self.settlement is None


@dataclass(frozen=True)
class TranscriptionAgreement:
    comparisons: list[StretchComparison]

    @property
    def errors(self) -> int:
        return sum(c.errors for c in self.comparisons)

    @property
    def ref_words(self) -> int:
        return sum(c.ref_words for c in self.comparisons)

    @property
    def wer(self) -> float | None:
        return self.errors / self.ref_words if self.ref_words else None

    @property
    def conflicts(self) -> list[StretchComparison]:
        return [c for c in self.comparisons if c.conflict]


ALPHA_RESAMPLES = 1000  # spans resampled for alpha's interval (seed 0, so a page shows the same interval twice)


@dataclass(frozen=True)
class ListenerPair:
    """Two named listeners (in alphabetical order) on the spans both decided."""

    first: str
    second: str
    spans: int
    agreed: int

    @property
    def observed(self) -> float:
        return self.agreed / self.spans


@dataclass(frozen=True)
class DecisionAgreement:
    """Cohen's kappa between first and second listeners' span decisions; Krippendorff's alpha and named
    pairs over every listener."""

    pairs: int
    agreed: int
    kappa: float | None  # None: too few pairs, or every decision in one category (kappa undefined)
    kappa_low: float | None
    kappa_high: float | None
    table: dict[str, dict[str, int]]  # first listener's decision -> second's -> count
    both_corrected: int
    same_correction: int
    more_listeners: int = 0  # spans decided by three or more listeners (kappa sees their first two only)
    alpha: float | None = None  # None: under two spans, or every decision in one category (alpha undefined)
    alpha_low: float | None = None
    alpha_high: float | None = None
    listener_pairs: tuple[ListenerPair, ...] = ()

    @property
    def observed(self) -> float | None:
        return self.agreed / self.pairs if self.pairs else None


def _effective_speech(segments: list[Segment]) -> str:
    labels = {SPEECH if s.text else s.speech for s in segments} - {""}
    return NONSPEECH if labels == {NONSPEECH} else (SPEECH if SPEECH in labels else "")


def _text(segments: list[Segment]) -> str:
    return " ".join(s.text for s in sorted(segments, key=lambda s: s.start) if s.text)


def _groups(first: list[Segment], second: list[Segment]) -> list[tuple[list[Segment], list[Segment]]]:
    """Both listeners' segments grouped where they overlap in time (only groups both are in)."""
    tagged = sorted([(s, 0) for s in first] + [(s, 1) for s in second], key=lambda t: (t[0].start, t[0].end))
    groups: list[list[tuple[Segment, int]]] = []
    reach = -math.inf
    for segment, side in tagged:
        if groups and segment.start < reach:
            groups[-1].append((segment, side))
            reach = max(reach, segment.end)
        else:
            groups.append([(segment, side)])
            reach = segment.end
    return [
        ([s for s, side in g if side == 0], [s for s, side in g if side == 1])
        for g in groups
        if {side for _, side in g} == {0, 1}
    ]


def count_errors(first: str, second: str, options: ScoreOptions) -> tuple[int, int]:
    """(errors, reference words) of ``second`` against ``first`` under the experiment's primary policy."""
    from toolkit.scorer.score import score_recording

    utterances = [Utterance(0.0, 1.0, first)] if first.strip() else []
    words = [Word(w) for w in second.split()]
    counts = score_recording(Reference("", utterances), Hypothesis("", words), options).counts
    return counts.errors, counts.ref_words


def compare_recording(store: TranscriptStore, recording_id: str, options: ScoreOptions) -> list[StretchComparison]:
    """Every pair of listeners' comparison on every stretch both transcribed, in time order."""
    listeners = store.annotators(recording_id)
    settlements = store.settlements(recording_id)
    segments = {name: store.segments(recording_id, name) for name in listeners}
    comparisons = []
    for a, b in combinations(listeners, 2):
        for mine, theirs in _groups(segments[a], segments[b]):
            first_side, second_side = (mine, theirs)
            if min(s.id for s in theirs) < min(s.id for s in mine):
                first_side, second_side = theirs, mine
            first_name, second_name = first_side[0].annotator, second_side[0].annotator
            start = min(s.start for s in mine + theirs)
            end = max(s.end for s in mine + theirs)
            errors, ref_words = count_errors(_text(first_side), _text(second_side), options)
            settled = next(
                (
                    t
                    for t in reversed(settlements)
                    if t.start <= start + 1e-6 and t.end >= end - 1e-6 and t.created_at >= _created(mine + theirs)
                ),
                None,
            )
            comparisons.append(
                StretchComparison(
                    recording_id,
                    start,
                    end,
                    first_name,
                    second_name,
                    _text(first_side),
                    _text(second_side),
                    _effective_speech(first_side),
                    _effective_speech(second_side),
                    errors,
                    ref_words,
                    settled,
                )
            )
    return sorted(comparisons, key=lambda c: (c.start, c.end, c.first, c.second))


def _created(segments: Iterable[Segment]) -> str:
    return max(s.created_at for s in segments)


def transcription_agreement(
    store: TranscriptStore, recording_ids: Iterable[str], options: ScoreOptions
) -> TranscriptionAgreement:
    return TranscriptionAgreement([c for rid in recording_ids for c in compare_recording(store, rid, options)])


def decision_agreement(states: Iterable[SpanState]) -> DecisionAgreement:
    """Kappa over spans with a first and a second listener (each one's latest decision)."""
    pairs = [(s.listeners[0], s.listeners[1]) for s in states if len(s.listeners) >= 2]
    table = {a: dict.fromkeys(ACTIONS, 0) for a in ACTIONS}
    for first, second in pairs:
        table[first.outcome[0]][second.outcome[0]] += 1
    matrix = np.array([[table[a][b] for b in ACTIONS] for a in ACTIONS], dtype=float)
    agreed = int(np.trace(matrix))
    both = [(f, s) for f, s in pairs if f.outcome[0] == CORRECT and s.outcome[0] == CORRECT]
    kappa = low = high = None
    expected = (matrix.sum(axis=1) @ matrix.sum(axis=0)) / len(pairs) ** 2 if pairs else 1.0
    if len(pairs) >= 2 and expected < 1.0:
        from statsmodels.stats.inter_rater import cohens_kappa

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            result = cohens_kappa(matrix)
        kappa = float(result.kappa)
        low, high = max(-1.0, float(result.kappa_low)), min(1.0, float(result.kappa_upp))
    shared = [s for s in states if len(s.listeners) >= 2]
    alpha, alpha_low, alpha_high = _alpha(shared)
    return DecisionAgreement(
        len(pairs),
        agreed,
        kappa,
        low,
        high,
        table,
        len(both),
        sum(1 for f, s in both if f.outcome == s.outcome),
        sum(1 for s in shared if len(s.listeners) > 2),
        alpha,
        alpha_low,
        alpha_high,
        _listener_pairs(shared),
    )


def _alpha(shared: list[SpanState]) -> tuple[float | None, float | None, float | None]:
    """Krippendorff's nominal alpha over every listener's decision of the ``shared`` spans, and its 95%
    interval from resampling spans (None where alpha is undefined)."""
    import krippendorff

    if len(shared) < 2:
        return None, None, None
    # Per span, how many of its listeners chose each category: the library's value counts.
    counts = np.array([[sum(d.outcome[0] == action for d in span.listeners) for action in ACTIONS] for span in shared])

    def alpha_of(spans: np.ndarray) -> float | None:
        chosen = counts[spans]
        if np.count_nonzero(chosen.sum(axis=0)) < 2:
            return None
        return float(krippendorff.alpha(value_counts=chosen, level_of_measurement="nominal"))

    alpha = alpha_of(np.arange(len(shared)))
    if alpha is None:
        return None, None, None
    rng = np.random.default_rng(0)
    draws = [alpha_of(rng.integers(0, len(shared), len(shared))) for _ in range(ALPHA_RESAMPLES)]
    defined = [a for a in draws if a is not None]
    low, high = np.percentile(defined, [2.5, 97.5]) if defined else (alpha, alpha)
    return alpha, float(low), float(high)


def _listener_pairs(shared: list[SpanState]) -> tuple[ListenerPair, ...]:
    """Each named pair of listeners: the spans both decided and how many of them alike."""
    counts: dict[tuple[str, str], list[int]] = {}
    for span in shared:
        latest = {d.annotator: d.outcome[0] for d in span.listeners}
        for a, b in combinations(sorted(latest), 2):
            tally = counts.setdefault((a, b), [0, 0])
            tally[0] += 1
            tally[1] += latest[a] == latest[b]
    return tuple(ListenerPair(a, b, spans, agreed) for (a, b), (spans, agreed) in sorted(counts.items()))


@dataclass(frozen=True)
class Agreed:
    """The agreed transcription of a recording and the stretches still waiting for a lead."""

    reference: Reference
    open_conflicts: list[StretchComparison]


def agreed_reference(store: TranscriptStore, recording_id: str, options: ScoreOptions) -> Agreed:
    """Each stretch as its listeners agree (the first listener's turns, with their boundary words and
    unresolved marks), as a lead settled it, or as its only listener has it; stretches in open
    conflict are listed and left out."""
    comparisons = compare_recording(store, recording_id, options)
    conflicts = [c for c in comparisons if c.conflict]
    settled = [c for c in comparisons if c.settlement is not None]
    taken = [(c.start, c.end) for c in conflicts + settled]  # nobody's own turns stand here
    seconds = [(c.second, c.start, c.end) for c in comparisons]
    utterances: list[Utterance] = []
    words: list[Word] = []
    speech: list[Interval] = []
    unresolved: list[Interval] = []
    for listener in store.annotators(recording_id):
        mine = store.reference(recording_id, listener)
        stands = [
            (turn.start, turn.end)
            for turn in mine.utterances
            if not _inside_any(turn.start, turn.end, taken)
            and not any(name == listener and s <= turn.start and turn.end <= e for name, s, e in seconds)
        ]
        stands += [
            (i.start, i.end)
            for i in mine.speech
            if i.label == NONSPEECH
            and not _inside_any(i.start, i.end, taken)
            and not any(name == listener and s <= i.start and i.end <= e for name, s, e in seconds)
        ]
        utterances += [u for u in mine.utterances if (u.start, u.end) in stands]
        words += [w for w in mine.words if _inside_any(w.start, w.end, stands)]  # type: ignore[arg-type]
        speech += [i for i in mine.speech if _inside_any(i.start, i.end, stands)]
        unresolved += [i for i in mine.unresolved if _inside_any(i.start, i.end, stands)]
    for comparison in settled:
        settlement = comparison.settlement
        assert settlement is not None
        if settlement.text:
            utterances.append(Utterance(settlement.start, settlement.end, settlement.text, settlement.speaker))
        if settlement.speech or settlement.text:
            speech.append(Interval(settlement.start, settlement.end, settlement.speech or SPEECH))
    reference = Reference(
        recording_id,
        _distinct(utterances),
        sorted(words, key=lambda w: (w.start, w.end)),
        _distinct(speech),
        _distinct(unresolved),
    )
    return Agreed(reference, conflicts)


def _inside_any(start: float, end: float, spans: list[tuple[float, float]]) -> bool:
    return any(lo - 1e-6 <= start and end <= hi + 1e-6 for lo, hi in spans)


def _distinct(intervals: list) -> list:  # Interval or Utterance
    """Intervals without repeats or overlaps within one speaker (the earliest kept), in time order."""
    kept: list = []
    reach: dict[str, float] = {}
    for interval in sorted(intervals, key=lambda i: (i.start, i.end)):
        speaker = getattr(interval, "speaker", "")
        if interval.start >= reach.get(speaker, -math.inf):
            kept.append(interval)
            reach[speaker] = interval.end
    return kept


def write_agreed(store: TranscriptStore, recording_id: str, duration: float, options: ScoreOptions) -> Agreed:
    """Write ``transcriptions/_agreed/<recording>.TextGrid`` (refused while a stretch is in open conflict)."""
    agreed = agreed_reference(store, recording_id, options)
    if agreed.open_conflicts:
        listing = "; ".join(f"{c.start:g}-{c.end:g} s ({c.first} / {c.second})" for c in agreed.open_conflicts[:5])
        raise InputError(
            None,
            f"{recording_id}: {len(agreed.open_conflicts)} stretch(es) where listeners disagree wait for a lead: "
            f"{listing}",
        )
    write_reference_textgrid(agreed.reference, store.folder / AGREED_FOLDER / f"{recording_id}.TextGrid", duration)
    return agreed
