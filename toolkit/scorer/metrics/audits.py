"""Critical-word audits: negations, names, numbers and short words.

Each audit has a denominator (reference occurrences) and an instance list for the review queue.
- Negation: a token is a negation when its text is in the negation lexicon and its source word
  is itself a negation word (so "né" -> "não é", a tag question, is not audited as a negation).
  A reference negation deleted or substituted (by anything, even another negation)
  is a flip; a hypothesis negation inserted, or substituted for a non-negation, is an insertion.
- Repetitions (false starts): the same negation, name or number said back to back in one turn
  ("não não", "Ana Ana", "dois dois") is a run. A member of a run deleted whole is "repetition
  dropped", reported apart and not an error, as long as another member of the run survives in
  some form; a run deleted entirely counts one error. For negations, a member replaced by a word
  that is no negation is lost like a deleted one (the turn keeps its polarity while another
  member is still a negation). Reference counts stay per occurrence.
- Names: an occurrence (longest names first, no overlaps) is an error unless every token is a
  hit and nothing was inserted inside it.
- Numbers: a reference number (one number group) is correct only when every token is a hit,
  nothing was inserted inside, and the aligned hypothesis tokens form exactly one whole
  hypothesis number of the same value ("2020" = "dois mil e vinte"; "... e vinte e um" is not).
- Short words: reference tokens with 1..max_letters letters (number words excluded).
- From ptbr-norm-3 on (``AuditRules``): a negation restart ("não há possibili- não pode") is a
  false start (``toolkit.scorer.metrics.restarts``); a negation opposite an undecidable colloquial
  "num"/"numa" is ambiguous, counted apart and never a flip or an insertion; a number said in the
  same words is right even where only the reference's context made it a number (a list label).
- Optional reference words ("(inciso)", sclite's convention) are in no audit: leaving them out is
  no error, so they are neither occurrences nor denominators.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.scorer.align import DELETE, EQUAL, INSERT, SUBSTITUTE
from toolkit.scorer.metrics.aligned import AlignedTokens, Instance
from toolkit.scorer.metrics.figures import SETTING, Figure, Figures
from toolkit.scorer.metrics.restarts import restarted
from toolkit.scorer.metrics.tokens import TokenTable
from toolkit.scorer.normalize.chars import fold_accents
from toolkit.scorer.normalize.colloquial import FORMS as COLLOQUIAL_FORMS
from toolkit.scorer.normalize.policy import NormalizationPolicy
from toolkit.scorer.normalize.same_word import word_key

_KIND = {DELETE: "deleted", SUBSTITUTE: "substituted"}


def _fold(word: str) -> str:
    """The same-word key with accents removed: how a source word is compared to the lexicon."""
    return fold_accents(word_key(word))


def negation_mask(tokens: TokenTable, negations: frozenset[str]) -> np.ndarray:
    """Per token: a negation token whose own source word is a negation word (never an optional one)."""
    folded = {_fold(n) for n in negations}
    words = tokens.words.texts
    mask = np.zeros(len(tokens), dtype=bool)
    candidates = [k for k, text in enumerate(tokens.texts) if text in negations]
    for k in candidates:  # a "num" the normalizer read as "não" is the colloquial negation
        source_word = _fold(words[tokens.source[k]])
        mask[k] = source_word in folded or source_word in COLLOQUIAL_FORMS
    return mask & ~tokens.optional


def negation_masks(at: AlignedTokens, negations: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
    """``negation_mask`` of the reference's and the hypothesis's tokens, computed once per alignment and lexicon
    (read only): the negation audit, the VAD figures and the critical marks all ask for them."""
    return at.memo(
        ("negations", negations),
        lambda: (_read_only(negation_mask(at.ref, negations)), _read_only(negation_mask(at.hyp, negations))),
    )


def _read_only(array: np.ndarray) -> np.ndarray:
    """``array``, no longer writable: a value computed once and shared."""
    array.flags.writeable = False
    return array


def _instances(items: Sequence[Instance]) -> list[dict[str, Any]]:
    return [i.to_json() for i in items]


REPETITION_DROPPED = "repetition dropped"
AMBIGUOUS = "ambiguous"


@dataclass(frozen=True)
class AuditRules:
    """Rules of the audits that came with a normalizer version (from its policy): negation restarts,
    and numbers said in identical words where only one side's context tagged them as numbers."""

    negation_restarts: bool = False
    identical_numbers: bool = False

    @classmethod
    def of(cls, policy: NormalizationPolicy) -> AuditRules:
        return cls(negation_restarts=bool(policy.negation_restarts), identical_numbers=bool(policy.list_labels))


