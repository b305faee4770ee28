"""The run report: Markdown and a self-contained HTML page that open with their answer.

First screen: the verdict when gates ran (passed in by the protocol as a lead section), then each
arm's ΔWER against the baseline with its paired interval and its split by cause, and the caveat.
Then per-recording differences, the arms table, audits, timing, seams, fallback, runtime, the run
itself and the protocol's trail; glossaries folded; a section with nothing to show is one line or
absent. The terminal gets the arms table (``render_text_table``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit.core.files import atomic_write_text
from toolkit.core.json_records import ABSENT
from toolkit.explain import Explanation, explain_arms
from toolkit.explain.causes import CAUSES
from toolkit.explain.seam_recall import flag_recall
from toolkit.report import figures
from toolkit.report.document import Section, html_document, markdown_document
from toolkit.report.tables import (
    ARMS_COLUMNS,
    EMPTY_CELLS,
    LOAD_COLUMNS,
    MAX_INSTANCES,
    RUNTIME_COLUMNS,
    SUMMARY_RUNTIME_COLUMNS,
    alignment_links,
    arms_table,
    critical_instances_table,
    failure_lines,
    fallback_notes,
    fallback_table,
    glossary,
    loads_table,
    nodes_table,
    paired_tests_table,
    per_recording_table,
    render_text_table,
    runtime_table,
    stability_table,
    strata_table,
    worst_onsets_table,
)
from toolkit.runs.window_edges import window_edges
from toolkit.scorer.metrics.seam_flags import TIMING_TOLERANCE_S, flag_precision
from toolkit.scorer.metrics.timing import WORST_ONSETS

if TYPE_CHECKING:
    from toolkit.runs.record import RunRecord
    from toolkit.runs.scored import Evaluation

MAX_CHANGES = 40  # per arm, in the report; every one is in scores/explain/<arm>.json


def write_reports(evaluation: Evaluation, extra_sections: Sequence[Section] = ()) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into the run folder; ``extra_sections`` are the protocol's
    (its lead sections open the report, the rest close it). Returns both paths and sets them, and the
    terminal table, on ``evaluation``."""
    title = report_title(evaluation.record)
    sections = [
        *(s for s in extra_sections if s.lead),
        *run_sections(evaluation, explain_arms(evaluation)),
        *(s for s in extra_sections if not s.lead),
    ]
    root = evaluation.folder.root
    md_path = atomic_write_text(root / "report.md", markdown_document(title, sections))
    html_path = atomic_write_text(root / "report.html", html_document(title, sections))
    evaluation.table_text = render_text_table(evaluation)
    evaluation.report_markdown, evaluation.report_html = md_path, html_path
    return md_path, html_path


def report_title(record: RunRecord) -> str:
    """Experiment and split, and what sets this run apart from the split's run: the arms it ran, and the
    dither of a stability rerun (runs of one split share the folder prefix; the title tells them apart)."""
    config = record.config
    arms = ", ".join(arm["name"] for arm in config.arms)
    title = f"ASR ablation report: {config.experiment} / {record.split} ({arms})"
    if config.dither:
        title += (
            f", stability rerun with inaudible dither (seed {config.dither.get('seed')}, "
            f"{config.dither.get('level_dbfs')} dBFS)"
        )
    return title


