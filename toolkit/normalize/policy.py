"""The frozen, versioned pt-BR normalization policy shared by reference and hypothesis.

Any change to what an option does must bump ``POLICY_VERSION`` (see
protocol/normalization-policy.md), so a score can always be traced to the rules behind it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

POLICY_VERSION = "ptbr-norm-1"


@dataclass(frozen=True)
class NormalizationPolicy:
    """Options of the normalizer; build one through a preset and ``dataclasses.replace``."""

    version: str = POLICY_VERSION
    unicode_form: Literal["NFC", "NFKC"] = "NFKC"
    lowercase: bool = True
    strip_punctuation: bool = True
    split_hyphens: bool = True
    accent_fold: bool = False
    apply_equivalences: bool = True
    numbers_to_words: bool = True
    keep_fillers: bool = True

    def __post_init__(self) -> None:
        if self.unicode_form not in ("NFC", "NFKC"):
            raise ValueError(f"unicode_form must be NFC or NFKC, not {self.unicode_form!r}")

    @classmethod
    def normalized(cls) -> NormalizationPolicy:
        """The default scoring policy: NFKC, lower case, no punctuation, equivalences, number words."""
        return cls()

    @classmethod
    def verbatim(cls) -> NormalizationPolicy:
        """Words as written: NFC and whitespace tokenization only (case, accents, punctuation kept)."""
        return cls(
            unicode_form="NFC",
            lowercase=False,
            strip_punctuation=False,
            split_hyphens=False,
            apply_equivalences=False,
            numbers_to_words=False,
        )

    @classmethod
    def accent_folded(cls) -> NormalizationPolicy:
        """The normalized policy with diacritics removed, for the accent-folded figure."""
        return replace(cls(), accent_fold=True)

    def options(self) -> dict[str, Any]:
        """Every option except the version, as plain JSON-ready values."""
        data = asdict(self)
        del data["version"]
        return data
