"""The run report: a terminal table, Markdown and a self-contained HTML page with plots.

A researcher reads it without the app: the arms table (WER with S/D/I/N, CER, critical-word
audits with their denominators, non-speech, VAD recall, timing, runtime), paired
comparisons with the baseline (bootstrap interval, Wilcoxon and sign tests, small-sample
warnings), strata, per-recording figures, drift, seams, critical-word instances and the
scorer signature that reproduces every number.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit.core.files import atomic_write_text
from toolkit.scorer.metrics.seam_flags import TIMING_TOLERANCE_S, flag_precision
from toolkit.scorer.metrics.timing import WORST_ONSETS, worst_onsets

if TYPE_CHECKING:
    from toolkit.runs.record import RunRecord
    from toolkit.runs.scored import Evaluation

MAX_INSTANCES = 40
# Every runtime and memory column of run.json's measurements, scores/runtime.csv and the report.
RUNTIME_COLUMNS = {
    "duration_s": "length of the recording (s)",
    "words": "hypothesis words the arm produced",
    "wall_s": "measured wall time of this result's work (decodes, VAD, enhancement), whenever it was computed; "
    "model loading excluded",
    "cpu_s": "measured CPU time of the same work (in its worker processes)",
    "peak_rss_mb": "largest peak resident memory (MB) of the worker processes that did this result's work, "
    "each holding one model: the recognizer's during each decode, the enhancer's or the VAD's "
    "during theirs",
    "real_time_factor": "wall_s / duration_s",
    "this_run_wall_s": "wall time this run spent on the result (0 when the stored result was reused)",
    "this_run_cpu_s": "CPU time this run spent on the result, worker processes included",
    "result": "computed in this run, or reused whole from the run folder",
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
    "rss_after_load_mb": "the worker's resident memory once the model is loaded",
    "worker_peak_rss_mb": "the worker's peak resident memory over the whole run",
}


def _pct(value: Any) -> str:
    """A share as a percentage to 0.1; a value that rounds to zero never prints as "-0.0%"."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{_points(value):.1f}%"


def _points(value: float) -> float:
    """``100 * value`` rounded to 0.1, negative zero made zero (so "-0.0" never prints)."""
    return round(100 * value, 1) + 0.0


def _signed(value: float) -> str:
    return f"{_points(value):+.1f}"


def _num(value: Any, digits: int = 2, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}{unit}"


def _of(errors: Any, total: Any) -> str:
    return f"{int(errors)}/{int(total)}"


def arms_table(evaluation: Evaluation) -> pd.DataFrame:
    """One row per arm over the whole split (stratum "all"), in display form."""
    rows = []
    runtime = evaluation.runtime
    for _, agg in evaluation.aggregate[evaluation.aggregate["stratum"] == "all"].iterrows():
        arm = agg["arm"]
        comparison = evaluation.comparisons.get(arm)
        spent = runtime[runtime["arm"] == arm] if len(runtime) else runtime
        rtf = spent["wall_s"].sum() / spent["duration_s"].sum() if len(spent) else None
        rows.append(
            {
                "arm": arm,
                "WER": _pct(agg["wer"]),
                "fallback-decoded audio": _fallback_share(spent),
                "S/D/I/N": f"{agg['substitutions']}/{agg['deletions']}/{agg['insertions']}/{agg['ref_words']}",
                "CER": _pct(agg["cer"]),
                "verbatim WER": _pct(agg["verbatim_wer"]),
                "ΔWER [95% CI]": "reference"
                if comparison is None
                else f"{_signed(comparison.delta)} [{_signed(comparison.ci_low)}, {_signed(comparison.ci_high)}]",
                "negation flips": _of(agg["negation_flipped"], agg["negation_ref_count"]),
                "negations inserted": int(agg["negation_inserted"]),
                "false-start repeats dropped (negation/name/number)": (
                    f"{int(agg['negation_repetition_dropped'])}/{int(agg['names_repetition_dropped'])}/"
                    f"{int(agg['numbers_repetition_dropped'])}"
                ),
                "name errors": _of(agg["names_errors"], agg["names_ref_count"]),
                "number errors": _of(agg["numbers_errors"], agg["numbers_ref_count"]),
                "short-word S+D": _of(agg["short_substituted"] + agg["short_deleted"], agg["short_ref_count"]),
                "invented/min in non-speech": _num(agg.get("nonspeech_per_minute")),
                "seam omissions/duplications": f"{int(agg['seam_omissions'])}/{int(agg['seam_duplications'])}"
                if "seam_omissions" in agg and not pd.isna(agg.get("seam_omissions"))
                else "—",
                "lost turns": _of(agg["lost_turns"], agg["lost_turns_denominator"]) if "lost_turns" in agg else "—",
                "VAD recall": _pct(agg.get("vad_recall"))
                if "vad_recall" in agg and not pd.isna(agg.get("vad_recall"))
                else "—",
                "onset |err| p95": _num(agg.get("onset_abs_p95_s"), 2, " s"),
                "RTF": _num(rtf, 3),
            }
        )
    return pd.DataFrame.from_records(rows)