def run_sections(evaluation: Evaluation, explanations: dict[str, Explanation]) -> list[Section]:
    """Every section the run itself makes, in reading order."""
    return [
        _against_baseline(evaluation, explanations),
        _per_recording(evaluation, explanations),
        Section.of(
            "Arms",
            arms_table(evaluation),
            _paired_tests_lead(evaluation),
            paired_tests_table(evaluation),
        ),
        Section.of("Arms table: what each column means", f"{glossary(ARMS_COLUMNS)}\n{EMPTY_CELLS}", folded=True),
        Section.of("Strata", strata_table(evaluation)),
        _changes(evaluation, explanations),
        Section.of(
            f"Critical-word instances (negations, names, numbers; first {MAX_INSTANCES})",
            critical_instances_table(evaluation),
            when_empty="no negation, name or number error in any arm",
        ),
        _stability(evaluation),
        _timing(evaluation),
        _seams(evaluation, explanations),
        Section.of("Temperature fallback", fallback_notes(evaluation), fallback_table(evaluation)),
        Section.of(
            "Runtime and memory",
            runtime_table(evaluation),
            "Model loading, in each worker this run started:" if not loads_table(evaluation).empty else "",
            loads_table(evaluation),
            "Per node (the hosts of the cluster's workers):" if not nodes_table(evaluation).empty else "",
            nodes_table(evaluation),
        ),
        Section.of(
            "Runtime and memory: what each column means",
            glossary({**SUMMARY_RUNTIME_COLUMNS, **RUNTIME_COLUMNS}),
            "Model loading:",
            glossary(LOAD_COLUMNS),
            folded=True,
        ),
        Section.of(
            "Alignments (each recording's words, errors coloured, critical words marked)", alignment_links(evaluation)
        ),
        Section.of("Run", _about(evaluation)),
    ]


def _against_baseline(evaluation: Evaluation, explanations: dict[str, Explanation]) -> Section:
    """The first screen's answer: ΔWER per arm with its interval and causes, and the caveat."""
    heading = f"Each arm against `{evaluation.reference_arm}`"
    if not explanations:
        return Section.of(heading, when_empty="one arm only: nothing to compare", lead=True)
    caveats = sorted({c.warning for c in evaluation.comparisons.values() if c.warning})
    lines = [f"**Caveat:** {w}." for w in caveats] + [f"**Failed:** {line}" for line in failure_lines(evaluation)]
    lines.append(
        "Every word whose outcome differs from the baseline's has one cause, first that applies: "
        f"{', '.join(CAUSES)}. The causes add up to ΔWER exactly; the words behind each are under "
        "*Why WER changed* and in `scores/explain/<arm>.json` (`ablate explain EXP --arm ARM`)."
    )
    figure = figures.delta_by_cause(list(explanations.values()), evaluation.comparisons)
    return Section.of(heading, figure, "\n\n".join(lines), lead=True)


def _per_recording(evaluation: Evaluation, explanations: dict[str, Explanation]) -> Section:
    heading = "Per recording: paired differences"
    if not explanations:
        return Section.of(heading, per_recording_table(evaluation))
    options = evaluation.options
    forest = figures.forest(
        list(explanations.values()), evaluation.comparisons, options.bootstrap_samples, options.bootstrap_seed
    )
    note = (
        "Each row: a recording's ΔWER with a 95% paired bootstrap interval over its turns (a recording of one "
        "turn has none: hollow point); the diamond is the pooled ΔWER with its interval over recordings."
    )
    return Section.of(heading, forest, note, "Every figure per recording:", per_recording_table(evaluation))


def _changes(evaluation: Evaluation, explanations: dict[str, Explanation]) -> Section:
    """Per arm, the changed words behind the split by cause (folded; the first ``MAX_CHANGES``)."""
    blocks: list[Any] = []
    for arm, explanation in explanations.items():
        changes = explanation.changes
        if not changes:
            continue
        shown = pd.DataFrame.from_records(
            [
                {
                    "recording": c.recording,
                    "time (s)": "" if c.time is None else f"{c.time:.2f}",
                    "change": f"{c.kind}: {c.error}",
                    "cause": c.cause,
                    "reference": c.reference,
                    evaluation.reference_arm: c.baseline or "∅",
                    arm: c.arm or "∅",
                }
                for c in changes[:MAX_CHANGES]
            ]
        )
        more = f" (first {MAX_CHANGES} of {len(changes)})" if len(changes) > MAX_CHANGES else ""
        blocks += [f"`{arm}`: {len(changes)} changed words{more}", shown]
    return Section.of("Why WER changed: the words", *blocks, folded=True)


