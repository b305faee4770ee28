"""Measure how far an enhancer's output lags its input, by cross-correlating raw waveforms.

The raw waveform (not its envelope) is used so the lag is found to the sample: enhancers
keep the speech's phase closely enough that the correlation peak is sharp. The sum over
lags in ``[-max_lag, +max_lag]`` is accumulated block by block (FFT correlation per block),
so memory stays bounded for hour-long recordings while the result equals the full-length
correlation. The integer peak is refined to a fraction of a sample by a parabola through
the peak and its two neighbours.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import correlate

from toolkit.core.errors import InputError, ToolkitError

_BLOCK = 1 << 16


def measure_delay(reference: np.ndarray, processed: np.ndarray, sample_rate: int, max_lag_s: float = 0.5) -> float:
    """Seconds by which ``processed`` lags ``reference`` (positive: the output is late).

    Returns 0.0 when either signal is silent, since no lag can be seen. Raises
    :class:`ToolkitError` when the peak sits on the search limit, i.e. the true lag is
    probably larger than ``max_lag_s``.
    """
    reference = np.asarray(reference)
    processed = np.asarray(processed)
    if reference.ndim != 1 or processed.ndim != 1:
        raise InputError(None, "delay measurement needs two mono (1-D) signals")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, np.integer)) or sample_rate <= 0:
        raise InputError(None, f"sample rate must be a positive integer, got {sample_rate!r}")
    if isinstance(max_lag_s, bool) or not isinstance(max_lag_s, (int, float)) or not 0 <= max_lag_s < np.inf:
        raise InputError(None, f"max_lag_s must be a non-negative number of seconds, got {max_lag_s!r}")
    max_lag = int(round(max_lag_s * sample_rate))
    scores = _correlation(reference, processed, max_lag)
    if not np.any(scores):
        return 0.0
    peak = int(np.argmax(scores))
    if max_lag > 0 and peak in (0, 2 * max_lag):
        raise ToolkitError(
            f"the delay reaches the search limit of {max_lag_s} s; raise max_lag_s or check the enhancer"
        )
    return (peak - max_lag + _parabolic_offset(scores, peak)) / sample_rate


def _correlation(reference: np.ndarray, processed: np.ndarray, max_lag: int) -> np.ndarray:
    """``scores[k] = sum_n reference[n] * processed[n + k - max_lag]`` for k in 0..2*max_lag."""
    scores = np.zeros(2 * max_lag + 1)
    for start in range(0, len(reference), _BLOCK):
        block = reference[start : start + _BLOCK].astype(np.float64)
        window = _slice_zero_filled(processed, start - max_lag, start + len(block) + max_lag)
        if np.any(block) and np.any(window):
            scores += correlate(window, block, mode="valid", method="fft")
    return scores


def _slice_zero_filled(samples: np.ndarray, first: int, last: int) -> np.ndarray:
    """``samples[first:last]`` as float64, with zeros where the range leaves the array."""
    out = np.zeros(last - first)
    lo, hi = max(first, 0), min(last, len(samples))
    if hi > lo:
        out[lo - first : hi - first] = samples[lo:hi]
    return out


def _parabolic_offset(scores: np.ndarray, peak: int) -> float:
    """Sub-sample position of the maximum of a parabola through the peak and its neighbours."""
    if peak == 0 or peak == len(scores) - 1:
        return 0.0
    left, centre, right = scores[peak - 1], scores[peak], scores[peak + 1]
    curvature = left - 2 * centre + right
    return 0.0 if curvature >= 0 else float(0.5 * (left - right) / curvature)