def _counts(*keys: str) -> tuple[Figure, ...]:
    return tuple(Figure(key) for key in keys)


@dataclass(frozen=True)
class NegationAudit(Figures):
    """Reference negations flipped (deleted/substituted), repetitions dropped, negations inserted, and
    negations opposite an undecidable colloquial "num" (ambiguous: neither flipped nor inserted)."""

    FIGURES = _counts("ref_count", "flipped", "inserted", "repetition_dropped", "ambiguous")

    ref_count: int = 0
    flipped: int = 0
    inserted: int = 0
    repetition_dropped: int = 0
    ambiguous: int = 0
    instances: tuple[Instance, ...] = ()

    def json_extras(self) -> dict[str, Any]:
        return {"instances": _instances(self.instances)}


@dataclass(frozen=True)
class OccurrenceAudit(Figures):
    """Reference occurrences (names or numbers), how many were wrong, and repetitions dropped."""

    FIGURES = _counts("ref_count", "errors", "repetition_dropped")

    ref_count: int = 0
    errors: int = 0
    repetition_dropped: int = 0
    instances: tuple[Instance, ...] = ()

    def json_extras(self) -> dict[str, Any]:
        return {"instances": _instances(self.instances)}


def runs_of(spans: Sequence[tuple[int, int]], keys: Sequence[Any], turns: np.ndarray) -> list[list[int]]:
    """Indices of ``spans`` grouped into runs: the same key, nothing between, one turn."""
    runs: list[list[int]] = []
    for k, span in enumerate(spans):
        previous = runs[-1][-1] if runs else None
        if (
            previous is not None
            and span[0] == spans[previous][1] + 1
            and keys[k] == keys[previous]
            and turns[span[0]] == turns[spans[previous][0]]
        ):
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def dropped_repetitions(
    spans: Sequence[tuple[int, int]], keys: Sequence[Any], turns: np.ndarray, deleted: Sequence[bool]
) -> set[int]:
    """Indices of ``spans`` (sorted reference token spans) whose whole deletion is a dropped repetition.

    Spans with the same key that follow each other with nothing between, in one turn, form a
    run; a deleted member is dropped repetition when the run has a member not deleted, and all
    members but the first when the whole run was deleted (that loss counts once).
    """
    dropped: set[int] = set()
    for run in runs_of(spans, keys, turns):
        gone = [m for m in run if deleted[m]]
        dropped.update(gone[1:] if len(gone) == len(run) else gone)
    return dropped


def _wholly_deleted(at: AlignedTokens, first: int, last: int) -> bool:
    return bool((at.ref_op[first : last + 1] == DELETE).all()) and not at.insertions_inside(first, last)


@dataclass(frozen=True)
class ShortWordAudit(Figures):
    """Short reference words substituted or deleted."""

    FIGURES = (Figure("max_letters", column=None), *_counts("ref_count", "substituted", "deleted"))

    max_letters: int | None = field(default=None, metadata=SETTING)
    ref_count: int = 0
    substituted: int = 0
    deleted: int = 0
    instances: tuple[Instance, ...] = ()

    def json_extras(self) -> dict[str, Any]:
        return {"instances": _instances(self.instances)}