def _timing(evaluation: Evaluation) -> Section:
    drift = figures.drift(evaluation)
    heading = f"Timing (worst onset errors, largest {WORST_ONSETS} per arm, and drift)"
    if drift is None:
        return Section.of(heading, when_empty="no timed reference words: onset error and drift not measured")
    return Section.of(heading, worst_onsets_table(evaluation), drift)


def _seams(evaluation: Evaluation, explanations: dict[str, Explanation]) -> Section:
    """Each windowed arm's seams, its flags' precision and recall, where its window edges fell and why."""
    windowed = evaluation.record.config.arms_with("windows")
    if not windowed:
        return Section.of("Seams", when_empty="no windowed arm")
    recall = flag_recall(evaluation.seams, explanations, evaluation.options.seam_margin_s)
    flags = _flag_table(flag_precision(evaluation.seams, evaluation.scores), recall.summary)
    missed = recall.missed()
    edges = window_edges(evaluation.outputs, windowed).summary()
    return Section.of(
        "Seams",
        evaluation.seams,
        f"Seam flags: precision against the reference (flagged seams with an omission, duplication, split word or a "
        f"word off by "
        f"more than {TIMING_TOLERANCE_S:g} s) and, by the attribution, recall (seams within whose margin the arm "
        "lost a word to the seam, *seam* in the split by cause, that were flagged) and precision (flagged seams "
        "holding such a loss):"
        if not flags.empty
        else "",
        flags,
        "Seams with a seam loss that were not marked for review:" if not missed.empty else "",
        missed.drop(columns=["review"]),
        "Window edges: in a pause, on the grid (with the reason no pause served), or at the edge of the recording "
        "(or of the VAD region the windows cover):"
        if not edges.empty
        else "",
        edges,
        "Window-origin spread (each windowed arm rerun with its grid shifted):"
        if not evaluation.origin_spread.empty
        else "",
        evaluation.origin_spread,
        when_empty="windowed arms, but no seam in any recording",
    )


def _flag_table(precision: pd.DataFrame, recall: pd.DataFrame) -> pd.DataFrame:
    """The scorer's flag precision and the attribution's recall side by side, one row per arm and flag."""
    if precision.empty and recall.empty:
        return pd.DataFrame()
    by_reference = precision[["arm", "flag", "seams", "flagged", "flagged_with_problem", "precision"]].rename(
        columns={"precision": "precision (reference)"}
    )
    by_attribution = recall[["arm", "flag", "seams_lost", "lost_flagged", "recall", "precision"]].rename(
        columns={"precision": "precision (attribution)"}
    )
    return by_reference.merge(by_attribution, on=["arm", "flag"], how="left")


def _about(evaluation: Evaluation) -> str:
    record = evaluation.record
    relations = record.config.recognizer_relations
    used = _recognizers_used(evaluation)
    unused = [name for name in record.config.recognizers if name not in used]
    return "\n".join(
        [
            f"- experiment: `{record.config.experiment}`, split `{record.split}`, "
            f"{len(record.recordings)} recording(s), started {record.started}",
            f"- manifest: `{record.manifest.path}`, manifest sha256 `{record.manifest.sha256}` "
            "(the hash of its recorded content, as `ablate manifest freeze` and `verify` print it)",
            f"- work: {_reuse(record)}",
            *[
                f"- recognizer `{name}`: {r.get('label', '')} — {_what_decodes(r)}"
                + (
                    f" ({relations[name]['relation']} relative to `{record.config.primary}`)"
                    if name in relations
                    else ""
                )
                + _cpu_code(record.config.recognizer_runtime.get(name))
                for name, r in record.config.recognizers.items()
                if name in used
            ],
            *(
                [f"- defined in the experiment, used by no arm of this run: {', '.join(f'`{n}`' for n in unused)}"]
                if unused
                else []
            ),
            f"- scorer signature: `{evaluation.signature}`",
            "- all times are seconds in the original recordings; WER and CER are micro-averaged "
            "(counts summed, then divided)",
        ]
    )


