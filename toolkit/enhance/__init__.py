"""Speech enhancement stages: noisereduce spectral gating and the GTCRN neural denoiser.

Every enhancer measures its output's delay against its input by cross-correlation and
removes it in the output signal's time map. ``build_enhancer`` turns an experiment file's
stage table into a validated enhancer before any audio is touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit.core.errors import InputError
from toolkit.enhance.base import EnhancementResult, Enhancer
from toolkit.enhance.delay import measure_delay
from toolkit.enhance.gtcrn import GtcrnEnhancer, GtcrnParams
from toolkit.enhance.params import EnhancerParams
from toolkit.enhance.spectral_gate import NoiseReduceEnhancer, NoiseReduceParams

ENHANCERS: dict[str, tuple[type[Enhancer], type[EnhancerParams]]] = {
    "noisereduce": (NoiseReduceEnhancer, NoiseReduceParams),
    "gtcrn": (GtcrnEnhancer, GtcrnParams),
}


def build_enhancer(name: str, params: Mapping[str, Any] | None = None, source: str | None = None) -> Enhancer:
    """The enhancer called ``name`` with ``params`` checked; errors name ``source`` (e.g. the experiment file)."""
    if name not in ENHANCERS:
        raise InputError(source, f"unknown enhancer {name!r}; known: {', '.join(sorted(ENHANCERS))}")
    enhancer_class, params_class = ENHANCERS[name]
    return enhancer_class(params_class.from_mapping(params or {}, source))


__all__ = [
    "ENHANCERS",
    "EnhancementResult",
    "Enhancer",
    "EnhancerParams",
    "GtcrnEnhancer",
    "GtcrnParams",
    "NoiseReduceEnhancer",
    "NoiseReduceParams",
    "build_enhancer",
    "measure_delay",
]