Span = tuple[int, int]


def negation_outcomes(
    at: AlignedTokens, negations: frozenset[str], turns: np.ndarray, rules: AuditRules = AuditRules()
) -> list[tuple[int, str | None]]:
    """Each reference negation's position and outcome: None (right), a repetition dropped, ambiguous
    (opposite an undecidable "num"), or the flip ("deleted"/"substituted"). One definition for the
    audit and the gates' per-occurrence comparison."""
    ref_neg, hyp_neg = negation_masks(at, negations)
    positions = np.flatnonzero(ref_neg).tolist()
    ambiguous = {i for i in positions if int(at.ref_op[i]) == SUBSTITUTE and at.hyp.undecided[int(at.ref_partner[i])]}
    # A negation is lost to the turn when deleted or replaced by a word that is no negation; the
    # polarity rule of a run (a member lost while another survives) treats both alike.
    lost = [
        int(at.ref_op[i]) == DELETE or (int(at.ref_op[i]) == SUBSTITUTE and not hyp_neg[int(at.ref_partner[i])])
        for i in positions
    ]
    spans, keys = [(i, i) for i in positions], [at.ref.texts[i] for i in positions]
    dropped = {positions[k] for k in dropped_repetitions(spans, keys, turns, lost)}
    if rules.negation_restarts:
        runs = [[positions[k] for k in run] for run in runs_of(spans, keys, turns)]
        dropped |= restarted(at, runs, {i for i, gone in zip(positions, lost) if gone}, turns)
    return [
        (
            i,
            None
            if at.ref_op[i] == EQUAL
            else AMBIGUOUS
            if i in ambiguous
            else REPETITION_DROPPED
            if i in dropped
            else _KIND[int(at.ref_op[i])],
        )
        for i in positions
    ]


def inserted_negations(at: AlignedTokens, negations: frozenset[str], ambiguous: bool = False) -> list[int]:
    """Hypothesis tokens that are negations inserted, or substituted for a reference word that is none;
    with ``ambiguous``, instead those substituted for an undecidable "num" (never counted as inserted)."""
    ref_neg, hyp_neg = negation_masks(at, negations)
    partner_neg = np.zeros(len(at.hyp), dtype=bool)
    partner_undecided = np.zeros(len(at.hyp), dtype=bool)
    paired = at.hyp_partner >= 0
    partner_neg[paired] = ref_neg[at.hyp_partner[paired]]
    partner_undecided[paired] = at.ref.undecided[at.hyp_partner[paired]]
    substituted = hyp_neg & (at.hyp_op == SUBSTITUTE) & ~partner_neg
    if ambiguous:
        return np.flatnonzero(substituted & partner_undecided).tolist()
    return np.flatnonzero((hyp_neg & (at.hyp_op == INSERT)) | (substituted & ~partner_undecided)).tolist()


def negation_audit(
    at: AlignedTokens, negations: frozenset[str], turns: np.ndarray, rules: AuditRules = AuditRules()
) -> NegationAudit:
    """Flips of reference negations, dropped repetitions, insertions of hypothesis negations, and the
    negations opposite an undecidable "num" (ambiguous, counted apart).

    ``turns`` gives each reference token's turn (utterance index).
    """
    outcomes = [(i, outcome) for i, outcome in negation_outcomes(at, negations, turns, rules) if outcome is not None]
    inserted = inserted_negations(at, negations)
    opposite = inserted_negations(at, negations, ambiguous=True)
    instances = at.ref_token_instances([outcome for _, outcome in outcomes], [i for i, _ in outcomes])
    instances += [at.hyp_instance("inserted", j) for j in inserted]
    instances += [at.hyp_instance(AMBIGUOUS, j) for j in opposite]
    dropped = sum(outcome == REPETITION_DROPPED for _, outcome in outcomes)
    ambiguous = sum(outcome == AMBIGUOUS for _, outcome in outcomes) + len(opposite)
    return NegationAudit(
        ref_count=int(negation_masks(at, negations)[0].sum()),
        flipped=sum(outcome not in (REPETITION_DROPPED, AMBIGUOUS) for _, outcome in outcomes),
        inserted=len(inserted),
        repetition_dropped=dropped,
        ambiguous=ambiguous,
        instances=tuple(sorted(instances, key=lambda x: (x.time is None, x.time or 0.0))),
    )


