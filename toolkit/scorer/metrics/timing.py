"""Word timing against reference word times.

A reference word counts once, through its first normalized token; it is matched when that token
is a hit whose hypothesis word has an onset. Onset error = hypothesis onset - reference onset.
Drift is the least-squares slope of onset error against reference onset, in seconds per minute;
early/middle/late split the reference span into thirds. Every figure is None ("not available")
when there is nothing to measure: no timed reference words, or no timed hypothesis words.
The ``WORST_ONSETS`` largest absolute onset errors are listed (reference word and onset,
hypothesis onset, error) so a reader can see where a p95 comes from. Reference times derived by
forced alignment rather than marked (``Reference.derived_times``) are said with every figure:
``derived_word_times`` reads ``derived (forced alignment, p95 0.97 s)``, and a pool is as coarse as
its coarsest recording.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.core.transcripts import DerivedTimes
from toolkit.scorer.align import EQUAL
from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.figures import Figure, Figures
from toolkit.scorer.metrics.tokens import TokenTable

THIRDS = ("early", "middle", "late")
WORST_ONSETS = 10


def _r(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


@dataclass(frozen=True, eq=False)
class TimingScore(Figures):
    """Onset errors of matched timed words, with coverage and the untimed hypothesis word count.

    Pooled (``+``), hypothesis word counts add over every record and onset errors and timed
    reference words over the available ones. Drift and thirds are per recording only: a pool of
    several recordings has neither, since a slope over time does not pool across recordings.
    """

    FIGURES = (
        Figure("available", "timing_available", pooled=False),
        Figure("ref_timed_words", "timing_ref_timed_words"),
        Figure("matched_timed_words", "timing_matched_timed_words"),
        Figure("coverage", "timing_coverage"),
        Figure("onset_abs_median_s", digits=4),
        Figure("onset_abs_p95_s", digits=4),
        Figure("drift_s_per_min", digits=4, pooled=False),
        Figure("derived_word_times", "timing_word_times"),
        Figure("hyp_words"),
        Figure("untimed_hyp_words"),
    )

    ref_timed_words: int = 0
    hyp_words: int = 0
    untimed_hyp_words: int = 0
    ref_onsets: np.ndarray = field(default_factory=lambda: np.zeros(0))
    onset_errors: np.ndarray = field(default_factory=lambda: np.zeros(0))
    span: tuple[float, float] | None = None
    ref_texts: tuple[str, ...] = ()
    recordings: int = 1
    derived: DerivedTimes | None = None

    @property
    def derived_word_times(self) -> str | None:
        """``derived (forced alignment, p95 X s)`` when the reference times were derived, None when marked."""
        return None if self.derived is None else self.derived.describe()

    @property
    def available(self) -> bool:
        return self.ref_timed_words > 0 and self.hyp_words > self.untimed_hyp_words

    @property
    def matched_timed_words(self) -> int | None:
        return len(self.onset_errors) if self.available else None

    @property
    def coverage(self) -> float | None:
        return len(self.onset_errors) / self.ref_timed_words if self.available else None

    def _abs_quantile(self, q: float) -> float | None:
        if not self.available or not len(self.onset_errors):
            return None
        return float(np.quantile(np.abs(self.onset_errors), q))

    @property
    def onset_abs_median_s(self) -> float | None:
        return self._abs_quantile(0.5)

    @property
    def onset_abs_p95_s(self) -> float | None:
        return self._abs_quantile(0.95)

    @property
    def drift_s_per_min(self) -> float | None:
        """Slope of onset error over reference time (s of error per minute); needs 3+ distinct onsets."""
        if self.recordings != 1 or not self.available or len(np.unique(self.ref_onsets)) < 3:
            return None
        # The least-squares slope (what scipy.stats.linregress gives), without importing scipy.stats:
        # that import costs more than scoring a 9,000-word recording.
        x = np.asarray(self.ref_onsets, dtype=float)
        y = np.asarray(self.onset_errors, dtype=float)
        dx = x - x.mean()
        return float(dx @ (y - y.mean()) / (dx @ dx)) * 60.0

    def thirds(self) -> dict[str, dict[str, Any]] | None:
        """Signed and absolute median onset error in each third of the reference span."""
        if self.recordings != 1 or not self.available or self.span is None:
            return None
        t0, t1 = self.span
        edges = np.linspace(t0, t1, 4)
        part = np.clip(np.searchsorted(edges, self.ref_onsets, side="right") - 1, 0, 2)
        out = {}
        for k, name in enumerate(THIRDS):
            err = self.onset_errors[part == k]
            out[name] = {
                "start": _r(edges[k]),
                "end": _r(edges[k + 1]),
                "matched": len(err),
                "onset_median_s": _r(np.median(err)) if len(err) else None,
                "onset_abs_median_s": _r(np.median(np.abs(err))) if len(err) else None,
            }
        return out

    def worst_onsets(self, count: int = WORST_ONSETS) -> list[dict[str, Any]]:
        """The ``count`` matched words with the largest absolute onset error, largest first."""
        if not self.available:
            return []
        order = largest_first(np.abs(self.onset_errors), count)
        return [
            {
                "reference": self.ref_texts[k] if k < len(self.ref_texts) else "",
                "ref_onset_s": _r(self.ref_onsets[k]),
                "hyp_onset_s": _r(self.ref_onsets[k] + self.onset_errors[k]),
                "onset_error_s": _r(self.onset_errors[k]),
            }
            for k in order.tolist()
        ]

    def json_extras(self) -> dict[str, Any]:
        return {"thirds": self.thirds(), "worst_onsets": self.worst_onsets()}

    def __add__(self, other: TimingScore) -> TimingScore:
        if type(other) is not TimingScore:
            return NotImplemented
        timed = [s for s in (self, other) if s.available]
        return TimingScore(
            ref_timed_words=sum(s.ref_timed_words for s in timed),
            hyp_words=self.hyp_words + other.hyp_words,
            untimed_hyp_words=self.untimed_hyp_words + other.untimed_hyp_words,
            ref_onsets=np.concatenate([np.zeros(0), *(s.ref_onsets for s in timed)]),
            onset_errors=np.concatenate([np.zeros(0), *(s.onset_errors for s in timed)]),
            ref_texts=tuple(t for s in timed for t in s.ref_texts),
            recordings=self.recordings + other.recordings,
            derived=coarsest(s.derived for s in timed),
        )


def coarsest(derivations: Iterable[DerivedTimes | None]) -> DerivedTimes | None:
    """The least accurate of some recordings' derived times (an unmeasured one first), None when all are marked."""
    found = [d for d in derivations if d is not None]
    return max(found, key=lambda d: d.error_bound_s) if found else None


