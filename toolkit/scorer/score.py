"""Score one recording: every metric of the scorer against one reference.

Reference words are the whitespace-separated words of the utterances' verbatim text; their
times come from the reference's (possibly partial) timed-word tier, matched to the words of the
utterance they fall in, in order by text (case and punctuation ignored; a longest common
subsequence, so no word is paired with a different one). Unmatched words have no time of their
own and use their utterance's span only where a span is needed (time-constrained alignment,
instance times); timing metrics use word times only.

Unresolved spans: a reference utterance at least half inside them is excluded whole, any other
timed reference word or timed hypothesis word whose midpoint lies inside them is excluded
(untimed hypothesis words cannot be placed and stay); the merged unresolved duration is
reported. An empty or missing hypothesis scores as all deletions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz.distance import Indel

from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Reference
from toolkit.scorer.align import Alignment, align_timed
from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.audits import (
    AuditRules,
    name_audit,
    negation_audit,
    negation_masks,
    number_audit,
    short_word_audit,
)
from toolkit.scorer.metrics.intervals import contains, merge, overlap, subtract, total
from toolkit.scorer.metrics.nonspeech import nonspeech_score
from toolkit.scorer.metrics.optional import optional_words
from toolkit.scorer.metrics.seam_errors import seam_score
from toolkit.scorer.metrics.timing import timing_score
from toolkit.scorer.metrics.tokens import SourceWords, TokenTable, fold_table, tokenize
from toolkit.scorer.metrics.vad import VadScore, vad_score
from toolkit.scorer.metrics.wer import ErrorCounts, error_counts
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
from toolkit.scorer.normalize.registry import POLICIES, normalizer
from toolkit.scorer.normalize.same_word import word_key
from toolkit.scorer.optional_align import align_reference
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.paired_labels import label_words, paired_labels
from toolkit.scorer.signature import scorer_signature

if TYPE_CHECKING:  # pandas is imported by the table functions only, so scoring one pair stays quick
    pass

from toolkit.scorer.results import Exclusions, RecordingScore

# The accent-folded tables are folded copies of the normalized ones when the presets allow it.
FOLD_FROM_NORMALIZED = NormalizationPolicy.accent_folded() == replace(
    NormalizationPolicy.normalized(), accent_fold=True
)


def _reference_words(reference: Reference) -> tuple[SourceWords, np.ndarray, int]:
    """Utterance words with times from the timed-word tier; returns words, utterance index, unplaced count.

    A turn's start is its first word's onset and its end its last word's offset, so untimed
    boundary words take those times (an onset alone still counts for onset error).
    """
    # Word.timed, spelled out: a property call per word costs more than the test.
    timed = sorted(
        (w for w in reference.words if w.start is not None and w.end is not None), key=attrgetter("start", "end")
    )
    t_start = np.array([w.start for w in timed], dtype=np.float64)
    t_end = np.array([w.end for w in timed], dtype=np.float64)
    turns = reference.utterances
    known = np.array([math.isfinite(u.start) and math.isfinite(u.end) for u in turns], dtype=bool)
    bounds = np.array([(u.start, u.end) for u in turns], dtype=np.float64).reshape(-1, 2)
    words = [u.text.split() for u in turns]
    counts = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    texts = [word for turn in words for word in turn]
    placed = np.full(len(texts), -1, dtype=np.int64)
    if timed:
        # The timed words whose midpoints fall in each utterance's span: [lo, hi) per utterance, in one search.
        mids = (t_start + t_end) / 2
        los = np.searchsorted(mids, bounds[:, 0] - 1e-6, side="left")
        his = np.searchsorted(mids, bounds[:, 1] + 1e-6, side="right")
        tier = _Tier([word_key(w.text) for w in timed], los, his, known & (counts > 0), counts)
        word_keys = list(map(word_key, texts))
        disjoint = tier.disjoint(word_keys)
        placed = disjoint if disjoint is not None else tier.matched(word_keys)
    utt = np.repeat(np.arange(len(turns), dtype=np.int64), counts)
    start, end, span_s, span_e = _word_times(placed, (t_start, t_end), counts, bounds, known, utt)
    return SourceWords(texts, start, end, span_s, span_e), utt, len(timed) - int(np.count_nonzero(placed >= 0))


@dataclass(frozen=True)
class _Tier:
    """The timed-word tier's keys in time order, and per utterance the tier's words whose midpoints fall in its span
    (``[los, his)``), whether it is matched (a timed span and words) and its word count."""

    keys: list[str]
    los: np.ndarray
    his: np.ndarray
    active: np.ndarray
    counts: np.ndarray

    @property
    def firsts(self) -> np.ndarray:
        """Each utterance's first word's index among all utterance words."""
        return np.cumsum(self.counts) - self.counts

    def matched(self, word_keys: list[str]) -> np.ndarray:
        """Each utterance word's timed word (-1: none): per matched utterance in turn, its timed words not taken by
        an earlier one paired with its words in order by key (:func:`_pairs`)."""
        keys, los, his, firsts = self.keys, self.los.tolist(), self.his.tolist(), self.firsts.tolist()
        placed = [-1] * len(word_keys)
        used = [False] * len(keys)
        for u in np.flatnonzero(self.active).tolist():
            first = firsts[u]
            cand = [k for k in range(los[u], his[u]) if not used[k]]
            for a, k in _pairs(word_keys[first : first + int(self.counts[u])], cand, [keys[k] for k in cand]):
                used[k] = True
                placed[first + a] = k
        return np.asarray(placed, dtype=np.int64)

    def disjoint(self, word_keys: list[str]) -> np.ndarray | None:
        """:meth:`matched` when the matched utterances' spans follow each other without overlapping (none can take
        another's timed words, so each is matched on its own): an utterance whose span holds its words, word for
        word, is placed at once and only the others are paired one by one; else None."""
        active = np.flatnonzero(self.active)
        los, his = self.los[active], self.his[active]
        if not (bool(np.all(los <= his)) and bool(np.all(los[1:] >= his[:-1]))):
            return None
        even = self.active & (self.his - self.los == self.counts)
        member = np.repeat(even, self.counts)
        placed = np.where(member, np.arange(len(word_keys)) + np.repeat(self.los - self.firsts, self.counts), -1)
        keys, words = self.keys, np.flatnonzero(member).tolist()
        differ = [g for g, k in zip(words, placed[member].tolist()) if keys[k] != word_keys[g]]
        odd = self.active & ~even
        odd[np.repeat(np.arange(len(self.counts)), self.counts)[differ]] = True
        for u in np.flatnonzero(odd).tolist():
            first, lo, hi = int(self.firsts[u]), int(self.los[u]), int(self.his[u])
            placed[first : first + int(self.counts[u])] = -1
            for a, k in _pairs(word_keys[first : first + int(self.counts[u])], range(lo, hi), keys[lo:hi]):
                placed[first + a] = k
        return placed


def _pairs(words: list[str], cand: Sequence[int], cand_keys: list[str]) -> list[tuple[int, int]]:
    """An utterance's word keys paired with its candidate timed words' (``cand``, keys ``cand_keys``) in order: a
    longest common subsequence, so no word is paired with a different one."""
    if words == cand_keys:  # a complete word tier: one timed word per utterance word
        return list(enumerate(cand))
    return [
        (a, cand[b])
        for block in Indel.opcodes(words, cand_keys)
        if block.tag == "equal"
        for a, b in zip(range(block.src_start, block.src_end), range(block.dest_start, block.dest_end))
    ]


def _word_times(
    placed: np.ndarray,
    tier: tuple[np.ndarray, np.ndarray],
    counts: np.ndarray,
    bounds: np.ndarray,
    known: np.ndarray,
    utt: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each utterance word's start and end (its timed word's, NaN if none) and its span's (its own, else its
    utterance's, by ``utt``); a timed utterance's untimed first word starts and untimed last word ends with it
    (turn edges are boundary-word times: transcription convention sections 1, 10)."""
    hit = placed >= 0
    start = np.full(len(placed), math.nan)
    end = np.full(len(placed), math.nan)
    start[hit], end[hit] = tier[0][placed[hit]], tier[1][placed[hit]]
    edged = known & (counts > 0)
    lasts = np.cumsum(counts) - 1
    firsts, lasts = (lasts - counts + 1)[edged], lasts[edged]
    start[firsts] = np.where(np.isnan(start[firsts]), bounds[edged, 0], start[firsts])
    end[lasts] = np.where(np.isnan(end[lasts]), bounds[edged, 1], end[lasts])
    turn_s, turn_e = (np.where(known, bounds[:, side], math.nan)[utt] for side in (0, 1))
    return start, end, np.where(np.isnan(start), turn_s, start), np.where(np.isnan(end), turn_e, end)