def _recognizers_used(evaluation: Evaluation) -> set[str]:
    """The recognizers this run's arms decoded with, as their outputs name them (every one the run defines
    when no output says: a run written by hand)."""
    named = {name for output in evaluation.outputs.values() for name in output.recognizer_notes}
    return named or set(evaluation.record.config.recognizers)


def _reuse(record: RunRecord) -> str:
    reuse, spent = record.reuse, record.this_run
    counts = "; ".join(
        f"{kind.replace('_', ' ')} {c.computed} computed, {c.reused} reused" for kind, c in reuse.items()
    )
    loading = sum(load.ready_wall_s for _, load in record.service_loads())
    return (
        f"{counts}; this run spent {spent.get('wall_s', 0):.1f} s wall on results, plus {loading:.1f} s "
        "starting workers and loading models"
        if reuse
        else "not recorded"
    )


def _what_decodes(identity: dict[str, Any]) -> str:
    """A recognizer's model and weights, or an external command (its argument list, version and files' hash)."""
    if "program_sha256" in identity:
        decoding = identity.get("decoding", {})
        return (
            f"command `{' '.join(decoding.get('command', []))}`, version `{decoding.get('version', '')}`, "
            f"program sha256 `{str(identity['program_sha256'])[:16]}…`"
        )
    return f"model `{identity.get('model', '')}`, weights sha256 `{str(identity.get('weights_sha256', ''))[:16]}…`"


def _cpu_code(runtime: dict[str, Any] | None) -> str:
    """What CTranslate2 ran on this machine's CPU (its words depend on it), for the run section; nothing for an
    external command, which runs its own code."""
    if not runtime or "isa" not in runtime:
        return ""
    forced = " (forced by CT2_FORCE_CPU_ISA)" if runtime.get("forced_isa") else ""
    return (
        f"; CPU code: {runtime.get('isa')}{forced}, int8 GEMM {runtime.get('gemm_s8')}, compute type "
        f"{runtime.get('compute_type')} on {runtime.get('cpu')}"
    )


def _paired_tests_lead(evaluation: Evaluation) -> str:
    """What the paired tests table holds, and on a tuning split why its best arm's gain is optimistic."""
    arms = len(evaluation.comparisons)
    lead = (
        f"Paired tests against `{evaluation.reference_arm}` (the recording is the unit); the Holm column adjusts the "
        f"Wilcoxon p-values for comparing {arms} arm(s) with one baseline (family-wise error 5%)."
    )
    if evaluation.record.split == "tuning" and arms > 1:
        lead += (
            f" An arm chosen here as the best of {arms} has an optimistic tuning gain (it was chosen because it "
            "looked best); its holdout figure is the one to quote."
        )
    return lead


def _stability(evaluation: Evaluation) -> Section:
    """The arms under inaudible dither (``ablate explain --stability``), when it was measured on this run."""
    heading = "Stability under inaudible dither"
    path = evaluation.folder.stability
    if not path.is_file():
        return Section.of(heading)
    data = evaluation.folder.read_stability()
    dither = data.dither
    lead = (
        f"{len(dither.seeds)} reruns of this split with TPDF dither at {dither.level_dbfs:g} dBFS "
        f"(seeds {', '.join(map(str, dither.seeds))}; run folders {', '.join(f'`{r}`' for r in data.reruns)}). "
        "Direction: what the paired bootstrap interval of ΔWER says (better, worse, unclear), this run first. "
        "An arm that flips, or whose ΔWER moves as much as its interval is wide, is not supported by the audio."
    )
    if data.check is not ABSENT:
        lead += f" The check: {data.check.describe()}."
    if data.scorer_signature != evaluation.signature:
        lead += (
            " **Stale:** measured under scorer signature "
            f"`{data.scorer_signature}`, not this report's; rerun `ablate explain EXP --stability K`."
        )
    return Section.of(heading, lead, stability_table(data))
