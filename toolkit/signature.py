"""A sacrebleu-style scoring signature: everything a number depends on, as text, fields and a hash.

It names the normalizer version and options of every policy, the sha256 of every lexicon and
equivalence table, the alignment engine and costs, the collar, the bootstrap seed and sample
count, and the versions of the libraries that compute the figures.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from typing import TYPE_CHECKING, Any

from toolkit import __version__
from toolkit.align import COSTS
from toolkit.normalize.registry import POLICIES, normalizer
from toolkit.store import config_hash

if TYPE_CHECKING:
    from toolkit.scoring import ScoreOptions

LIBRARIES = ("rapidfuzz", "jiwer", "numpy", "scipy", "statsmodels", "pandas", "num2words")


@dataclass(frozen=True)
class Signature:
    """``text`` for humans (printed with every result), ``fields`` for tables, ``hash`` to compare."""

    text: str
    fields: dict[str, Any]
    hash: str


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


@lru_cache(maxsize=None)
def scorer_signature(options: "ScoreOptions") -> Signature:
    """The signature of scoring with ``options`` in this environment."""
    normalizers = {name: normalizer(name, options.norm_version, options.lexicon).signature() for name in POLICIES}
    libraries = {name: _version(name) for name in LIBRARIES}
    libraries["python"] = platform.python_version()
    fields: dict[str, Any] = {
        "toolkit": __version__,
        "policy": options.policy,
        "audit_policy": options.audit_policy,
        "normalizers": normalizers,
        "alignment": {"engine": "rapidfuzz.distance.Levenshtein", "costs": COSTS,
                      "ties": "rapidfuzz backtrace: deletion, then substitution, then insertion"},
        "collar_s": options.collar,
        "time_constrained": options.time_constrained,
        "short_word_max_letters": options.short_word_max_letters,
        "seam_margin_s": options.seam_margin_s,
        "bootstrap": {"samples": options.bootstrap_samples, "seed": options.bootstrap_seed},
        "libraries": libraries,
    }
    digest = config_hash(fields)[:12]
    primary = normalizers[options.policy]
    text = "|".join([
        f"ablate-score:{__version__}",
        f"policy:{options.policy}",
        f"norm:{primary.get('version', '?')}@{config_hash(primary.get('options', {}))[:8]}",
        f"lex:{config_hash(primary.get('lexicons', {}))[:8]}",
        *([f"user-lex:{primary['user_lexicon']['sha256'][:8]}"] if "user_lexicon" in primary else []),
        "align:lev-S1D1I1",
        f"collar:{options.collar:g}",
        f"tc:{'yes' if options.time_constrained else 'no'}",
        f"short:{options.short_word_max_letters}",
        f"seam:{options.seam_margin_s:g}",
        f"boot:{options.bootstrap_samples}@{options.bootstrap_seed}",
        *(f"{k}:{v}" for k, v in libraries.items()),
        f"hash:{digest}",
    ])
    return Signature(text=text, fields={**fields, "hash": digest}, hash=digest)