def _fallback_share(rows: pd.DataFrame) -> str:
    """Decoded audio not accepted at the first temperature, over ``rows`` (runtime rows)."""
    if not len(rows) or "decoded_s" not in rows or not rows["decoded_s"].sum():
        return "n/a"
    return _pct((rows["fallback_share"].fillna(0) * rows["decoded_s"]).sum() / rows["decoded_s"].sum())


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
        "seam omissions/duplications",
        "lost turns",
        "VAD recall",
        "onset |err| p95",
        "RTF",
    ]
    text = table[columns].to_string(index=False)
    warnings = {c.warning for c in evaluation.comparisons.values() if c.warning}
    notes = "".join(f"\nnote: {w}" for w in sorted(warnings))
    failed = "".join(f"\nFAILED: {line}" for line in failure_lines(evaluation))
    return f"{text}{notes}{failed}\nsignature: {evaluation.signature}"


def failure_lines(evaluation: Evaluation) -> list[str]:
    """One line per (arm, recording) a stage failed on, saying how it was scored."""
    return [f"{f.error} (scored as no words: every reference word a deletion)" for f in evaluation.arm_failures]


def _markdown_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_none_\n"
    header = "| " + " | ".join(_cell(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body]) + "\n"


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4g}"
    return str(value).replace("|", "\\|")


def _comparisons(evaluation: Evaluation) -> pd.DataFrame:
    rows = []
    for arm, c in evaluation.comparisons.items():
        low, high = c.reduction_ci
        rows.append(
            {
                "arm": arm,
                "recordings": c.recordings,
                f"{evaluation.reference_arm} WER": _pct(c.baseline_wer),
                "arm WER": _pct(c.challenger_wer),
                "WER reduction": _pct(-c.delta),
                f"{int(100 * c.confidence)}% CI of reduction": f"[{_pct(low)}, {_pct(high)}]",
                "Wilcoxon p": _num(c.wilcoxon_p, 3),
                "sign test p": _num(c.sign_test_p, 3),
                "warning": c.warning or "",
            }
        )
    return pd.DataFrame.from_records(rows)


def _per_recording(evaluation: Evaluation) -> pd.DataFrame:
    per = evaluation.per_recording
    runtime = evaluation.runtime
    shares = (
        runtime.set_index(["arm", "recording"])["fallback_share"]
        if len(runtime) and "fallback_share" in runtime
        else pd.Series(dtype=float)
    )
    return pd.DataFrame(
        {
            "arm": per["arm"],
            "recording": per["recording_id"],
            "strata": per["strata"],
            "WER": per["wer"].map(_pct),
            "fallback-decoded audio": [_pct(shares.get((a, r))) for a, r in zip(per["arm"], per["recording_id"])],
            "S/D/I/N": [
                f"{s}/{d}/{i}/{n}"
                for s, d, i, n in zip(per["substitutions"], per["deletions"], per["insertions"], per["ref_words"])
            ],
            "negation flips": [_of(a, b) for a, b in zip(per["negation_flipped"], per["negation_ref_count"])],
            "negation repeats dropped": per["negation_repetition_dropped"],
            "invented words in non-speech": per["nonspeech_invented_words"],
            "onset |err| median": per["onset_abs_median_s"].map(lambda v: _num(v, 2, " s")),
            "drift s/min": per["drift_s_per_min"].map(lambda v: _num(v, 3)),
        }
    )


