"""A sacrebleu-style scoring signature: everything a number depends on, as text, fields and a hash.

It names the normalizer version and options of every policy, the sha256 of every lexicon and
equivalence table, the alignment engine and costs, the collar, the bootstrap seed and sample
count, the versions of the libraries that compute the figures, and a digest of the scoring code
itself (``toolkit.scorer.code_digest``), so two equal signatures always mean the same scoring.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolkit import __version__
from toolkit.core.files import config_hash
from toolkit.scorer.align import COSTS
from toolkit.scorer.code_digest import COVERED, scoring_code_digest
from toolkit.scorer.metrics.seam_errors import LOCATION_RULE as SEAM_LOCATION_RULE
from toolkit.scorer.normalize.registry import POLICIES, file_stamp, normalizer

if TYPE_CHECKING:
    from toolkit.scorer.options import ScoreOptions

OPTIONAL_RULE = (
    "a reference word in parentheses may be left out at no cost and is then scored as a hit (sclite -D); "
    "present, it matches or is substituted like any word (toolkit.scorer.optional_align)"
)
LIBRARIES = ("rapidfuzz", "jiwer", "numpy", "scipy", "statsmodels", "pandas", "num2words")


@dataclass(frozen=True)
class Signature:
    """``text`` for humans (printed with every result), ``fields`` for tables, ``hash`` to compare.

    Read-only: ``fields`` is an immutable mapping (``to_json()`` gives a plain copy), and one
    signature is shared by every score made with the same options.
    """

    text: str
    fields: Mapping[str, Any]
    hash: str
    parts: tuple[tuple[str, str, str], ...] = ()

    def format(self, short: bool = False) -> str:
        """The text, or (``short``, like sacrebleu's) abbreviated keys without library versions.

        The hash at the end still covers every field, library versions included.
        """
        if not short:
            return self.text
        return "|".join(f"{abbreviation}:{value}" for _, abbreviation, value in self.parts if abbreviation)

    def to_json(self) -> dict[str, Any]:
        """The fields as plain (JSON-serializable) dictionaries."""
        return _thawed(self.fields)

    def __str__(self) -> str:
        return self.text


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _thawed(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def scorer_signature(options: ScoreOptions) -> Signature:
    """The signature of scoring with ``options`` in this environment (its user lexicon as it is now)."""
    return _signature(options, file_stamp(options.lexicon))


@cache
def _signature(options: ScoreOptions, lexicon_stamp: tuple[int, int] | None) -> Signature:
    normalizers = {name: normalizer(name, options.normalizer, options.lexicon).signature() for name in POLICIES}
    libraries = {name: _version(name) for name in LIBRARIES}
    libraries["python"] = platform.python_version()
    optional = any(n["options"].get("optional_words") for n in normalizers.values())
    alignment: dict[str, Any] = {
        "engine": "rapidfuzz.distance.Levenshtein",
        "costs": COSTS,
        "ties": "rapidfuzz backtrace: deletion, then substitution, then insertion",
    }
    if optional:
        alignment["optional_words"] = OPTIONAL_RULE
    fields: dict[str, Any] = {
        "toolkit": __version__,
        "policy": options.policy,
        "audit_policy": options.audit_policy,
        "normalizers": normalizers,
        "alignment": alignment,
        "collar_s": options.collar,
        "time_constrained": options.time_constrained,
        "short_word_max_letters": options.short_word_max_letters,
        "seam_margin_s": options.seam_margin_s,
        "seam_omission_location": SEAM_LOCATION_RULE,
        "bootstrap": {"samples": options.bootstrap_samples, "seed": options.bootstrap_seed},
        "libraries": libraries,
        "code": {"sha256": scoring_code_digest(), "covers": [f"toolkit/{folder}" for folder in COVERED]},
    }
    digest = config_hash(fields)[:12]
    primary = normalizers[options.policy]
    # (key, short key or "" when left out of the short form, value), in the text's order.
    parts: list[tuple[str, str, str]] = [
        ("ablate-score", "v", __version__),
        ("policy", "p", options.policy),
        ("norm", "n", f"{primary.get('version', '?')}@{config_hash(primary.get('options', {}))[:8]}"),
        ("lex", "lex", config_hash(primary.get("lexicons", {}))[:8]),
        *([("user-lex", "ulex", primary["user_lexicon"]["sha256"][:8])] if "user_lexicon" in primary else []),
        *(
            [("allow-critical", "crit", str(len(primary["user_lexicon"]["allow_critical"])))]
            if "allow_critical" in primary.get("user_lexicon", {})
            else []
        ),
        ("align", "a", "lev-S1D1I1" + ("+opt0" if optional else "")),
        ("collar", "c", f"{options.collar:g}"),
        ("tc", "tc", "yes" if options.time_constrained else "no"),
        ("short", "sw", str(options.short_word_max_letters)),
        ("seam", "sm", f"{options.seam_margin_s:g}"),
        ("boot", "b", f"{options.bootstrap_samples}@{options.bootstrap_seed}"),
        ("code", "src", fields["code"]["sha256"][:8]),
        *((k, "", str(v)) for k, v in libraries.items()),
        ("hash", "h", digest),
    ]
    text = "|".join(f"{key}:{value}" for key, _, value in parts)
    return Signature(text=text, fields=_frozen({**fields, "hash": digest}), hash=digest, parts=tuple(parts))
