"""The named scoring policies and their cached normalizers, in one place for every caller.

The scorer and its signature both take them from here (not from each other), so neither
imports the other to find out how text was normalized.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from toolkit.scorer.normalize.normalizer import Normalizer
from toolkit.scorer.normalize.policy import POLICY_VERSION, NormalizationPolicy

# Name -> preset; each preset takes the normalizer version.
POLICIES = {
    "normalized": NormalizationPolicy.normalized,
    "verbatim": NormalizationPolicy.verbatim,
    "accent-folded": NormalizationPolicy.accent_folded,
}


@cache
def normalizer(policy: str, version: str = POLICY_VERSION, lexicon: Path | None = None) -> Normalizer:
    """The (cached) normalizer for a policy name, normalizer version and user lexicon."""
    return Normalizer(POLICIES[policy](version), user_lexicon=lexicon)