def largest_first(values: np.ndarray, count: int) -> np.ndarray:
    """``np.argsort(-values, kind="stable")[:count]``: the ``count`` largest values' indices, largest first and ties
    in index order; past a partition at the ``count``-th, only the values up to it are sorted (not thousands)."""
    keys = -values
    if count <= 0 or len(keys) <= count or np.isnan(keys).any():
        return np.argsort(keys, kind="stable")[:count]
    bound = np.partition(keys, count - 1)[count - 1]
    candidates = np.flatnonzero(keys <= bound)  # every tie with the count-th, in index order
    return candidates[np.argsort(keys[candidates], kind="stable")][:count]


def worst_onsets(timings: Mapping[str, Mapping[str, TimingScore]], count: int = WORST_ONSETS) -> list[dict[str, Any]]:
    """Each arm's ``count`` largest absolute onset errors over its recordings, largest first."""
    rows = []
    for arm, by_recording in timings.items():
        ranked = sorted(
            (
                {"arm": arm, "recording": recording, **row}
                for recording, timing in by_recording.items()
                for row in timing.worst_onsets(count)
            ),
            key=lambda row: -abs(row["onset_error_s"]),
        )
        rows.extend(ranked[:count])
    return rows


def _produced(tokens: TokenTable) -> np.ndarray:
    """Per source word, whether it produced a token (a mask: no sort of the tokens' sources)."""
    produced = np.zeros(len(tokens.words), dtype=bool)
    produced[tokens.source] = True
    return produced


def timing_score(
    at: AlignedTokens, span: tuple[float, float] | None, derived: DerivedTimes | None = None
) -> TimingScore:
    """Onset errors for reference words matched (as hits) to timed hypothesis words; ``derived`` says where the
    reference's word times came from when no listener marked them."""
    ref_words, hyp_words = at.ref.words, at.hyp.words
    produced, hyp_produced = _produced(at.ref), _produced(at.hyp)
    ref_timed = int((ref_words.timed & produced).sum())
    untimed = int((~hyp_words.timed & hyp_produced).sum())
    first = at.ref.first_of_source
    ref_on = at.ref.start
    picked = np.flatnonzero(first & (at.ref_op == EQUAL) & ~np.isnan(ref_on))
    hyp_on = at.hyp.start[at.ref_partner[picked]] if len(picked) else np.zeros(0)
    good = ~np.isnan(hyp_on)
    onsets = ref_on[picked][good]
    texts = map(ref_words.texts.__getitem__, at.ref.source[picked][good].tolist())
    return TimingScore(
        ref_timed_words=ref_timed,
        hyp_words=int(hyp_produced.sum()),
        untimed_hyp_words=untimed,
        ref_onsets=onsets,
        onset_errors=hyp_on[good] - onsets,
        span=span,
        ref_texts=tuple(texts),
        derived=derived,
    )
