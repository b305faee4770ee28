"""Paired comparison of two systems on the same recordings (the recording is the unit).

Per-recording WER deltas, a seeded recording-level bootstrap interval for the difference in
corpus (micro-averaged) WER, a Wilcoxon signed-rank test and a sign test on the per-recording
deltas, and a plain warning when there are too few recordings for any of it to mean much.
Delta = challenger - baseline, so a negative delta (positive reduction) is an improvement.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon
from statsmodels.stats.descriptivestats import sign_test
from statsmodels.stats.multitest import multipletests

from toolkit.scorer.metrics.wer import ErrorCounts

MIN_RECORDINGS = 6


@dataclass(frozen=True)
class PairedComparison:
    """Corpus WERs, their difference with a bootstrap interval, and paired tests."""

    recordings: int
    baseline_wer: float
    challenger_wer: float
    delta: float
    ci_low: float
    ci_high: float
    confidence: float
    bootstrap_samples: int
    bootstrap_seed: int
    wilcoxon_p: float | None
    sign_test_p: float | None
    per_recording: pd.DataFrame
    warning: str | None

    @property
    def reduction_ci(self) -> tuple[float, float]:
        """Interval for the WER reduction (baseline - challenger); gates read its lower bound."""
        return -self.ci_high, -self.ci_low

    def to_json(self) -> dict[str, Any]:
        return {
            "recordings": self.recordings,
            "baseline_wer": self.baseline_wer,
            "challenger_wer": self.challenger_wer,
            "delta": self.delta,
            "ci": [self.ci_low, self.ci_high],
            "reduction_ci": list(self.reduction_ci),
            "confidence": self.confidence,
            "bootstrap": {"samples": self.bootstrap_samples, "seed": self.bootstrap_seed},
            "wilcoxon_p": self.wilcoxon_p,
            "sign_test_p": self.sign_test_p,
            "warning": self.warning,
            "per_recording": self.per_recording.to_dict(orient="records"),
        }


def holm_adjusted(p_values: Mapping[str, float | None]) -> dict[str, float | None]:
    """Holm's step-down adjustment across the arms compared with one baseline (family-wise error 5% for all K
    comparisons together): the i-th smallest of K p-values becomes max_{j<=i} min(1, (K - j + 1) p_(j)).
    An arm with no p-value keeps None and is not counted in K."""
    known = {arm: p for arm, p in p_values.items() if p is not None}
    adjusted = dict(zip(known, multipletests(list(known.values()), method="holm")[1], strict=True)) if known else {}
    return {arm: (float(adjusted[arm]) if arm in adjusted else None) for arm in p_values}


def _counts(value: Any) -> ErrorCounts:
    return value if isinstance(value, ErrorCounts) else value.counts


def paired_comparison(
    baseline: Mapping[str, Any],
    challenger: Mapping[str, Any],
    *,
    samples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
    min_recordings: int = MIN_RECORDINGS,
) -> PairedComparison:
    """Compare two systems; values are :class:`ErrorCounts` or anything with ``.counts`` (RecordingScore).

    Both mappings must cover the same recording ids (a missing hypothesis is an empty one, scored).
    """
    if set(baseline) != set(challenger):
        missing = sorted(set(baseline) ^ set(challenger))
        raise ValueError(f"systems were scored on different recordings: {', '.join(missing)}")
    ids = sorted(baseline)
    if not ids:
        raise ValueError("no recordings to compare")
    base = [_counts(baseline[r]) for r in ids]
    chal = [_counts(challenger[r]) for r in ids]
    n_ref = np.array([b.ref_words for b in base], dtype=float)
    if np.any(n_ref != np.array([c.ref_words for c in chal])):
        raise ValueError("the two systems were scored against different reference word counts")
    e_base = np.array([b.errors for b in base], dtype=float)
    e_chal = np.array([c.errors for c in chal], dtype=float)
    if n_ref.sum() == 0:
        raise ValueError("the recordings have no reference words")
    with np.errstate(invalid="ignore", divide="ignore"):
        wer_base, wer_chal = e_base / n_ref, e_chal / n_ref
    deltas = wer_chal - wer_base
    table = pd.DataFrame(
        {
            "recording_id": ids,
            "ref_words": n_ref.astype(int),
            "baseline_errors": e_base.astype(int),
            "challenger_errors": e_chal.astype(int),
            "baseline_wer": wer_base,
            "challenger_wer": wer_chal,
            "delta": deltas,
        }
    )
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(ids), size=(samples, len(ids)))
    n_boot = n_ref[pick].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (e_chal[pick].sum(axis=1) - e_base[pick].sum(axis=1)) / n_boot
    boot = boot[np.isfinite(boot)]
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boot, [alpha, 1 - alpha])
    valid = deltas[np.isfinite(deltas)]
    nonzero = valid[valid != 0]
    wilcoxon_p = float(wilcoxon(nonzero).pvalue) if len(nonzero) else (1.0 if len(valid) else None)
    sign_p = float(sign_test(nonzero, 0)[1]) if len(nonzero) else (1.0 if len(valid) else None)
    warning = None
    if len(ids) < min_recordings:
        warning = (
            f"only {len(ids)} recording(s): the interval and tests cannot establish a reliable "
            f"difference (at least {min_recordings} are needed to mean anything)"
        )
    return PairedComparison(
        recordings=len(ids),
        baseline_wer=float(e_base.sum() / n_ref.sum()),
        challenger_wer=float(e_chal.sum() / n_ref.sum()),
        delta=float((e_chal.sum() - e_base.sum()) / n_ref.sum()),
        ci_low=float(low),
        ci_high=float(high),
        confidence=confidence,
        bootstrap_samples=samples,
        bootstrap_seed=seed,
        wilcoxon_p=wilcoxon_p,
        sign_test_p=sign_p,
        per_recording=table,
        warning=warning,
    )
