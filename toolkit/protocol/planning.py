"""What a freeze recorded about the holdout's power and the gates' error rates, for the verdict to quote.

The figures live in the audit log's "challenger frozen" entry (toolkit.protocol.challenger): once chained
there, a verdict quotes the figures the study was planned with, not ones computed after the holdout opened.
"""

from __future__ import annotations

from typing import Any

from toolkit.scorer.power import power_text


def planning(frozen_entry: dict[str, Any]) -> dict[str, Any]:
    """The freeze's power plan, calibration (None when none was measured) and whether an underpowered holdout was
    allowed; the whole entry is the log's, so older entries without these keys read as not planned."""
    power = frozen_entry.get("power") or {"estimated": False, "reason": "frozen before power was planned"}
    return {
        "power": power,
        "calibration": frozen_entry.get("calibration"),
        "underpowered_allowed": bool(frozen_entry.get("underpowered_allowed", False)),
        "minimum_detectable_effect_points": power.get("minimum_detectable_effect_points"),
    }


def planning_text(planned: dict[str, Any]) -> str:
    """The lines a freeze prints and a verdict repeats, from :func:`planning`."""
    lines = [power_text(planned["power"])]
    arms = planned["power"].get("arms_compared", 0)
    if arms > 1:
        lines.append(
            f"the challenger was chosen among {arms} arms on the tuning split: its tuning gain is optimistic (the best "
            "of several looks better than it is); the holdout's figure is the one to quote"
        )
    if planned["underpowered_allowed"]:
        lines.append(
            "underpowered: the holdout is too small to detect the gates' own WER threshold; the freeze was "
            "allowed explicitly (--allow-underpowered), so a RETAIN BASELINE here says little"
        )
    calibration = planned["calibration"]
    lines.append(
        calibration_text(calibration)
        if calibration
        else "calibration: not measured for these gates before the freeze (ablate calibrate EXP --gates GATES.toml)"
    )
    return "\n".join(lines)


def calibration_text(data: dict[str, Any]) -> str:
    """A few lines from a calibration's JSON (as written and as the audit log keeps it)."""
    bound = data["false_promote_upper95"]
    forced = [f"with CTranslate2 forced to {isa}" for isa in data.get("isa_runs", {})]
    decodes = " and ".join(["under inaudible dither", *forced])
    lines = [
        f"calibration of the gates {data['gates_sha256'][:12]}… for {data['challenger']!r} ({data['tuning_run']}, "
        f"{data['resamples']} holdouts of {data['holdout_recordings']} recording(s) resampled from the tuning split "
        f"{data.get('resampling', 'with replacement')}): the gates promoted {data['false_promotes']} of "
        f"{data['aa_trials']} A/A pairs (the baseline against itself decoded again {decodes}, both ways round): "
        f"false-PROMOTE rate {data['false_promote_rate']:.1%}, exact one-sided 95% upper bound {bound:.1%}"
    ]
    if data.get("resampling") == "with replacement":
        lines.append(
            "  the tuning split holds no more recordings than the holdout, so resamples repeat recordings; a "
            "repeated recording narrows the bootstrap interval, which inflates both the false-PROMOTE rate and the "
            "power below"
        )
    failing = sorted(((share, name) for name, share in data["gate_failures"].items() if share > 0), reverse=True)
    if failing:
        lines.append("  A/A failures by gate: " + ", ".join(f"{name} {share:.0%}" for share, name in failing))
    for gain in data["power"]:
        if gain["probability"] is None:
            lines.append(
                f"  planted gain {gain['effect_points']:g} points: not plantable (the baseline's WER is lower)"
            )
            continue
        flip = gain["with_negation_flip"]
        lines.append(
            f"  planted gain {gain['effect_points']:g} points: promoted {gain['probability']:.0%}"
            + ("" if flip is None else f"; with one new negation error {flip:.0%} (caught {1 - flip:.0%})")
        )
    return "\n".join(lines)
