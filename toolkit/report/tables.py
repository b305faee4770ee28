"""The report's tables: the arms table in display form and every per-arm, per-recording and runtime table.

Each returns a ``pandas.DataFrame`` of display strings (shares as percentages to 0.1, counts over
their denominators), so the terminal, Markdown and HTML show the same cells.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit.core.json_records import record_to_json
from toolkit.runs.record import IMPORTED
from toolkit.scorer.metrics.timing import worst_onsets
from toolkit.scorer.stats import holm_adjusted

if TYPE_CHECKING:
    from toolkit.runs.score_files import Stability
    from toolkit.runs.scored import Evaluation

MAX_INSTANCES = 40
# What a runtime figure of an imported arm shows: its hypotheses were made elsewhere, at a cost never measured here.
NOT_MEASURED = "not measured (imported)"
# Every runtime and memory column of run.json's measurements, scores/runtime.csv and the report.
RUNTIME_COLUMNS = {
    "duration_s": "length of the recording (s)",
    "words": "hypothesis words the arm produced",
    "wall_s": "measured wall time of this result's work (decodes, VAD, enhancement), whenever it was computed; "
    "model loading excluded",
    "cpu_s": "measured CPU time of the same work (in its worker processes)",
    "peak_rss_mb": "largest peak resident memory (MB) of the processes that held this result's models, each "
    "over its model's load and each unit of this result it did (the recognizer's worker for each decode, the "
    "enhancer's or the VAD's for theirs): the kernel's high-water mark (VmHWM), as worker_peak_rss_mb; the "
    "process that runs the arms holds no model and is not in it",
    "real_time_factor": "wall_s / duration_s",
    "this_run_wall_s": "wall time this run spent on the result (0 when the stored result was reused)",
    "this_run_cpu_s": "CPU time this run spent on the result, worker processes included",
    "result": "computed in this run, reused whole from the run folder, or imported (hypotheses made elsewhere: "
    "their time and memory were never measured here, so those figures read 'not measured (imported)')",
    "units_computed": "decodes, VAD passes and enhancements this run computed for the result",
    "units_reused": "the same units this run took from the cache instead",
    "decoded_s": "seconds of audio inside the decoded segments (summed over the arm's recognizers)",
    "fallback_share": "share of decoded_s not accepted at the first temperature (fallback, or every "
    "temperature failed)",
    "fallback_dominated": "fallback_share above one half",
    "temperatures": "share of decoded_s per temperature the decoder reports",
    "unmapped_times": "recognizer times that could not be mapped to original time (words left untimed)",
    "seams": "window seams reconciled",
    "disagreements": "spans where two recognizers of the arm disagree",
}
# Runtime figures of the arms table (and "fallback-decoded audio" of the per-recording table).
SUMMARY_RUNTIME_COLUMNS = {
    "fallback-decoded audio": "share of the arm's decoded audio not accepted at the first temperature",
    "RTF": "the arm's summed wall_s over the summed duration_s of its recordings",
}
LOAD_COLUMNS = {
    "worker": "the recognizer, enhancer or VAD the worker process holds",
    "wall_s": "time to load the model in its worker (charged to no recording)",
    "ready_wall_s": "what the run waited for the worker: process start, imports and the load",
    "cpu_s": "CPU time of that load",
    "rss_after_load_mb": "the worker's peak resident memory up to its loaded model (start, imports and the load)",
    "worker_peak_rss_mb": "the worker's peak resident memory over the whole run, every arm's units included: "
    "the largest peak_rss_mb of the units it did",
}


def pct(value: Any) -> str:
    """A share as a percentage to 0.1; a value that rounds to zero never prints as "-0.0%"."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{_points(value):.1f}%"


def _points(value: float) -> float:
    """``100 * value`` rounded to 0.1, negative zero made zero (so "-0.0" never prints)."""
    return round(100 * value, 1) + 0.0


def signed_points(value: float) -> str:
    """A difference of shares in percentage points, signed, to 0.1."""
    return f"{_points(value):+.1f}"


def delta_with_interval(delta: float, low: float, high: float) -> str:
    """ "+1.2 [-0.3, +2.5]": a difference in points with its interval."""
    return f"{signed_points(delta)} [{signed_points(low)}, {signed_points(high)}]"


