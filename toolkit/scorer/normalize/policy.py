"""The frozen, versioned pt-BR normalization policy shared by reference and hypothesis.

Any change to what an option does must bump ``POLICY_VERSION`` (see
protocol/normalization-policy.md), so a score can always be traced to the rules behind it.
Older versions stay selectable, so a score made under them can be reproduced.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

FIRST_VERSION = "ptbr-norm-1"
POLICY_VERSIONS = (FIRST_VERSION, "ptbr-norm-2", "ptbr-norm-3", "ptbr-norm-4")
POLICY_VERSION = POLICY_VERSIONS[-1]
# Each option a later version introduced, and that version: off under older versions and absent
# from their signatures, so an old version's signature and scores are the same as before it existed.
SINCE = {
    "roman_numerals": "ptbr-norm-2",
    "abbreviations": "ptbr-norm-2",
    "homophones": "ptbr-norm-2",
    "numeral_pieces": "ptbr-norm-2",
    "optional_words": "ptbr-norm-3",
    "list_labels": "ptbr-norm-3",
    "orthographic_variants": "ptbr-norm-3",
    "units": "ptbr-norm-3",
    "dates": "ptbr-norm-3",
    "clock_times": "ptbr-norm-3",
    "colloquial_negation": "ptbr-norm-3",
    "negation_restarts": "ptbr-norm-3",
    "paired_labels": "ptbr-norm-4",
}
LATER_OPTIONS = tuple(SINCE)


def at_least(version: str, since: str) -> bool:
    """Whether normalizer ``version`` is ``since`` or a later one."""
    return POLICY_VERSIONS.index(version) >= POLICY_VERSIONS.index(since)


@dataclass(frozen=True)
class NormalizationPolicy:
    """Options of the normalizer; build one through a preset and ``dataclasses.replace``.

    The options of ``LATER_OPTIONS`` default (None) to what the version's ``normalized`` preset does:
    on from the version that introduced them (``SINCE``), off and refused before it.
    ``colloquial_negation`` and ``negation_restarts`` are rules of the negation audit that changed
    with ptbr-norm-3; they live here so the version names every rule behind a score.
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
    optional_words: bool | None = None
    list_labels: bool | None = None
    orthographic_variants: bool | None = None
    units: bool | None = None
    dates: bool | None = None
    clock_times: bool | None = None
    colloquial_negation: bool | None = None
    negation_restarts: bool | None = None
    paired_labels: bool | None = None

    def __post_init__(self) -> None:
        if self.version not in POLICY_VERSIONS:
            raise ValueError(f"unknown normalizer version {self.version!r}; choose from {', '.join(POLICY_VERSIONS)}")
        if self.unicode_form not in ("NFC", "NFKC"):
            raise ValueError(f"unicode_form must be NFC or NFKC, not {self.unicode_form!r}")
        for name, since in SINCE.items():
            value = getattr(self, name)
            later = at_least(self.version, since)
            if value is None:
                object.__setattr__(self, name, later)
            elif value and not later:
                raise ValueError(f"{name} needs normalizer version {since} or later, not {self.version}")

    @classmethod
    def normalized(cls, version: str = POLICY_VERSION) -> NormalizationPolicy:
        """The default scoring policy: NFKC, lower case, no punctuation, equivalences, number words
        (from ptbr-norm-2 on: Roman numerals in context, abbreviations, the crase folded, numerals
        a recognizer split into word pieces read whole; from ptbr-norm-3 on: optional reference words,
        list labels, orthographic variants, units, dates, clock times and the colloquial negation; from
        ptbr-norm-4 on: a Roman numeral of the reference read the same on the hypothesis side)."""
        return cls(version=version)

    @classmethod
    def verbatim(cls, version: str = POLICY_VERSION) -> NormalizationPolicy:
        """Words as written: NFC and whitespace tokenization only (case, accents, punctuation kept).

        From ptbr-norm-3 on, a reference word in parentheses is still optional: the parentheses are
        the transcript's markup, not its text."""
        return cls(
            version=version,
            unicode_form="NFC",
            lowercase=False,
            strip_punctuation=False,
            split_hyphens=False,
            apply_equivalences=False,
            numbers_to_words=False,
            **{name: False for name in SINCE if name != "optional_words"},
        )

    @classmethod
    def accent_folded(cls, version: str = POLICY_VERSION) -> NormalizationPolicy:
        """The normalized policy with diacritics removed, for the accent-folded figure."""
        return replace(cls.normalized(version), accent_fold=True)

    def options(self) -> dict[str, Any]:
        """Every option this version has, except the version itself, as plain JSON-ready values."""
        data = asdict(self)
        del data["version"]
        for name, since in SINCE.items():
            if not at_least(self.version, since):
                del data[name]
        return data
