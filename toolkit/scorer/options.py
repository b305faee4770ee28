"""How to score (``ScoreOptions``): its own module so the scorer and its signature both read it
without importing each other. ``toolkit.scorer.options.ScoreOptions`` is the same class.
"""

from __future__ import annotations

import math
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

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


def _accepted(hint: Any) -> tuple[type, ...]:
    """The Python types an option annotated ``hint`` accepts (ints for floats, lists for tuples, str for paths)."""
    if typing.get_origin(hint) in (Union, types.UnionType):
        return tuple(t for arg in typing.get_args(hint) for t in _accepted(arg))
    if typing.get_origin(hint) is tuple:
        return (tuple, list)
    return {float: (int, float), Path: (str, os.PathLike), type(None): (type(None),)}.get(hint, (hint,))


# The types each ScoreOptions field accepts, read from its annotations (bool is refused where a number is meant).
_OPTION_TYPES = {name: _accepted(hint) for name, hint in typing.get_type_hints(ScoreOptions).items()}


def _type_name(value: Any) -> str:
    return type(value).__name__


def checked_options(given: Mapping[str, Any]) -> ScoreOptions:
    """ScoreOptions from option names and values, each checked against the field's annotation (the one
    schema of scoring options: the Python API, the experiment file's ``[scoring]`` table and the CLI
    use it); a TypeError or ValueError names the option."""
    options = dict(given)
    for name, value in options.items():
        expected = _OPTION_TYPES.get(name)
        if expected is None:
            raise TypeError(f"unknown scoring option {name!r}; choose from {', '.join(_OPTION_TYPES)}")
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            raise TypeError(
                f"option {name!r} must be {' or '.join(t.__name__ for t in expected)}, got {_type_name(value)}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"option {name!r} must be finite, got {value!r}")
    if "names" in options:
        names = tuple(options["names"])
        if not all(isinstance(n, str) for n in names):
            raise TypeError("option 'names' must hold strings only")
        options["names"] = names
    if options.get("lexicon") is not None:
        options["lexicon"] = Path(options["lexicon"])
    return ScoreOptions(**options)
