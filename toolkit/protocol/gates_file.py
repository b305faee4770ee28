"""The gates file (TOML; template ``protocol/gates.toml``, printed by ``ablate challenger template``): every
pre-registered gate, what it measures, which way it passes, and its threshold.

Every gate is written out with its threshold; a gate is skipped only when declared ``applicable = false`` with
a ``reason``. Each gate's direction is fixed here (``SPECS``), never in the file, so a threshold cannot be
turned into its opposite. Format 2 adds one gate measured after the holdout: whether the other gates' verdict
survives the holdout re-decoded under inaudible dither (``toolkit.protocol.stability``); a format-1 file
(frozen before it existed) reads it as not pre-registered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.core.data_files import parse_toml
from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.core.text import read_text

FORMAT = 2
FORMATS = (1, 2)  # a gates file frozen with an earlier toolkit stays readable
DITHER_GATE = "verdict_flips_under_dither"
WER_GATE = "wer_reduction_points"  # the gate a holdout's power is planned for (toolkit.protocol.power_check)
MAX_RERUNS = 100  # the most dithered reruns a stability check (and this gate) may ask for
# Package data, so an installed wheel has it (in a checkout, a link to the written protocol's protocol/gates.toml).
TEMPLATE = Path(__file__).resolve().parent / "gates.toml"


@dataclass(frozen=True)
class GateSpec:
    """What a gate measures and which way it passes: ``<=``, ``>=`` or ``|x| <=`` its threshold."""

    name: str
    measures: str
    comparison: str
    count: bool  # an integer count of failures (the zero-failure bound applies at 0)
    since: int = 1  # the gates-file format that introduced it
    lowest: float | None = None  # the least value the measure can take: a "<=" threshold below it passes nothing


SPECS = (
    GateSpec("new_negation_errors", "negation flips and insertions the baseline did not make", "<=", True),
    GateSpec("new_name_errors", "name occurrences the baseline got right and the challenger got wrong", "<=", True),
    GateSpec("new_number_errors", "number occurrences the baseline got right and the challenger got wrong", "<=", True),
    GateSpec(
        "lost_speech_turns",
        "reference turns the baseline recognized (>= half the words) and the challenger deleted entirely",
        "<=",
        True,
    ),
    GateSpec("seam_omissions", "reference words the challenger omitted near a window seam", "<=", True),
    GateSpec("seam_duplications", "words the challenger duplicated near a window seam", "<=", True),
    GateSpec("vad_speech_recall", "fraction of annotated speech duration the challenger's VAD kept", ">=", False),
    GateSpec("onset_p95_s", "p95 absolute word onset error of the challenger, seconds", "<=", False, lowest=0.0),
    GateSpec(
        "drift_s_per_min", "largest per-recording |onset drift| of the challenger, seconds per minute", "|x| <=", False
    ),
    GateSpec(
        WER_GATE,
        "lower bound of the paired bootstrap interval of the WER reduction, percentage points",
        ">=",
        False,
    ),
    GateSpec(
        DITHER_GATE,
        "holdout reruns under inaudible dither (seeds 1 to reruns) whose verdict of the other gates differs",
        "<=",
        True,
        since=2,
    ),
)
SPEC_BY_NAME = {spec.name: spec for spec in SPECS}


@dataclass(frozen=True)
class Gate:
    """One declared gate: its threshold, or ``applicable = false`` with the reason."""

    name: str
    applicable: bool
    threshold: float | None
    reason: str = ""
    reruns: int | None = None  # the dither gate's pre-registered number of reruns


@dataclass(frozen=True)
class GatesFile:
    """A gates file as read: where it is, its sha256 (what a challenger freezes) and every gate by name."""

    path: Path
    sha256: str
    gates: dict[str, Gate]


def load_gates(path: str | Path) -> GatesFile:
    """Read and strictly validate a gates file; any problem is one line naming the file and the key."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "gates file not found")
    raw = parse_toml(read_text(path), path)
    unknown = sorted(set(raw) - {"format", *SPEC_BY_NAME})
    if unknown:
        raise InputError(path, f"unknown key '{unknown[0]}'; gates are {', '.join(SPEC_BY_NAME)}")
    if "format" not in raw:
        raise InputError(path, f"missing key 'format' (this toolkit reads format = {FORMAT})")
    if raw["format"] not in FORMATS or isinstance(raw["format"], bool):
        raise InputError(path, f"key 'format' must be {' or '.join(map(str, FORMATS))}, not {raw['format']!r}")
    gates = {}
    for spec in SPECS:
        if spec.since > raw["format"]:
            if spec.name in raw:
                raise InputError(path, f"key '{spec.name}' is a gate of format = {spec.since}, not {raw['format']}")
            reason = f"not pre-registered: a format-{raw['format']} gates file has no such gate"
            gates[spec.name] = Gate(spec.name, False, None, reason)
            continue
        if spec.name not in raw:
            raise InputError(
                path,
                f"missing key '{spec.name}': every gate must be written out "
                f"(or declared applicable = false with a reason)",
            )
        gates[spec.name] = _gate(path, spec, raw[spec.name])
    return GatesFile(path, sha256_file(path), gates)


