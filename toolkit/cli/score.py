"""``ablate score``: score one hypothesis against its reference and print every metric with the signature.

Plain-text inputs have no times, so time-based figures print as "not available" (JSON null).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.cli.collection import fewer_collections
from toolkit.cli.options import non_negative_int, non_negative_seconds
from toolkit.core.errors import InputError
from toolkit.core.json_text import indented_json
from toolkit.core.text import read_text
from toolkit.formats import read_hypothesis, read_names, read_reference
from toolkit.formats.pairing import pair_ids
from toolkit.scorer.normalize.policy import POLICY_VERSION, POLICY_VERSIONS

if TYPE_CHECKING:
    from toolkit.scorer.alignment_view import AlignedWord
    from toolkit.scorer.results import RecordingScore

# Kept literal so `ablate --help` need not import pandas/scipy; test_score_cli checks they agree.
POLICY_NAMES = ("normalized", "verbatim", "accent-folded")
DEFAULT_COLLAR_S = 0.5
DEFAULT_SHORT_MAX = 3

NA = "not available"
# The ScoreOptions fields a flag sets (option -> argparse dest); `names` comes from --names and the
# reference. A test checks every other field is here or in RUN_ONLY_OPTIONS.
OPTION_FLAGS = {
    "policy": "policy",
    "short_word_max_letters": "short_max",
    "collar": "collar",
    "time_constrained": "time_constrained",
    "normalizer": "normalizer",
    "lexicon": "lexicon",
}
# Options that mean something only for a run of several recordings (seams, the paired bootstrap).
RUN_ONLY_OPTIONS = ("seam_margin_s", "bootstrap_samples", "bootstrap_seed")
# Between two steps of the JSON alignment: one step per line, indented inside the list.
STEPS_BETWEEN = ",\n    "


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score", help="score one hypothesis against its reference (WER, audits, timing)", description=__doc__
    )
    parser.add_argument("--ref", required=True, type=Path, help="reference: .TextGrid, .stm or .txt")
    parser.add_argument("--hyp", required=True, type=Path, help="hypothesis: .ctm, .json (words) or .txt")
    parser.add_argument(
        "--id",
        dest="recording_id",
        metavar="RECORDING",
        help="the recording both files hold (needed when their ids or file names differ)",
    )
    parser.add_argument("--channel", help="the channel to score, when a CTM or STM holds several")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    parser.add_argument("--names", type=Path, help="names list, one name per line (added to the reference's)")
    parser.add_argument("--vad", type=Path, help="VAD speech segments, one 'start end' pair in seconds per line")
    parser.add_argument(
        "--policy",
        choices=POLICY_NAMES,
        default="normalized",
        help="primary normalization policy (default normalized; the others are reported beside it)",
    )
    parser.add_argument(
        "--normalizer",
        choices=POLICY_VERSIONS,
        default=POLICY_VERSION,
        help="normalizer version (default %(default)s; older ones reproduce older scores)",
    )
    parser.add_argument(
        "--lexicon",
        type=Path,
        help="your corpus's lexicon: 'equivalence<TAB>form<TAB>words', 'name<TAB>Name', "
        "'negation<TAB>word' or 'optional<TAB>words[<TAB>before roman item|before letter item|for :]' per line "
        "(its sha256 goes into the signature; see docs/normalization.md)",
    )
    parser.add_argument(
        "--collar",
        type=non_negative_seconds,
        default=DEFAULT_COLLAR_S,
        help="collar in seconds for the time-constrained alignment (default %(default)s)",
    )
    parser.add_argument(
        "--time-constrained", action="store_true", help="also report a time-constrained alignment (diagnosis)"
    )
    parser.add_argument(
        "--show-alignment",
        action="store_true",
        help="also print the aligned reference and hypothesis (REF/HYP/EVAL lines, as sclite's pra)",
    )
    parser.add_argument(
        "--short-max",
        type=non_negative_int,
        default=DEFAULT_SHORT_MAX,
        help="short-word audit: at most this many letters (default %(default)s)",
    )
    # Its words, tokens and steps live until it ends: as the program, it ends without freeing them one by one.
    parser.set_defaults(func=run, skip_teardown=True)


def read_vad_segments(path: Path) -> list[tuple[float, float]]:
    """``start end`` per line (blank lines and ``#`` comments ignored); refuses bad or reversed pairs."""
    segments = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InputError(path, f"line {number}: expected 'start end', got {line.strip()!r}")
        try:
            start, end = float(fields[0]), float(fields[1])
        except ValueError:
            raise InputError(path, f"line {number}: times must be numbers of seconds, got {line.strip()!r}") from None
        if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end < start:
            raise InputError(path, f"line {number}: impossible segment {start:g}-{end:g} s")
        segments.append((start, end))
    return segments


def run(args: argparse.Namespace) -> int:
    from toolkit.scorer.alignment_view import aligned_words, alignment_json, critical_marks
    from toolkit.scorer.options import checked_options
    from toolkit.scorer.score import audit_vocabulary, score_recording

    with fewer_collections():  # every word, token and step lives until the end: nothing for the collector
        recording_id, channel = pair_ids(args.ref, args.hyp, args.recording_id, args.channel)
        reference = read_reference(args.ref, recording_id, channel=channel)
        hypothesis = read_hypothesis(args.hyp, recording_id, channel)
        names = tuple(read_names(args.names)) if args.names else ()
        vad = read_vad_segments(args.vad) if args.vad else None
        options = checked_options(
            {option: getattr(args, flag) for option, flag in OPTION_FLAGS.items()} | {"names": names}
        )
        score = score_recording(reference, hypothesis, options, vad)
        at = score.audit_tokens
        marks = critical_marks(at, *audit_vocabulary(reference.names, options))
        if args.format == "json":
            print(*json_with_alignment(score.to_json(), alignment_json(at, marks, STEPS_BETWEEN)), sep="")
        else:
            print(render_text(score))
            if args.show_alignment:
                print(render_alignment(score, aligned_words(at, marks)))
    return 0


def json_with_alignment(data: dict[str, Any], steps: str) -> tuple[str, ...]:
    """``data`` indented, then ``"alignment"``: the steps (each step's JSON, as ``alignment_json`` writes them,
    joined by a comma and the next line's indent) one per line (as sclite prints one per line; and indenting
    thousands of steps would take Python's slow JSON encoder longer than the scoring). In parts, written one after
    the other: a long recording's steps are megabytes, not copied again to join them to the rest."""
    body = indented_json(data)
    if not steps:
        return (body[:-2], ',\n  "alignment": []\n}')
    return (body[:-2], ',\n  "alignment": [\n    ', steps, "\n  ]\n}")


def render_alignment(score: RecordingScore, alignment: list[AlignedWord]) -> str:
    """The alignment in sclite's pra layout, under a line naming its policy and its counts."""
    from toolkit.scorer.alignment_view import render_pra

    ops = [row.op for row in alignment]
    correct = ops.count("equal") + ops.count("skip")  # an optional word left out is correct, as in sclite
    counts = " ".join(str(n) for n in (correct, ops.count("substitute"), ops.count("delete"), ops.count("insert")))
    return (
        f"\nalignment of {score.recording_id} (policy {score.signature.fields['audit_policy']}; "
        f"correct words lower case, errors upper case, onsets in seconds)\n"
        f"Scores: (#C #S #D #I) {counts}\n{render_pra(alignment)}"
    )


def _pct(value: float | None) -> str:
    return NA if value is None else f"{100 * value:.2f}%"


def _s(value: float | None, unit: str = " s") -> str:
    return NA if value is None else f"{value:.3f}{unit}"


def _negation_line(n: dict[str, Any]) -> str:
    line = f"negations: {n['flipped']} of {n['ref_count']} flipped, {n['inserted']} inserted"
    if n["repetition_dropped"]:
        line += f", {n['repetition_dropped']} repetition(s) dropped (false starts)"
    if n["ambiguous"]:
        line += f", {n['ambiguous']} ambiguous (opposite an undecidable colloquial num)"
    return line


def _optional_line(score: RecordingScore) -> list[str]:
    o = score.optional_words
    if not o.ref_count:
        return []
    return [
        f"optional reference words: {o.ref_count} (matched {o.matched}, substituted {o.substituted}, "
        f"left out {o.left_out}: no error, counted as hits as sclite -D does)"
    ]


def render_text(score: RecordingScore) -> str:
    """A short human-readable report; every time-based figure says "not available" when unmeasurable."""
    data: dict[str, Any] = score.to_json()
    c = score.counts
    a = data["audits"]
    n, t = data["nonspeech"], data["timing"]
    lines = [
        f"recording {score.recording_id}  arm {score.arm or '-'}  policy {score.policy}",
        f"WER {_pct(c.wer)}  (S={c.substitutions} D={c.deletions} I={c.insertions} N={c.ref_words}, "
        f"hits {c.hits})   CER {_pct(c.cer)}",
        f"verbatim WER {_pct(score.verbatim.wer)}   accent-folded WER {_pct(score.accent_folded.wer)}",
        *_optional_line(score),
        _negation_line(a["negation"]),
        f"names: {a['names']['errors']} of {a['names']['ref_count']} wrong   "
        f"numbers: {a['numbers']['errors']} of {a['numbers']['ref_count']} wrong",
        f"short words (<= {a['short_words']['max_letters']} letters): {a['short_words']['substituted']} "
        f"substituted, {a['short_words']['deleted']} deleted of {a['short_words']['ref_count']}",
    ]
    if n["intervals"] and not n["available"]:
        lines.append(f"non-speech: {NA} (no timed hypothesis words)")
    elif n["intervals"]:
        lines.append(
            f"non-speech: {n['invented_words']} invented word(s) in {n['minutes']:.2f} min "
            f"({n['per_minute']:.2f}/min), {n['intervals_with_text']} of {n['intervals']} "
            f"interval(s) with text"
        )
    else:
        lines.append(f"non-speech: {NA} (no confirmed non-speech intervals)")
    if t["available"]:
        lines.append(
            f"timing: onset |error| median {_s(t['onset_abs_median_s'])}, p95 {_s(t['onset_abs_p95_s'])}, "
            f"drift {_s(t['drift_s_per_min'], ' s/min')}, coverage {t['matched_timed_words']}"
            f"/{t['ref_timed_words']} timed reference words; {t['untimed_hyp_words']} untimed "
            f"hypothesis word(s)"
            + (f"; reference times {t['derived_word_times']}" if t.get("derived_word_times") else "")
        )
    else:
        why = "no timed reference words" if not t["ref_timed_words"] else "no timed hypothesis words"
        lines.append(f"timing: {NA} ({why})")
    if "vad" in data:
        v = data["vad"]
        lines.append(
            f"VAD: speech recall {_pct(v['speech_recall'])} of {v['speech_s']:.2f} s ({v['speech_source']}); "
            f"clipped words {v['clipped_words']}/{v['ref_timed_words']}, clipped negations "
            f"{v['clipped_negations']}/{v['ref_timed_negations']}"
        )
    if "time_constrained" in data:
        tc = data["time_constrained"]
        lines.append(
            f"time-constrained (collar {tc['collar_s']:g} s): WER {_pct(tc['wer'])} "
            f"(S={tc['substitutions']} D={tc['deletions']} I={tc['insertions']})"
        )
    e = data["excluded"]
    lines.append(
        f"excluded unresolved audio: {e['unresolved_s']:.2f} s ({e['ref_words']} reference, "
        f"{e['hyp_words']} hypothesis word(s))"
    )
    for label, items in (
        ("negation", a["negation"]["instances"]),
        ("name", a["names"]["instances"]),
        ("number", a["numbers"]["instances"]),
    ):
        for item in items:
            when = NA if item["time"] is None else f"{item['time']:.2f} s"
            lines.append(f"  {label} {item['kind']} at {when}: '{item['reference']}' -> '{item['hypothesis']}'")
    lines.append(f"signature: {score.signature.text}")
    return "\n".join(lines)
