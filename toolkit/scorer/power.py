"""How small a WER reduction a planned test split can detect, and how large a split a threshold needs.

The recording is the unit, as in the paired bootstrap (toolkit.scorer.stats). From a split already scored
(tuning) take each recording's errors removed by the challenger, ``d_i = e_base,i - e_chal,i``, and its
reference words ``n_i``; the corpus reduction is ``R = sum d / sum n``. The part of ``d_i`` the corpus rate does
not explain, ``u_i = d_i - R n_i``, is the noise a recording brings; its variance is taken to grow with the
recording's words, ``Var u_i = s^2 n_i``, estimated as ``s^2 = k/(k-1) * sum u_i^2 / sum n_i`` over the ``k``
scored recordings. A test split of ``K`` recordings and ``N`` words then measures the reduction with standard
error ``SE = sqrt(s^2 / N)``. With ``q = t(0.975, K-1)`` and ``p = t(0.80, K-1)`` (Student's t, the recordings'
degrees of freedom, so one or two recordings can never look precise):

- minimum detectable effect (80% power, 95% two-sided interval that excludes zero): ``MDE = (q + p) SE``;
- probability that the gate's interval lower bound reaches a threshold ``T`` when the true reduction is ``D``:
  ``P = 1 - F_t((T - D) / SE + q; K-1)``, so a true reduction of ``T + MDE`` passes the gate 80% of the time;
- the split needed for a threshold: the fewest recordings (of the planned length) whose MDE is at most ``T``.

What this does not promise: it is a normal approximation of a bootstrap on few recordings, it takes the tuning
split's noise as the test split's (another speaker, room or text changes it), and it says nothing of the other
gates; ``ablate calibrate`` measures the whole procedure by resampling instead (toolkit.protocol.calibration).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scipy.stats import t as student_t

from toolkit.scorer.metrics.wer import ErrorCounts

CONFIDENCE = 0.95  # the gates' interval (toolkit.scorer.stats.paired_comparison)
POWER = 0.80
MAX_RECORDINGS = 100_000  # the search for the split a threshold needs stops here


@dataclass(frozen=True)
class PairedSpread:
    """What a scored split says of the per-recording noise in a paired WER reduction."""

    recordings: int
    reference_words: int
    minutes: float
    reduction_points: float  # R, in points
    variance_per_word: float  # s^2, (errors removed)^2 per reference word

    @classmethod
    def of(
        cls, baseline: Mapping[str, ErrorCounts], challenger: Mapping[str, ErrorCounts], minutes: float
    ) -> PairedSpread:
        """From each recording's error counts under both systems (the same recordings, the same references)."""
        if set(baseline) != set(challenger):
            raise ValueError("the two systems were scored on different recordings")
        ids = sorted(baseline)
        words = [baseline[r].ref_words for r in ids]
        removed = [baseline[r].errors - challenger[r].errors for r in ids]
        total = sum(words)
        if not ids or total == 0:
            raise ValueError("no reference words to estimate a spread from")
        rate = sum(removed) / total
        k = len(ids)
        residual = sum((d - rate * n) ** 2 for d, n in zip(removed, words, strict=True))
        variance = residual / total * k / (k - 1) if k > 1 else math.nan
        return cls(k, total, minutes, 100 * rate, variance)

    @property
    def words_per_minute(self) -> float:
        return self.reference_words / self.minutes if self.minutes > 0 else math.nan

    def standard_error_points(self, words: float) -> float:
        """SE of a split's corpus reduction in points, for a split of ``words`` reference words."""
        return 100 * math.sqrt(self.variance_per_word / words) if words > 0 else math.inf

    def to_json(self) -> dict[str, Any]:
        return {
            "recordings": self.recordings,
            "reference_words": self.reference_words,
            "minutes": round(self.minutes, 2),
            "reduction_points": round(self.reduction_points, 3),
            "variance_per_word": self.variance_per_word,
        }


def minimum_detectable_effect(standard_error: float, recordings: int) -> float:
    """``(t(0.975, K-1) + t(0.80, K-1)) * SE``; infinite below two recordings (no interval exists)."""
    if recordings < 2 or not math.isfinite(standard_error):
        return math.inf
    df = recordings - 1
    return float((student_t.ppf(1 - (1 - CONFIDENCE) / 2, df) + student_t.ppf(POWER, df)) * standard_error)


def gate_pass_probability(effect: float, threshold: float, standard_error: float, recordings: int) -> float:
    """Probability that the interval's lower bound reaches ``threshold`` when the true reduction is ``effect``."""
    if recordings < 2 or not math.isfinite(standard_error):
        return math.nan
    df = recordings - 1
    q = student_t.ppf(1 - (1 - CONFIDENCE) / 2, df)
    if standard_error == 0:
        return float(effect >= threshold)
    return float(1 - student_t.cdf((threshold - effect) / standard_error + q, df))