def number(value: Any, digits: int = 2, unit: str = "") -> str:
    """A number to ``digits`` decimals with its unit; "n/a" for a missing one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}{unit}"


def out_of(errors: Any, total: Any) -> str:
    """A count over its denominator, "3/41"."""
    return f"{int(errors)}/{int(total)}"


ARMS_COLUMNS = {
    "WER": "word error rate, (S + D + I) / N, micro-averaged over the split's recordings",
    "fallback-decoded audio": "share of the arm's decoded audio not accepted at the first temperature",
    "S/D/I/N": "substitutions, deletions, insertions and reference words",
    "CER": "character error rate under the same normalization",
    "verbatim WER": "WER before normalization (case and punctuation count): what the normalizer folds away",
    "ΔWER [95% CI]": "the arm's WER minus the baseline's, in points, with the paired bootstrap interval over "
    "recordings",
    "negation flips": "reference negations the arm lost or turned, over the reference negations",
    "negations inserted": "negations the arm wrote where the reference has none",
    "false-start repeats dropped (negation/name/number)": "immediate repeats of a critical word the arm wrote "
    "once: not counted as errors of the audits",
    "name errors": "reference names the arm got wrong, over the reference names",
    "number errors": "reference numbers the arm got wrong (by value), over the reference numbers",
    "short-word S+D": "words of at most the short-word length substituted or deleted, over those words",
    "invented/min in non-speech": "words written inside human-confirmed non-speech, per minute of it",
    "seam omissions/duplications/split words": "words lost, written twice, or cut across two windows and written "
    'as a piece beside the word ("a alínea") at the arm\'s window seams',
    "lost turns": "reference turns the baseline recognized (at least half of the turn's words right) and the arm "
    "lost entirely (not one word right), over the turns the baseline recognized",
    "VAD recall": "share of annotated speech the arm's VAD kept",
    "onset |err| p95": "95th percentile of the absolute onset error of matched timed reference words",
    "RTF": "the arm's summed wall_s over the summed duration_s of its recordings",
    "CPU RTF": "the arm's summed cpu_s (every core) over the summed duration_s: closer to the work done than the "
    "wall time on a loaded machine",
}


def arms_table(evaluation: Evaluation) -> pd.DataFrame:
    """One row per arm over the whole split (stratum "all"), in display form."""
    rows = []
    runtime = evaluation.runtime
    for _, agg in evaluation.aggregate[evaluation.aggregate["stratum"] == "all"].iterrows():
        arm = agg["arm"]
        comparison = evaluation.comparisons.get(arm)
        spent = runtime[runtime["arm"] == arm] if len(runtime) else runtime
        audio = spent["duration_s"].sum() if len(spent) else 0.0
        rtf = spent["wall_s"].sum() / audio if audio else None
        cpu_rtf = spent["cpu_s"].sum() / audio if audio else None
        imported = len(spent) > 0 and bool(spent["wall_s"].isna().all())  # decoded elsewhere: nothing measured
        rows.append(
            {
                "arm": arm,
                "WER": pct(agg["wer"]),
                "fallback-decoded audio": _fallback_share(spent),
                "S/D/I/N": f"{agg['substitutions']}/{agg['deletions']}/{agg['insertions']}/{agg['ref_words']}",
                "CER": pct(agg["cer"]),
                "verbatim WER": pct(agg["verbatim_wer"]),
                "ΔWER [95% CI]": "reference"
                if comparison is None
                else delta_with_interval(comparison.delta, comparison.ci_low, comparison.ci_high),
                "negation flips": out_of(agg["negation_flipped"], agg["negation_ref_count"]),
                "negations inserted": int(agg["negation_inserted"]),
                "false-start repeats dropped (negation/name/number)": (
                    f"{int(agg['negation_repetition_dropped'])}/{int(agg['names_repetition_dropped'])}/"
                    f"{int(agg['numbers_repetition_dropped'])}"
                ),
                "name errors": out_of(agg["names_errors"], agg["names_ref_count"]),
                "number errors": out_of(agg["numbers_errors"], agg["numbers_ref_count"]),
                "short-word S+D": out_of(agg["short_substituted"] + agg["short_deleted"], agg["short_ref_count"]),
                "invented/min in non-speech": number(agg.get("nonspeech_per_minute")),
                "seam omissions/duplications/split words": _seam_counts(agg),
                "lost turns": out_of(agg["lost_turns"], agg["lost_turns_denominator"]) if "lost_turns" in agg else "—",
                "VAD recall": pct(agg.get("vad_recall"))
                if "vad_recall" in agg and not pd.isna(agg.get("vad_recall"))
                else "—",
                "onset |err| p95": number(agg.get("onset_abs_p95_s"), 2, " s"),
                "RTF": NOT_MEASURED if imported else number(rtf, 3),
                "CPU RTF": NOT_MEASURED if imported else number(cpu_rtf, 3),
            }
        )
    return pd.DataFrame.from_records(rows)


def runtime_table(evaluation: Evaluation) -> pd.DataFrame:
    """The per-recording runtime rows (RUNTIME_COLUMNS), an imported arm's unmeasured figures said so, not blank."""
    runtime = evaluation.runtime
    table = runtime[[c for c in ("arm", "recording", *RUNTIME_COLUMNS) if c in runtime]].astype(object)
    if "result" in table:
        figures = [c for c in ("wall_s", "cpu_s", "peak_rss_mb", "real_time_factor") if c in table]
        table.loc[table["result"] == IMPORTED, figures] = NOT_MEASURED
    return table


