"""The frozen, versioned pt-BR normalization policy shared by reference and hypothesis.

Any change to what an option does must bump ``POLICY_VERSION`` (see
protocol/normalization-policy.md), so a score can always be traced to the rules behind it.
Older versions stay selectable, so a score made under them can be reproduced.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

FIRST_VERSION = "ptbr-norm-1"
POLICY_VERSIONS = (FIRST_VERSION, "ptbr-norm-2")
POLICY_VERSION = POLICY_VERSIONS[-1]
# Options that ptbr-norm-2 introduced: off under ptbr-norm-1 and absent from its signature,
# so a ptbr-norm-1 signature is the same as before they existed.
LATER_OPTIONS = ("roman_numerals", "abbreviations", "homophones", "numeral_pieces")


@dataclass(frozen=True)
class NormalizationPolicy:
    """Options of the normalizer; build one through a preset and ``dataclasses.replace``.

    The options of ``LATER_OPTIONS`` default (None) to what the version's ``normalized`` preset does.
    """

    version: str = POLICY_VERSION
    unicode_form: Literal["NFC", "NFKC"] = "NFKC"
    lowercase: bool = True
    strip_punctuation: bool = True
    split_hyphens: bool = True
    accent_fold: bool = False
    apply_equivalences: bool = True
    numbers_to_words: bool = True
    keep_fillers: bool = True
    roman_numerals: bool | None = None
    abbreviations: bool | None = None
    homophones: bool | None = None
    numeral_pieces: bool | None = None

    def __post_init__(self) -> None:
        if self.version not in POLICY_VERSIONS:
            raise ValueError(f"unknown normalizer version {self.version!r}; choose from {', '.join(POLICY_VERSIONS)}")
        if self.unicode_form not in ("NFC", "NFKC"):
            raise ValueError(f"unicode_form must be NFC or NFKC, not {self.unicode_form!r}")
        later = self.version != FIRST_VERSION
        for name in LATER_OPTIONS:
            value = getattr(self, name)
            if value is None:
                object.__setattr__(self, name, later)
            elif value and not later:
                raise ValueError(f"{name} needs normalizer version {POLICY_VERSIONS[1]} or later, not {self.version}")

    @classmethod
    def normalized(cls, version: str = POLICY_VERSION) -> NormalizationPolicy:
        """The default scoring policy: NFKC, lower case, no punctuation, equivalences, number words
        (and from ptbr-norm-2 on: Roman numerals in context, abbreviations, the crase folded, numerals
        a recognizer split into word pieces read whole)."""
        return cls(version=version)

    @classmethod
    def verbatim(cls, version: str = POLICY_VERSION) -> NormalizationPolicy:
        """Words as written: NFC and whitespace tokenization only (case, accents, punctuation kept)."""
        return cls(
            version=version,
            unicode_form="NFC",
            lowercase=False,
            strip_punctuation=False,
            split_hyphens=False,
            apply_equivalences=False,
            numbers_to_words=False,
            roman_numerals=False,
            abbreviations=False,
            homophones=False,
            numeral_pieces=False,
        )

    @classmethod
    def accent_folded(cls, version: str = POLICY_VERSION) -> NormalizationPolicy:
        """The normalized policy with diacritics removed, for the accent-folded figure."""
        return replace(cls.normalized(version), accent_fold=True)

    def options(self) -> dict[str, Any]:
        """Every option this version has, except the version itself, as plain JSON-ready values."""
        data = asdict(self)
        del data["version"]
        if self.version == FIRST_VERSION:
            for name in LATER_OPTIONS:
                del data[name]
        return data