def find_occurrences(texts: Sequence[str], phrases: Iterable[Sequence[str]]) -> list[tuple[int, int]]:
    """Non-overlapping ``(first, last)`` token spans of ``phrases`` in ``texts``, longest phrases first."""
    ordered = sorted({tuple(p) for p in phrases if p}, key=len, reverse=True)
    if not ordered:  # no names: nothing to look for in thousands of tokens
        return []
    firsts = {phrase[0] for phrase in ordered}  # only the tokens a phrase can start at are listed
    positions: dict[str, list[int]] = {}
    for k, t in enumerate(texts):
        if t in firsts:
            positions.setdefault(t, []).append(k)
    taken = np.zeros(len(texts), dtype=bool)
    spans = []
    for phrase in ordered:
        width = len(phrase)
        for k in positions.get(phrase[0], []):
            if tuple(texts[k : k + width]) == phrase and not taken[k : k + width].any():
                taken[k : k + width] = True
                spans.append((k, k + width - 1))
    return sorted(spans)


def name_occurrences(at: AlignedTokens, names: Iterable[Sequence[str]]) -> list[tuple[int, int]]:
    """``find_occurrences`` of ``names`` in the reference's tokens, found once per alignment and names (the name
    audit and the critical marks both ask)."""
    phrases = tuple(tuple(name) for name in names)
    return at.memo(("names", phrases), lambda: find_occurrences(at.ref.texts, phrases))


def name_outcomes(
    at: AlignedTokens, names: Iterable[Sequence[str]], turns: np.ndarray
) -> list[tuple[Span, str | None]]:
    """Each reference name occurrence's token span and outcome: None (right), a repetition dropped, or "error"."""
    spans = [(a, b) for a, b in name_occurrences(at, names) if not at.ref.optional[a : b + 1].any()]
    dropped = dropped_repetitions(
        spans, [tuple(at.ref.texts[a : b + 1]) for a, b in spans], turns, [_wholly_deleted(at, a, b) for a, b in spans]
    )
    return [
        (
            (first, last),
            REPETITION_DROPPED
            if k in dropped
            else "error"
            if (at.ref_op[first : last + 1] != EQUAL).any() or at.insertions_inside(first, last)
            else None,
        )
        for k, (first, last) in enumerate(spans)
    ]


def name_audit(at: AlignedTokens, names: Iterable[Sequence[str]], turns: np.ndarray) -> OccurrenceAudit:
    """Exact errors per reference occurrence of a (normalized, possibly multi-token) name."""
    outcomes = name_outcomes(at, names, turns)
    wrong = [(span, outcome) for span, outcome in outcomes if outcome is not None]
    dropped = sum(outcome == REPETITION_DROPPED for _, outcome in wrong)
    return OccurrenceAudit(
        ref_count=len(outcomes),
        errors=len(wrong) - dropped,
        repetition_dropped=dropped,
        instances=tuple(at.ref_instance(outcome, a, b) for (a, b), outcome in wrong),
    )