def _seam_counts(agg: Any) -> str:
    """ "omissions/duplications/split words" of an arm's seams; "—" for an arm without seams (split words "—"
    in scores made before they were counted)."""
    if "seam_omissions" not in agg or pd.isna(agg.get("seam_omissions")):
        return "—"
    split = agg.get("seam_split_words")
    return f"{int(agg['seam_omissions'])}/{int(agg['seam_duplications'])}/" + (
        "—" if split is None or pd.isna(split) else str(int(split))
    )


def _fallback_share(rows: pd.DataFrame) -> str:
    """Decoded audio not accepted at the first temperature, over ``rows`` (runtime rows)."""
    if not len(rows) or "decoded_s" not in rows or not rows["decoded_s"].sum():
        return "n/a"
    return pct((rows["fallback_share"].fillna(0) * rows["decoded_s"]).sum() / rows["decoded_s"].sum())


def render_text_table(evaluation: Evaluation) -> str:
    """The arms table as fixed-width text for the terminal, with the signature under it."""
    table = arms_table(evaluation)
    columns = [
        "arm",
        "WER",
        "fallback-decoded audio",
        "S/D/I/N",
        "CER",
        "ΔWER [95% CI]",
        "negation flips",
        "name errors",
        "number errors",
        "invented/min in non-speech",
        "seam omissions/duplications/split words",
        "lost turns",
        "VAD recall",
        "onset |err| p95",
        "RTF",
        "CPU RTF",
    ]
    text = table[columns].to_string(index=False)
    warnings = {c.warning for c in evaluation.comparisons.values() if c.warning}
    notes = "".join(f"\nnote: {w}" for w in sorted(warnings))
    failed = "".join(f"\nFAILED: {line}" for line in failure_lines(evaluation))
    return f"{text}{notes}{failed}\nsignature: {evaluation.signature}"


def failure_lines(evaluation: Evaluation) -> list[str]:
    """One line per (arm, recording) a stage failed on, saying how it was scored."""
    return [f"{f.error} (scored as no words: every reference word a deletion)" for f in evaluation.arm_failures]


def paired_tests_table(evaluation: Evaluation) -> pd.DataFrame:
    """Each arm against the reference arm: WERs, the reduction's interval, and the paired tests' p-values, the
    Wilcoxon one also Holm-adjusted across the arms compared (toolkit.scorer.stats.holm_adjusted)."""
    holm = holm_adjusted({arm: c.wilcoxon_p for arm, c in evaluation.comparisons.items()})
    rows = []
    for arm, c in evaluation.comparisons.items():
        low, high = c.reduction_ci
        rows.append(
            {
                "arm": arm,
                "recordings": c.recordings,
                f"{evaluation.reference_arm} WER": pct(c.baseline_wer),
                "arm WER": pct(c.challenger_wer),
                "WER reduction (points)": signed_points(-c.delta),
                f"{int(100 * c.confidence)}% CI of reduction": f"[{signed_points(low)}, {signed_points(high)}]",
                "Wilcoxon p": number(c.wilcoxon_p, 3),
                f"Wilcoxon p, Holm ({len(holm)} arms)": number(holm[arm], 3),
                "sign test p": number(c.sign_test_p, 3),
                "warning": c.warning or "",
            }
        )
    return pd.DataFrame.from_records(rows)