def _gate(path: Path, spec: GateSpec, table: Any) -> Gate:
    where = spec.name
    if not isinstance(table, dict):
        raise InputError(path, f"key '{where}' must be a table [{where}], not {table!r}")
    keys = ("applicable", "threshold", "reason", *(("reruns",) if spec.name == DITHER_GATE else ()))
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise InputError(path, f"unknown key '{where}.{unknown[0]}'; this gate has {', '.join(keys)}")
    if "applicable" not in table:
        raise InputError(path, f"missing key '{where}.applicable' (true, or false with a reason)")
    applicable = table["applicable"]
    if not isinstance(applicable, bool):
        raise InputError(path, f"key '{where}.applicable' must be true or false, not {applicable!r}")
    reason = table.get("reason", "")
    if not isinstance(reason, str):
        raise InputError(path, f"key '{where}.reason' must be a string, not {reason!r}")
    if not applicable:
        if not reason.strip():
            raise InputError(path, f"missing key '{where}.reason': a gate is not applicable only with a reason")
        threshold = table.get("threshold")
    else:
        if "threshold" not in table:
            raise InputError(path, f"missing key '{where}.threshold'")
        threshold = table["threshold"]
    if threshold is not None:
        if spec.count and (isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0):
            raise InputError(path, f"key '{where}.threshold' must be a non-negative integer count, not {threshold!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
            raise InputError(path, f"key '{where}.threshold' must be a number, not {threshold!r}")
        if spec.name == "vad_speech_recall" and not 0 <= threshold <= 1:
            raise InputError(path, f"key '{where}.threshold' must be a fraction in [0, 1], not {threshold!r}")
        if spec.comparison == "|x| <=" and threshold < 0:
            raise InputError(path, f"key '{where}.threshold' must be >= 0, not {threshold!r}")
        if spec.comparison == "<=" and spec.lowest is not None and threshold < spec.lowest:
            raise InputError(
                path,
                f"key '{where}.threshold' must be >= {spec.lowest:g}, not {threshold!r}: {spec.name} is never below "
                f"{spec.lowest:g}, so no value could pass",
            )
    reruns = _reruns(path, table) if spec.name == DITHER_GATE and applicable else None
    return Gate(spec.name, applicable, None if threshold is None else float(threshold), reason.strip(), reruns)


def _reruns(path: Path, table: dict[str, Any]) -> int:
    """The dither gate's ``reruns``: how many dithered reruns of the holdout the verdict must survive."""
    where = f"{DITHER_GATE}.reruns"
    if "reruns" not in table:
        raise InputError(path, f"missing key '{where}' (how many dithered reruns of the holdout, 1 to {MAX_RERUNS})")
    reruns = table["reruns"]
    if isinstance(reruns, bool) or not isinstance(reruns, int) or not 1 <= reruns <= MAX_RERUNS:
        raise InputError(path, f"key '{where}' must be a whole number from 1 to {MAX_RERUNS}, not {reruns!r}")
    if table.get("threshold", 0) > reruns:
        raise InputError(path, f"key '{DITHER_GATE}.threshold' allows more flips than there are reruns ({reruns})")
    return reruns