def _fallback(evaluation: Evaluation) -> pd.DataFrame:
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
                "WER": _pct(per.loc[(r.arm, r.recording), "wer"]),
                "decoded": _num(r.decoded_s, 1, " s"),
                "fallback-decoded audio": _pct(r.fallback_share),
                "temperatures": r.temperatures,
                "flag": "fallback dominated",
            }
            for r in flagged.itertuples()
        ]
    )


def _fallback_notes(evaluation: Evaluation) -> str:
    recognizers = evaluation.record.config.recognizers
    lines = [
        f"- `{name}`: "
        + (
            f"batched decoding, no fallback: one temperature {r['decoding']['temperature'][0]}"
            if r.get("backend") == "whisperx"
            else f"sequential, temperatures {r['decoding']['temperature']}"
        )
        for name, r in recognizers.items()
    ]
    return "\n".join(
        [
            *lines,
            "- listed below: every (arm, recording) where more than half the decoded audio was "
            "not accepted at the first temperature (its text is mostly a seeded sample or the "
            "best of failed attempts); per-segment figures are in `outputs/<arm>/<rec>.json`",
        ]
    )


def _explain(columns: dict[str, str]) -> str:
    return "\n".join(f"- `{name}`: {meaning}" for name, meaning in columns.items())


def _loads(evaluation: Evaluation) -> pd.DataFrame:
    record = evaluation.record
    return pd.DataFrame.from_records(
        [{"worker": f"recognizer {name}", **load} for name, load in record.recognizer_loads.items()]
        + [{"worker": name, **load} for name, load in record.stage_loads.items()]
    )


def _strata(evaluation: Evaluation) -> pd.DataFrame:
    agg = evaluation.aggregate[evaluation.aggregate["stratum"] != "all"]
    return pd.DataFrame(
        {
            "arm": agg["arm"],
            "stratum": agg["stratum"],
            "recordings": agg["recordings"],
            "WER": agg["wer"].map(_pct),
            "N": agg["ref_words"],
            "negation flips": [_of(a, b) for a, b in zip(agg["negation_flipped"], agg["negation_ref_count"])],
        }
    )


def _instances(evaluation: Evaluation) -> pd.DataFrame:
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
                            "time": _num(item["time"], 2, " s"),
                            "reference": item["reference"],
                            "hypothesis": item["hypothesis"] or "∅",
                        }
                    )
    return pd.DataFrame.from_records(rows[:MAX_INSTANCES])


def _worst_onsets(evaluation: Evaluation) -> pd.DataFrame:
    """Each arm's largest onset errors, times in seconds to the hundredth (where a p95 comes from)."""
    rows = worst_onsets(
        {arm: {rec: score.timing for rec, score in by_rec.items()} for arm, by_rec in evaluation.scores.items()}
    )
    return pd.DataFrame.from_records(
        [
            {
                "arm": r["arm"],
                "recording": r["recording"],
                "reference": r["reference"],
                "reference onset": _num(r["ref_onset_s"], 2, " s"),
                "hypothesis onset": _num(r["hyp_onset_s"], 2, " s"),
                "error": _num(r["onset_error_s"], 2, " s"),
            }
            for r in rows
        ]
    )


def _alignment_links(evaluation: Evaluation) -> str:
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
    return "\n".join(lines) or "_none_"