def per_recording_table(evaluation: Evaluation) -> pd.DataFrame:
    """One row per arm and recording; when any reference's word times were derived by forced alignment, a
    column says which timing figures stand on derived times and how accurate those are."""
    per = evaluation.per_recording
    runtime = evaluation.runtime
    shares = (
        runtime.set_index(["arm", "recording"])["fallback_share"]
        if len(runtime) and "fallback_share" in runtime
        else pd.Series(dtype=float)
    )
    table = pd.DataFrame(
        {
            "arm": per["arm"],
            "recording": per["recording_id"],
            "strata": per["strata"],
            "WER": per["wer"].map(pct),
            "fallback-decoded audio": [pct(shares.get((a, r))) for a, r in zip(per["arm"], per["recording_id"])],
            "S/D/I/N": [
                f"{s}/{d}/{i}/{n}"
                for s, d, i, n in zip(per["substitutions"], per["deletions"], per["insertions"], per["ref_words"])
            ],
            "negation flips": [out_of(a, b) for a, b in zip(per["negation_flipped"], per["negation_ref_count"])],
            "negation repeats dropped": per["negation_repetition_dropped"],
            "invented words in non-speech": per["nonspeech_invented_words"],
            "onset |err| median": per["onset_abs_median_s"].map(lambda v: number(v, 2, " s")),
            "drift s/min": per["drift_s_per_min"].map(lambda v: number(v, 3)),
        }
    )
    derived = [_derived(evaluation, arm, recording) for arm, recording in zip(per["arm"], per["recording_id"])]
    if any(derived):
        table["reference word times"] = [d or "marked" for d in derived]
    return table


def _derived(evaluation: Evaluation, arm: str, recording: str) -> str | None:
    """``derived (forced alignment, p95 X s)`` when the recording's reference word times were derived."""
    score = evaluation.scores.get(arm, {}).get(recording)
    return None if score is None else score.timing.derived_word_times


def fallback_table(evaluation: Evaluation) -> pd.DataFrame:
    """Recordings where temperature fallback decided most of the decoded audio, beside their WER."""
    runtime = evaluation.runtime
    if not len(runtime) or "fallback_dominated" not in runtime:
        return pd.DataFrame()
    flagged = runtime[runtime["fallback_dominated"].fillna(False).astype(bool)]
    per = evaluation.per_recording.set_index(["arm", "recording_id"])
    return pd.DataFrame.from_records(
        [
            {
                "arm": r.arm,
                "recording": r.recording,
                "WER": pct(per.loc[(r.arm, r.recording), "wer"]),
                "decoded": number(r.decoded_s, 1, " s"),
                "fallback-decoded audio": pct(r.fallback_share),
                "temperatures": r.temperatures,
                "flag": "fallback dominated",
            }
            for r in flagged.itertuples()
        ]
    )


def fallback_notes(evaluation: Evaluation) -> str:
    """How each recognizer the run's arms used falls back, and whether any (arm, recording) was mostly fallback."""
    config = evaluation.record.config
    used = {name for arm in config.arms for name in config.recognizers_of(arm)}
    lines = [
        f"- `{name}`: "
        + (
            "an external command: how it decodes is its own, and it reports no segments"
            if "temperature" not in r["decoding"]
            else f"batched decoding, no fallback: one temperature {r['decoding']['temperature'][0]}"
            if r.get("backend") == "whisperx"
            else f"sequential, temperatures {r['decoding']['temperature']}"
        )
        for name, r in config.recognizers.items()
        if name in used
    ]
    flagged = (
        "listed below: every (arm, recording)"
        if len(fallback_table(evaluation))
        else "none in this run: no (arm, recording)"
    )
    return "\n".join(
        [
            *lines,
            f"- {flagged} where more than half the decoded audio was "
            "not accepted at the first temperature (its text is mostly a seeded sample or the "
            "best of failed attempts); per-segment figures are in `outputs/<arm>/<rec>.json`",
        ]
    )


def glossary(columns: dict[str, str]) -> str:
    return "\n".join(f"- `{name}`: {meaning}" for name, meaning in columns.items())


# The arms table's two kinds of empty cell.
EMPTY_CELLS = (
    "- `—`: the figure does not apply to the arm (seams without windows, VAD recall without VAD); "
    "`n/a`: it applies but cannot be measured here (no timed words, no confirmed non-speech, ...)"
)


def loads_table(evaluation: Evaluation) -> pd.DataFrame:
    record = evaluation.record
    return pd.DataFrame.from_records(
        [{"worker": f"recognizer {name}", **record_to_json(load)} for name, load in record.recognizer_loads.items()]
        + [{"worker": name, **record_to_json(load)} for name, load in record.stage_loads.items()]
    )


