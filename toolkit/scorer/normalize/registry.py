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


def normalizer(policy: str, version: str = POLICY_VERSION, lexicon: Path | None = None) -> Normalizer:
    """The (cached) normalizer for a policy name, normalizer version and user lexicon; an edited
    lexicon file is read again."""
    return _normalizer(policy, version, lexicon, file_stamp(lexicon))


def file_stamp(path: Path | None) -> tuple[int, int] | None:
    """What tells an edited file from the one cached: modification time (ns) and size; None if absent."""
    if path is None:
        return None
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


@cache
def _normalizer(policy: str, version: str, lexicon: Path | None, stamp: tuple[int, int] | None) -> Normalizer:
    return Normalizer(POLICIES[policy](version), user_lexicon=lexicon)
