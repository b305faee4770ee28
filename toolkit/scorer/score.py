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
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz.distance import Indel

from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Reference
from toolkit.scorer.align import align_timed
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
from toolkit.scorer.normalize import NormalizationPolicy
from toolkit.scorer.normalize.registry import POLICIES, normalizer
from toolkit.scorer.normalize.same_word import word_key
from toolkit.scorer.optional_align import align_reference
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.signature import scorer_signature

if TYPE_CHECKING:  # pandas is imported by the table functions only, so scoring one pair stays quick
    pass

from toolkit.scorer.results import Exclusions, RecordingScore

# The accent-folded tables are folded copies of the normalized ones when the presets allow it.
FOLD_FROM_NORMALIZED = NormalizationPolicy.accent_folded() == replace(
    NormalizationPolicy.normalized(), accent_fold=True
)


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _reference_words(reference: Reference) -> tuple[SourceWords, np.ndarray, int]:
    """Utterance words with times from the timed-word tier; returns words, utterance index, unplaced count.

    A turn's start is its first word's onset and its end its last word's offset, so untimed
    boundary words take those times (an onset alone still counts for onset error).
    """
    timed = sorted((w for w in reference.words if w.timed), key=lambda w: (w.start, w.end))
    mids = np.array([(w.start + w.end) / 2 for w in timed], dtype=np.float64)  # type: ignore[operator]
    keys = [word_key(w.text) for w in timed]
    used = [False] * len(timed)
    # The timed words whose midpoints fall in each utterance's span: [lo, hi) per utterance, in one search.
    bounds = np.array([(u.start, u.end) for u in reference.utterances], dtype=float).reshape(-1, 2)
    los = np.searchsorted(mids, bounds[:, 0] - 1e-6, side="left").tolist()
    his = np.searchsorted(mids, bounds[:, 1] + 1e-6, side="right").tolist()
    texts: list[str] = []
    utt: list[int] = []
    start: list[float] = []
    end: list[float] = []
    span_s: list[float] = []
    span_e: list[float] = []
    for u_index, u in enumerate(reference.utterances):
        words = u.text.split()
        known = math.isfinite(u.start) and math.isfinite(u.end)
        w_start = [math.nan] * len(words)
        w_end = [math.nan] * len(words)
        if timed and known and words:
            cand = [k for k in range(los[u_index], his[u_index]) if not used[k]]
            word_keys = [word_key(w) for w in words]
            cand_keys = [keys[k] for k in cand]
            if word_keys == cand_keys:  # a complete word tier: one timed word per utterance word
                pairs = list(enumerate(cand))
            else:
                pairs = [
                    (a, cand[b])
                    for block in Indel.opcodes(word_keys, cand_keys)
                    if block.tag == "equal"
                    for a, b in zip(range(block.src_start, block.src_end), range(block.dest_start, block.dest_end))
                ]
            for a, k in pairs:
                used[k] = True
                w_start[a], w_end[a] = float(timed[k].start), float(timed[k].end)  # type: ignore[arg-type]
        if known and words:  # turn edges are boundary-word times (transcription convention sections 1, 10)
            if math.isnan(w_start[0]):
                w_start[0] = float(u.start)
            if math.isnan(w_end[-1]):
                w_end[-1] = float(u.end)
        texts.extend(words)
        utt.extend([u_index] * len(words))
        start.extend(w_start)
        end.extend(w_end)
        us, ue = (float(u.start), float(u.end)) if known else (math.nan, math.nan)
        span_s.extend(s if not math.isnan(s) else us for s in w_start)
        span_e.extend(e if not math.isnan(e) else ue for e in w_end)
    arr = lambda xs: np.asarray(xs, dtype=float)  # noqa: E731
    source_words = SourceWords(texts, arr(start), arr(end), arr(span_s), arr(span_e))
    return source_words, np.asarray(utt, dtype=np.int64), used.count(False)


def _hypothesis_words(hypothesis: Hypothesis | None) -> SourceWords:
    words = hypothesis.words if hypothesis is not None else []
    start = np.array([_nan(w.start) for w in words], dtype=float)
    end = np.array([_nan(w.end) for w in words], dtype=float)
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
    tables: dict[str, tuple[TokenTable, TokenTable]] = {}
    counts: dict[str, ErrorCounts] = {}
    aligned: dict[str, AlignedTokens] = {}
    for name in POLICIES:
        if name == "accent-folded" and FOLD_FROM_NORMALIZED:
            ref_t, hyp_t = (fold_table(t) for t in tables["normalized"])
        else:
            norm = normalizer(name, options.normalizer, options.lexicon)
            ref_t = tokenize(norm, ref_words, groups, reference=True)
            hyp_t = tokenize(norm, hyp_words, [(0, len(hyp_words))])
        alignment = align_reference(ref_t.texts, hyp_t.texts, ref_t.optional)
        tables[name] = (ref_t, hyp_t)
        counts[name] = error_counts(ref_t.texts, hyp_t.texts, alignment)
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
        timing=timing_score(at, _span(reference, ref_words)),
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