def nodes_table(evaluation: Evaluation) -> pd.DataFrame:
    """Per host of a cluster run: its workers and jobs, recordings, units computed, CPU time, peak memory and the
    models' sha256 verified there (empty for a run in one process)."""
    nodes = (evaluation.record.parallel or {}).get("nodes", {})
    return pd.DataFrame.from_records(
        [
            {
                "host": host,
                "workers": len(node.get("workers", [])),
                "slurm_jobs": ", ".join(node.get("slurm_jobs", [])),
                "recordings": len(node.get("recordings", [])),
                "units_computed": node.get("units_computed", 0),
                "cpu_s": node.get("cpu_s", 0.0),
                "peak_rss_mb": node.get("peak_rss_mb", 0.0),
                "models_sha256": ", ".join(
                    f"{name} {digest[:12]}" for name, digest in node.get("models_sha256", {}).items()
                ),
            }
            for host, node in nodes.items()
        ]
    )


def strata_table(evaluation: Evaluation) -> pd.DataFrame:
    agg = evaluation.aggregate[evaluation.aggregate["stratum"] != "all"]
    return pd.DataFrame(
        {
            "arm": agg["arm"],
            "stratum": agg["stratum"],
            "recordings": agg["recordings"],
            "WER": agg["wer"].map(pct),
            "N": agg["ref_words"],
            "negation flips": [out_of(a, b) for a, b in zip(agg["negation_flipped"], agg["negation_ref_count"])],
        }
    )


def critical_instances_table(evaluation: Evaluation) -> pd.DataFrame:
    """Critical-word events (negation flips and insertions, name and number errors) for review."""
    rows = []
    for arm, by_recording in evaluation.scores.items():
        for recording, score in by_recording.items():
            audits = score.to_json()["audits"]
            for audit in ("negation", "names", "numbers"):
                for item in audits[audit]["instances"]:
                    rows.append(
                        {
                            "arm": arm,
                            "recording": recording,
                            "audit": audit,
                            "kind": item["kind"],
                            "time": number(item["time"], 2, " s"),
                            "reference": item["reference"],
                            "hypothesis": item["hypothesis"] or "∅",
                        }
                    )
    return pd.DataFrame.from_records(rows[:MAX_INSTANCES])


def worst_onsets_table(evaluation: Evaluation) -> pd.DataFrame:
    """Each arm's largest onset errors, times in seconds to the hundredth (where a p95 comes from); a column says
    which stand on reference times derived by forced alignment, when any do."""
    rows = worst_onsets(
        {arm: {rec: score.timing for rec, score in by_rec.items()} for arm, by_rec in evaluation.scores.items()}
    )
    table = pd.DataFrame.from_records(
        [
            {
                "arm": r["arm"],
                "recording": r["recording"],
                "reference": r["reference"],
                "reference onset": number(r["ref_onset_s"], 2, " s"),
                "hypothesis onset": number(r["hyp_onset_s"], 2, " s"),
                "error": number(r["onset_error_s"], 2, " s"),
            }
            for r in rows
        ]
    )
    derived = [_derived(evaluation, r["arm"], r["recording"]) for r in rows]
    if any(derived):
        table["reference word times"] = [d or "marked" for d in derived]
    return table


def alignment_links(evaluation: Evaluation) -> str:
    """A Markdown list linking each arm's per-recording alignment pages (relative to the run folder)."""
    from toolkit.report.alignment_pages import page_path

    root = evaluation.folder.root
    lines = []
    for arm, by_recording in evaluation.scores.items():
        links = [
            f"[{recording}]({page_path(root, arm, recording).relative_to(root).as_posix()})"
            for recording in by_recording
            if page_path(root, arm, recording).exists()
        ]
        if links:
            lines.append(f"- `{arm}`: {', '.join(links)}")
    return "\n".join(lines)


def stability_table(data: Stability) -> pd.DataFrame:
    """Per arm, from ``scores/stability.json``: WER and ΔWER here and their range over the dithered reruns."""
    rows = []
    for arm in data.arms:
        wers = [arm.wer, *arm.rerun_wers]
        row = {"arm": arm.arm, "WER": pct(arm.wer), "WER over reruns": f"{pct(min(wers))} – {pct(max(wers))}"}
        if arm.delta is not None:
            deltas = [arm.delta, *arm.rerun_deltas]
            low, high = arm.ci_low, arm.ci_high
            row.update(
                {
                    "ΔWER [95% interval]": delta_with_interval(arm.delta, low, high)
                    if low is not None and high is not None
                    else signed_points(arm.delta),
                    "ΔWER over reruns": f"{signed_points(min(deltas))} – {signed_points(max(deltas))}",
                    "direction": " / ".join(arm.directions),
                    "flips": "yes" if arm.flips else "no",
                }
            )
        rows.append(row)
    return pd.DataFrame.from_records(rows).fillna("")