@dataclass(frozen=True)
class PowerPlan:
    """A planned test split (its recordings and minutes, never its words) against a tuning spread and a
    threshold: what it can detect and what the threshold would need."""

    spread: PairedSpread
    recordings: int
    minutes: float
    threshold_points: float | None  # the pre-registered wer_reduction_points, None when not applicable
    standard_error_points: float
    minimum_detectable_effect_points: float
    gate_passes_80_at_points: float | None  # the true reduction the gate promotes 4 times in 5
    needed_recordings: int | None  # for MDE <= threshold at the planned recording length
    needed_minutes: float | None

    @property
    def detects_threshold(self) -> bool | None:
        """Whether the planned split can tell a reduction of the threshold from none (None: no threshold, or one
        of 0 or below, which asks for no minimum gain)."""
        if self.threshold_points is None or self.threshold_points <= 0:
            return None
        return self.minimum_detectable_effect_points <= self.threshold_points

    def to_json(self) -> dict[str, Any]:
        return {
            "recordings": self.recordings,
            "minutes": round(self.minutes, 2),
            "estimated_reference_words": round(self._words()),
            "threshold_points": self.threshold_points,
            "standard_error_points": _rounded(self.standard_error_points),
            "minimum_detectable_effect_points": _rounded(self.minimum_detectable_effect_points),
            "gate_passes_80_at_points": _rounded(self.gate_passes_80_at_points),
            "detects_threshold": self.detects_threshold,
            "needed_recordings": self.needed_recordings,
            "needed_minutes": None if self.needed_minutes is None else round(self.needed_minutes, 1),
            "tuning": self.spread.to_json(),
        }

    def _words(self) -> float:
        return self.minutes * self.spread.words_per_minute

    def text(self) -> str:
        return power_text(self.to_json())


def plan_power(spread: PairedSpread, recordings: int, minutes: float, threshold_points: float | None) -> PowerPlan:
    """The planned split's MDE and the size ``threshold_points`` needs, recordings as long as the planned ones."""
    words = minutes * spread.words_per_minute
    se = spread.standard_error_points(words)
    mde = minimum_detectable_effect(se, recordings)
    needed: int | None = None
    needed_minutes: float | None = None
    if threshold_points is not None and threshold_points > 0 and recordings > 0 and math.isfinite(se):
        per_recording = minutes / recordings
        needed = _fewest(spread, per_recording * spread.words_per_minute, threshold_points)
        needed_minutes = None if needed is None else needed * per_recording
    promoted = None if threshold_points is None or not math.isfinite(mde) else threshold_points + mde
    return PowerPlan(spread, recordings, minutes, threshold_points, se, mde, promoted, needed, needed_minutes)


def _fewest(spread: PairedSpread, words_per_recording: float, threshold: float) -> int | None:
    """The fewest recordings of ``words_per_recording`` whose MDE is at most ``threshold`` (MDE falls with K)."""

    def mde(k: int) -> float:
        return minimum_detectable_effect(spread.standard_error_points(k * words_per_recording), k)

    if mde(MAX_RECORDINGS) > threshold:
        return None
    low, high = 1, MAX_RECORDINGS  # mde(low) > threshold (infinite at 1), mde(high) <= threshold
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if mde(middle) > threshold else (low, middle)
    return high


def _rounded(value: float | None) -> float | None:
    if value is None:
        return None
    return round(value, 3) if math.isfinite(value) else None


def _points(value: float | None) -> str:
    return "no size (no interval on fewer than two recordings)" if value is None else f"{value:.2f} points"


def power_text(plan: dict[str, Any]) -> str:
    """One line from a plan's JSON (as the audit log keeps it): what the split detects, what the threshold needs."""
    if not plan.get("estimated", True):
        return f"power: not estimated ({plan.get('reason', '')})"
    mde = plan["minimum_detectable_effect_points"]
    tuning = plan["tuning"]
    line = (
        f"power: the planned test split ({plan['recordings']} recording(s), {plan['minutes']:.1f} min, about "
        f"{plan['estimated_reference_words']} words) detects a WER reduction of {_points(mde)} with 80% power "
        f"(paired spread of {tuning['recordings']} tuning recording(s))"
    )
    if plan["threshold_points"] is None:
        return line
    if plan["threshold_points"] <= 0:
        return line + f"; a threshold of {plan['threshold_points']:g} points asks for no minimum gain, so no size"
    need = (
        f"{plan['needed_recordings']} recordings, {plan['needed_minutes']:.0f} min"
        if plan["needed_recordings"] is not None
        else f"more than {MAX_RECORDINGS} recordings"
    )
    line += f"; {plan.get('sized_for', 'its threshold')} of {plan['threshold_points']:g} points needs {need}"
    if plan["gate_passes_80_at_points"] is not None:
        line += f"; the gate promotes a true reduction of {plan['gate_passes_80_at_points']:.2f} points 4 times in 5"
    return line