def _figure_png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _plots(evaluation: Evaluation) -> list[tuple[str, str]]:
    """WER per arm with the paired interval, and onset error over time (drift) per arm."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    plots = []
    overall = evaluation.aggregate[evaluation.aggregate["stratum"] == "all"]
    figure, axes = pyplot.subplots(figsize=(7, 3))
    arms = list(overall["arm"])
    wers = [100 * (w or 0) for w in overall["wer"]]
    comparisons = evaluation.comparisons
    # The interval is of the difference; drawn around the arm's WER it spans base + [low, high].
    errors = [
        [0.0, 0.0]
        if a not in comparisons
        else [
            100 * (comparisons[a].delta - comparisons[a].ci_low),
            100 * (comparisons[a].ci_high - comparisons[a].delta),
        ]
        for a in arms
    ]
    axes.bar(arms, wers, color="#4c72b0")
    base = wers[arms.index(evaluation.reference_arm)] if evaluation.reference_arm in arms else None
    if base is not None:
        axes.errorbar(
            arms,
            [base + (100 * comparisons[a].delta if a in comparisons else 0) for a in arms],
            yerr=list(zip(*errors)),
            fmt="none",
            ecolor="black",
            capsize=4,
        )
    axes.set_ylabel("WER (%)")
    axes.set_title("Corpus WER per arm (bars: paired 95% bootstrap interval of the difference)")
    axes.tick_params(axis="x", rotation=30)
    plots.append(("WER per arm", _figure_png(figure)))
    pyplot.close(figure)

    figure, axes = pyplot.subplots(figsize=(7, 3))
    for arm, by_recording in evaluation.scores.items():
        onsets = [t for s in by_recording.values() for t in s.timing.ref_onsets.tolist()]
        errs = [e for s in by_recording.values() for e in s.timing.onset_errors.tolist()]
        if onsets:
            axes.scatter(onsets, errs, s=8, label=arm, alpha=0.7)
    axes.axhline(0, color="grey", linewidth=0.8)
    axes.set_xlabel("reference time (s, original recording)")
    axes.set_ylabel("onset error (s)")
    axes.set_title("Word onset error over time (drift)")
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize=7, ncol=3)
    plots.append(("Drift", _figure_png(figure)))
    pyplot.close(figure)
    return plots


def _reuse(record: RunRecord) -> str:
    reuse, spent = record.reuse, record.this_run
    counts = "; ".join(
        f"{kind.replace('_', ' ')} {c['computed']} computed, {c['reused']} reused" for kind, c in reuse.items()
    )
    loading = sum(
        load["ready_wall_s"] for loads in (record.recognizer_loads, record.stage_loads) for load in loads.values()
    )
    return (
        f"{counts}; this run spent {spent.get('wall_s', 0):.1f} s wall on results, plus {loading:.1f} s "
        "starting workers and loading models"
        if reuse
        else "not recorded"
    )


def _cpu_code(runtime: dict[str, Any] | None) -> str:
    """What CTranslate2 ran on this machine's CPU (its words depend on it), for the run section."""
    if not runtime:
        return ""
    forced = " (forced by CT2_FORCE_CPU_ISA)" if runtime.get("forced_isa") else ""
    return (
        f"; CPU code: {runtime.get('isa')}{forced}, int8 GEMM {runtime.get('gemm_s8')}, compute type "
        f"{runtime.get('compute_type')} on {runtime.get('cpu')}"
    )


Section = tuple[str, "pd.DataFrame | str"]  # a heading and its text (Markdown) or table


