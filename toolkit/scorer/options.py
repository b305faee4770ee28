"""How to score (``ScoreOptions``): its own module so the scorer and its signature both read it
without importing each other. ``toolkit.scorer.options.ScoreOptions`` is the same class.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.scorer.normalize import POLICY_VERSION, POLICY_VERSIONS
from toolkit.scorer.normalize.registry import POLICIES


@dataclass(frozen=True)
class ScoreOptions:
    """How to score: primary policy name, extra names, short-word size, collar, diagnosis mode, bootstrap,
    normalizer version and a user lexicon file (equivalences, names, negations of a corpus)."""

    policy: str = "normalized"
    names: tuple[str, ...] = ()
    short_word_max_letters: int = 3
    collar: float = 0.5
    time_constrained: bool = False
    seam_margin_s: float = 1.0
    bootstrap_samples: int = 10000
    bootstrap_seed: int = 0
    normalizer: str = POLICY_VERSION
    lexicon: Path | None = None

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"unknown policy {self.policy!r}; choose from {', '.join(POLICIES)}")
        if self.normalizer not in POLICY_VERSIONS:
            raise ValueError(
                f"unknown normalizer version {self.normalizer!r}; choose from {', '.join(POLICY_VERSIONS)}"
            )
        if self.collar < 0 or self.short_word_max_letters < 0 or self.seam_margin_s < 0 or self.bootstrap_samples < 1:
            raise ValueError("collar, short_word_max_letters and seam_margin_s must be >= 0, bootstrap_samples >= 1")

    @property
    def audit_policy(self) -> str:
        """Audits, timing and non-speech run on the primary policy, or the normalized one if verbatim."""
        return "normalized" if self.policy == "verbatim" else self.policy