def number_outcomes(
    at: AlignedTokens, turns: np.ndarray, rules: AuditRules = AuditRules()
) -> list[tuple[Span, str | None]]:
    """Each reference number's token span (one number group) and outcome: None (right), a repetition
    dropped, or "error" (a wrong value)."""
    groups = at.ref.number_group
    if not len(groups) or groups.max() < 0:
        return []
    hyp_groups = at.hyp.number_group
    hyp_sizes = np.bincount(hyp_groups[hyp_groups >= 0]) if (hyp_groups >= 0).any() else np.zeros(0, int)
    members = np.flatnonzero(groups >= 0)
    bounds = np.flatnonzero(np.diff(groups[members]) != 0) + 1
    spans = [(int(span[0]), int(span[-1])) for span in np.split(members, bounds)]
    spans = [(a, b) for a, b in spans if not at.ref.optional[a : b + 1].any()]
    if not spans:
        return []
    dropped = dropped_repetitions(
        spans, [at.ref.number_value[a] for a, _ in spans], turns, [_wholly_deleted(at, a, b) for a, b in spans]
    )
    return [
        (
            (first, last),
            REPETITION_DROPPED
            if k in dropped
            else None
            if _number_correct(at, first, last, hyp_sizes, rules.identical_numbers)
            else "error",
        )
        for k, (first, last) in enumerate(spans)
    ]


def number_audit(at: AlignedTokens, turns: np.ndarray, rules: AuditRules = AuditRules()) -> OccurrenceAudit:
    """Value errors per reference number (a number group of the reference tokens)."""
    outcomes = number_outcomes(at, turns, rules)
    hyp_groups = at.hyp.number_group
    instances = []
    for (first, last), outcome in outcomes:
        if outcome == REPETITION_DROPPED:
            instances.append(at.ref_instance(outcome, first, last))
        elif outcome is not None:  # a wrong value shows the whole hypothesis numbers it touched
            touched = np.setdiff1d(hyp_groups[at.hyp_tokens_for(first, last)], [-1])
            instances.append(at.ref_instance(outcome, first, last, np.flatnonzero(np.isin(hyp_groups, touched))))
    dropped = sum(outcome == REPETITION_DROPPED for _, outcome in outcomes)
    return OccurrenceAudit(
        ref_count=len(outcomes), errors=len(instances) - dropped, repetition_dropped=dropped, instances=tuple(instances)
    )


def _number_correct(at: AlignedTokens, first: int, last: int, hyp_sizes: np.ndarray, identical: bool) -> bool:
    """Every token matched, nothing inserted inside, and one whole hypothesis number of the same value;
    with ``identical``, also the same words the hypothesis's context did not tag ("inciso segundo"
    heard as a bare "segundo" is the same words, not a wrong value)."""
    if (at.ref_op[first : last + 1] != EQUAL).any() or at.insertions_inside(first, last):
        return False
    partners = at.ref_partner[first : last + 1]
    hyp_group = set(at.hyp.number_group[partners].tolist())
    if identical and hyp_group == {-1}:
        return True
    if len(hyp_group) != 1:
        return False
    group = hyp_group.pop()
    if group < 0:
        return False
    whole = hyp_sizes[group] == len(partners)
    return bool(whole and at.hyp.number_value[int(partners[0])] == at.ref.number_value[first])


def short_word_audit(at: AlignedTokens, max_letters: int) -> ShortWordAudit:
    """Substitutions and deletions of reference tokens with at most ``max_letters`` letters."""
    counts = {t: sum(map(str.isalpha, t)) for t in set(at.ref.texts)}
    letters = np.fromiter(map(counts.__getitem__, at.ref.texts), dtype=np.int64, count=len(at.ref))
    short = (letters >= 1) & (letters <= max_letters) & ~at.ref.is_number & ~at.ref.optional
    wrong = [(i, _KIND[int(at.ref_op[i])]) for i in np.flatnonzero(short & (at.ref_op != EQUAL)).tolist()]
    deleted = sum(kind == "deleted" for _, kind in wrong)
    return ShortWordAudit(
        max_letters=max_letters,
        ref_count=int(short.sum()),
        substituted=len(wrong) - deleted,
        deleted=deleted,
        instances=tuple(at.ref_token_instances([kind for _, kind in wrong], [i for i, _ in wrong])),
    )