def _hypothesis_words(hypothesis: Hypothesis | None) -> SourceWords:
    words = hypothesis.words if hypothesis is not None else []
    start = np.array([w.start for w in words], dtype=float)  # None (untimed) is NaN
    end = np.array([w.end for w in words], dtype=float)
    return SourceWords([w.text for w in words], start, end, start, end)


def _groups(utt: np.ndarray) -> list[tuple[int, int]]:
    if not len(utt):
        return []
    bounds = np.flatnonzero(np.diff(utt) != 0) + 1
    edges = [0, *bounds.tolist(), len(utt)]
    return list(zip(edges[:-1], edges[1:]))


def _midpoints(words: SourceWords) -> np.ndarray:
    return np.where(np.isnan(words.end), words.start, (words.start + words.end) / 2)


def _exclude(
    reference: Reference, ref: SourceWords, utt: np.ndarray, hyp: SourceWords, unresolved: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Keep-masks for reference and hypothesis words outside unresolved spans."""
    if not len(unresolved):
        return np.ones(len(ref), dtype=bool), np.ones(len(hyp), dtype=bool)
    u_start = np.array([u.start for u in reference.utterances], dtype=float)
    u_end = np.array([u.end for u in reference.utterances], dtype=float)
    finite = np.isfinite(u_start) & np.isfinite(u_end)
    dur = np.where(finite, u_end - u_start, 0.0)
    inside = np.zeros(len(u_start), dtype=bool)
    if finite.any():
        cov = overlap(unresolved, np.where(finite, u_start, 0.0), np.where(finite, u_end, 0.0))
        inside = finite & (cov >= 0.5 * np.maximum(dur, 1e-9))
    keep_ref = ~inside[utt] & ~contains(unresolved, _midpoints(ref)) if len(ref) else np.ones(0, bool)
    keep_hyp = ~contains(unresolved, _midpoints(hyp))
    return keep_ref, keep_hyp


def _span(reference: Reference, ref: SourceWords) -> tuple[float, float] | None:
    """The scored reference span (utterances if timed, else timed words), for thirds."""
    points = [
        t for u in reference.utterances if math.isfinite(u.start) and math.isfinite(u.end) for t in (u.start, u.end)
    ]
    if not points:
        points = ref.start[ref.timed].tolist() + ref.end[ref.timed].tolist()
    return (min(points), max(points)) if points else None


def audit_vocabulary(
    reference_names: Sequence[str], options: ScoreOptions
) -> tuple[frozenset[str], list[tuple[str, ...]]]:
    """The negations and the normalized names (reference, options and user lexicon) the audits look for.

    One definition for the scorer and the gates, so both audit the same words.
    """
    norm = normalizer(options.audit_policy, options.normalizer, options.lexicon)
    return norm.negations, [tuple(norm.words(n)) for n in (*reference_names, *options.names, *norm.names)]


def audit_rules(options: ScoreOptions) -> AuditRules:
    """The audits' rules of the options' normalizer version (one definition for the scorer and the gates)."""
    return AuditRules.of(normalizer(options.audit_policy, options.normalizer, options.lexicon).policy)


def score_recording(
    reference: Reference,
    hypothesis: Hypothesis | None,
    options: ScoreOptions = ScoreOptions(),
    vad_segments: Sequence[tuple[float, float]] | None = None,
    seams: Sequence[tuple[float, float]] | None = None,
) -> RecordingScore:
    """Score one hypothesis (None = missing = empty) against its reference with every metric.

    ``vad_segments`` (a VAD arm's speech regions) add VAD recall; ``seams`` (a windowed arm's
    shared window intervals) add omissions and duplications near the seams; both in original time.
    """
    ref_all, utt_all, unplaced = _reference_words(reference)
    hyp_all = _hypothesis_words(hypothesis)
    unresolved = merge((i.start, i.end) for i in reference.unresolved)
    keep_ref, keep_hyp = _exclude(reference, ref_all, utt_all, hyp_all, unresolved)
    ref_words, utt = ref_all.select(keep_ref), utt_all[keep_ref]
    hyp_words = hyp_all.select(keep_hyp)
    groups = _groups(utt)
    # the reference's list labels, read only under a version that pairs them (ptbr-norm-4 on)
    paired = NormalizationPolicy.normalized(options.normalizer).paired_labels
    labels = label_words(ref_words.texts, groups) if paired else frozenset()
    tables: dict[str, tuple[TokenTable, TokenTable]] = {}
    counts: dict[str, ErrorCounts] = {}
    aligned: dict[str, AlignedTokens] = {}
    for name in POLICIES:
        if name == "accent-folded" and FOLD_FROM_NORMALIZED:
            ref_t, hyp_t = (fold_table(t) for t in tables["normalized"])
            pairs = False  # folded from tables whose numerals are paired already
        else:
            norm = normalizer(name, options.normalizer, options.lexicon)
            if name not in (options.policy, options.audit_policy):  # only its counts are read
                written = _written_counts(norm, ref_words, groups, hyp_words)
                if written is not None:
                    counts[name] = written
                    continue
            ref_t = tokenize(norm, ref_words, groups, reference=True)
            hyp_t = tokenize(norm, hyp_words, [(0, len(hyp_words))])
            pairs = bool(norm.policy.paired_labels)
        hyp_t, alignment, counts[name] = _paired_and_counted(ref_t, hyp_t, labels if pairs else frozenset())
        tables[name] = (ref_t, hyp_t)
        aligned[name] = AlignedTokens(ref_t, hyp_t, alignment)
    at = aligned[options.audit_policy]
    negations, names = audit_vocabulary(reference.names, options)
    rules = audit_rules(options)
    turns = utt[at.ref.source]  # each reference token's utterance, for the repetition rule
    nonspeech = _nonspeech(reference, unresolved)
    hyp_counted = np.zeros(len(hyp_words), dtype=bool)
    hyp_counted[at.hyp.source] = True
    primary_ref, primary_hyp = tables[options.policy]
    return RecordingScore(
        recording_id=reference.recording_id,
        arm=hypothesis.arm if hypothesis is not None else "",
        policy=options.policy,
        counts=counts[options.policy],
        verbatim=counts["verbatim"],
        accent_folded=counts["accent-folded"],
        optional_words=optional_words(aligned[options.policy].alignment, primary_ref.optional),
        negation=negation_audit(at, negations, turns, rules),
        names=name_audit(at, names, turns),
        numbers=number_audit(at, turns, rules),
        short_words=short_word_audit(at, options.short_word_max_letters),
        nonspeech=nonspeech_score(nonspeech, hyp_words, hyp_counted),
        timing=timing_score(at, _span(reference, ref_words), reference.derived_times),
        signature=scorer_signature(options),
        excluded=Exclusions(total(unresolved), int((~keep_ref).sum()), int((~keep_hyp).sum())),
        unplaced_word_times=unplaced,
        aligned=at,
        primary_aligned=aligned[options.policy],
        utterance_of_word=utt,
        time_constrained=_time_constrained(primary_ref, primary_hyp, options.collar)
        if options.time_constrained
        else None,
        vad=_vad(reference, ref_words, at, negations, unresolved, vad_segments) if vad_segments is not None else None,
        seams=seam_score(at, list(seams), options.seam_margin_s) if seams is not None else None,
    )


def _counted(ref: list[str], hyp: list[str], optional: np.ndarray) -> tuple[Alignment, ErrorCounts]:
    """The alignment of a policy's reference and hypothesis tokens (``optional``: reference tokens that may be left
    out), and its counts."""
    alignment = align_reference(ref, hyp, optional)
    return alignment, error_counts(ref, hyp, alignment)


def _paired_and_counted(
    ref: TokenTable, hyp: TokenTable, labels: frozenset[int]
) -> tuple[TokenTable, Alignment, ErrorCounts]:
    """:func:`_counted` of the tables, after the hypothesis reads the reference's list ``labels`` (source words) as
    the reference does (:mod:`toolkit.scorer.paired_labels`; aligned again only where that changed a token)."""
    alignment, counts = _counted(ref.texts, hyp.texts, ref.optional)
    paired = paired_labels(ref, hyp, alignment, labels) if labels else None
    if paired is None:
        return hyp, alignment, counts
    alignment, counts = _counted(ref.texts, paired.texts, ref.optional)
    return paired, alignment, counts


def _written_counts(
    norm: Normalizer, ref_words: SourceWords, groups: list[tuple[int, int]], hyp_words: SourceWords
) -> ErrorCounts | None:
    """The counts of a policy that writes each word as its pieces (:meth:`Normalizer.written`: the verbatim one),
    from the token texts alone, without the number tags no count reads; None for any other policy."""
    ref = norm.written(ref_words.texts, groups, reference=True)
    hyp = norm.written(hyp_words.texts, [(0, len(hyp_words))])
    if ref is None or hyp is None:
        return None
    return _counted(ref[0], hyp[0], np.asarray(ref[1], dtype=bool))[1]


def _nonspeech(reference: Reference, unresolved: np.ndarray) -> np.ndarray:
    """The annotated non-speech intervals of positive length, each one interval (touching ones are not merged),
    as a ``(k, 2)`` array; a part inside an unresolved span is cut away."""
    spans = np.array([(i.start, i.end) for i in reference.nonspeech()], dtype=float).reshape(-1, 2)
    spans = spans[spans[:, 1] > spans[:, 0]]
    if not len(unresolved) or not len(spans):
        return spans
    return np.concatenate([subtract(span[None, :], unresolved) for span in spans])


def _time_constrained(ref: TokenTable, hyp: TokenTable, collar: float) -> ErrorCounts:
    alignment = align_timed(ref.texts, hyp.texts, ref.span_start, ref.span_end, hyp.start, collar, ref.optional)
    return error_counts(ref.texts, hyp.texts, alignment)


def _vad(
    reference: Reference,
    ref_words: SourceWords,
    at: AlignedTokens,
    negations: frozenset[str],
    unresolved: np.ndarray,
    vad_segments: Sequence[tuple[float, float]],
) -> VadScore:
    for start, end in vad_segments:
        if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end < start:
            raise InputError(None, f"impossible VAD segment {start:g}-{end:g} s")
    speech = merge((i.start, i.end) for i in reference.annotated_speech())
    source = "speech tier"
    if not len(speech):
        speech = merge(
            (u.start, u.end) for u in reference.utterances if math.isfinite(u.start) and math.isfinite(u.end)
        )
        source = "utterances"
    token_neg = negation_masks(at, negations)[0]
    word_neg = np.bincount(at.ref.source[token_neg], minlength=len(ref_words)) > 0
    return vad_score(subtract(speech, unresolved), source, merge(vad_segments), ref_words, word_neg)