def _sections(evaluation: Evaluation) -> list[Section]:
    record = evaluation.record
    recognizers = record.config.recognizers
    relations = record.config.recognizer_relations
    about = "\n".join(
        [
            f"- experiment: `{record.config.experiment}`, split `{record.split}`, "
            f"{len(record.recordings)} recording(s), started {record.started}",
            f"- manifest: `{record.manifest.path}`, manifest sha256 `{record.manifest.sha256}` "
            "(the hash of its recorded content, as `ablate manifest freeze` and `verify` print it)",
            f"- work: {_reuse(record)}",
            *[
                f"- recognizer `{name}`: {r.get('label', '')} — model `{r.get('model', '')}`, weights sha256 "
                f"`{str(r.get('weights_sha256', ''))[:16]}…`"
                + (
                    f" ({relations[name]['relation']} relative to `{record.config.primary}`)"
                    if name in relations
                    else ""
                )
                + _cpu_code(record.config.recognizer_runtime.get(name))
                for name, r in recognizers.items()
            ],
            f"- scorer signature: `{evaluation.signature}`",
            "- all times are seconds in the original recordings; WER and CER are micro-averaged "
            "(counts summed, then divided)",
        ]
    )
    small = [c.warning for c in evaluation.comparisons.values() if c.warning]
    caution = f"\n\n**Caution:** {small[0]}" if small else ""
    caution += "".join(f"\n\n**Failed:** {line}" for line in failure_lines(evaluation))
    return [
        ("Run", about + caution),
        ("Arms", arms_table(evaluation)),
        (f"Paired comparison with `{evaluation.reference_arm}` (recording is the unit)", _comparisons(evaluation)),
        ("Temperature fallback", _fallback_notes(evaluation)),
        ("Recordings where fallback dominated", _fallback(evaluation)),
        ("Strata", _strata(evaluation)),
        ("Per recording", _per_recording(evaluation)),
        (f"Critical-word instances (first {MAX_INSTANCES})", _instances(evaluation)),
        (f"Worst onset errors (largest {WORST_ONSETS} per arm)", _worst_onsets(evaluation)),
        (
            "Alignments (each recording's aligned words, errors coloured, critical words marked)",
            _alignment_links(evaluation),
        ),
        ("Seams", evaluation.seams),
        (
            "Seam flags against the reference (precision: flagged seams with an omission, duplication or a word "
            f"off by more than {TIMING_TOLERANCE_S:g} s)",
            flag_precision(evaluation.seams, evaluation.scores),
        ),
        ("Window-origin spread (each windowed arm rerun with its grid shifted)", evaluation.origin_spread),
        ("Runtime and memory: what each column means", _explain({**SUMMARY_RUNTIME_COLUMNS, **RUNTIME_COLUMNS})),
        ("Runtime", evaluation.runtime[[c for c in ("arm", "recording", *RUNTIME_COLUMNS) if c in evaluation.runtime]]),
        ("Model loading (in each worker this run started; none when nothing was computed)", _loads(evaluation)),
        ("Model loading: what each column means", _explain(LOAD_COLUMNS)),
    ]


def markdown_html(text: str, inline: bool = False) -> str:
    """The report's Markdown (lists, emphasis, code) as HTML; raw HTML in it is escaped, not passed on.

    CommonMark by markdown-it-py, so the HTML page shows what report.md means, not its syntax.
    """
    from markdown_it import MarkdownIt

    renderer = MarkdownIt("commonmark", {"html": False})
    return renderer.renderInline(text) if inline else renderer.render(text)


def write_reports(evaluation: Evaluation, extra_sections: Sequence[Section] = ()) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into the run folder, with ``extra_sections`` last (the
    protocol's gates and audit trail, say); returns both paths and sets them, and the terminal table,
    on ``evaluation``."""
    title = f"{evaluation.record.config.experiment} / {evaluation.record.split}"
    sections = [*_sections(evaluation), *extra_sections]
    markdown = [f"# ASR ablation report: {title}\n"]
    for heading, content in sections:
        body = content if isinstance(content, str) else _markdown_table(content)
        markdown.append(f"## {heading}\n\n{body}\n")
    root = evaluation.folder.root
    md_path = atomic_write_text(root / "report.md", "\n".join(markdown))

    parts = [f"<h1>ASR ablation report: {html.escape(title)}</h1>"]
    for heading, content in sections:
        parts.append(f"<h2>{markdown_html(heading, inline=True)}</h2>")
        if isinstance(content, str):
            parts.append(markdown_html(content))
        else:
            parts.append(content.to_html(index=False, na_rep="n/a", border=0, classes="table"))
        if heading == "Arms":
            parts.extend(
                f'<h3>{html.escape(name)}</h3><img alt="{html.escape(name)}" src="data:image/png;base64,{png}">'
                for name, png in _plots(evaluation)
            )
    style = (
        "body{font-family:sans-serif;margin:2em;max-width:1200px} table{border-collapse:collapse;font-size:13px}"
        "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right} th{background:#eee}"
    )
    page = (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n"
    )
    html_path = atomic_write_text(root / "report.html", page)
    evaluation.table_text = render_text_table(evaluation)
    evaluation.report_markdown, evaluation.report_html = md_path, html_path
    return md_path, html_path
