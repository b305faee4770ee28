"""Turn settled decisions into a new reference version: new TextGrids, a new manifest, a record.

Only each stretch's effective decision counts (the first listener's, or a lead's settlement on it
or on a stretch containing it).
Per decision:

- ``keep``: nothing changes (the stretch is confirmed);
- ``correct``: the turns overlapping the stretch are replaced by one turn over their extent
  with the new text; timed words inside it are dropped (they spelled the old text) and
  confirmed non-speech there is removed;
- ``unresolved``: the stretch joins the ``unresolved`` tier (label: the note, or ``adjudicated``);
- ``nonspeech``: turns centred in the stretch and words in it are removed, and the stretch,
  less the turns that remain, becomes confirmed ``nonspeech`` in the ``speech`` tier.

Open conflicts (``conflicts.plan``) block applying. Decisions that touch the same turns with
the same outcome are applied once. A decision made against another reference version than the
manifest's is listed as stale and never applied.

The new version goes into the experiment's ``references/`` folder under a generated name
(``v001-20261201T153000Z``, numbered after the versions already there) unless a command-line
user names another folder. It is written beside its final place and renamed into it, so it
either appears complete or not at all, with the permissions the umask gives; recordings whose
reference did not change are copied byte for byte and are not listed as changed. The old
version stays where it was, readable.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from toolkit.adjudication.conflicts import plan
from toolkit.adjudication.context import Adjudication
from toolkit.adjudication.marks import without
from toolkit.adjudication.spans import correctable_speaker, extent, overlapping_turns, reference_text
from toolkit.adjudication.store import CORRECT, KEEP, NONSPEECH, UNRESOLVED, Decision
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json, make_new_directory, sha256_file
from toolkit.core.transcripts import NONSPEECH as NONSPEECH_LABEL
from toolkit.core.transcripts import Interval, Reference, Utterance
from toolkit.corpus.manifest import NAMES_ROLE, FileRecord, Manifest, RecordingEntry, _relative
from toolkit.formats import write_reference_textgrid
from toolkit.scorer.metrics.intervals import merge, subtract

RECORD_NAME = "adjudication.json"
MANIFEST_NAME = "manifest.json"
VERSIONS_FOLDER = "references"
_VERSION = re.compile(r"^v(\d{3,})-")


@dataclass(frozen=True)
class Applied:
    """The new reference version."""

    out_dir: Path
    manifest: Manifest
    applied: list[Decision]
    stale: list[Decision]
    changed: list[str]


def apply_decisions(adjudication: Adjudication, annotator: str, out_dir: str | Path | None = None) -> Applied:
    """Write the new reference version: into ``out_dir`` (must not exist or be empty) when given,
    else into the experiment's ``references/`` under a generated version name."""
    if not annotator.strip():
        raise InputError(None, "applying decisions needs the name of who applies them")
    if out_dir is not None:
        out_dir = Path(out_dir).resolve()
        if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
            raise InputError(out_dir, "already exists and is not empty; a reference version is never overwritten")
    todo = plan(adjudication)
    if todo.conflicts:
        listing = "; ".join(c.describe() for c in todo.conflicts[:5])
        raise InputError(
            adjudication.store.path,
            f"{len(todo.conflicts)} conflict(s) must be settled by a lead before applying: {listing}",
        )
    if not todo.applicable:
        raise InputError(
            adjudication.store.path,
            "no decisions to apply on this reference version"
            + (f" ({len(todo.stale)} were made on another version)" if todo.stale else ""),
        )
    by_recording: dict[str, list[Decision]] = {}
    for decision in todo.applicable:
        by_recording.setdefault(decision.recording_id, []).append(decision)
    new_references = {}
    for rid, decisions in by_recording.items():
        new = apply_to_reference(adjudication.reference(rid), decisions)
        if new != adjudication.reference(rid):
            new_references[rid] = new

    parent = out_dir.parent if out_dir is not None else adjudication.experiment_dir / VERSIONS_FOLDER
    scratch = make_new_directory(parent, ".new-version.")
    try:
        target = out_dir if out_dir is not None else _reserve_version(parent)
        entries = [
            _write_entry(entry, new_references.get(entry.id), scratch, target)
            for entry in adjudication.manifest.recordings
        ]
        manifest = Manifest(entries, adjudication.manifest.allow_mixed_sample_rates, path=target / MANIFEST_NAME)
        atomic_write_json(scratch / MANIFEST_NAME, manifest.to_json())
        atomic_write_json(
            scratch / RECORD_NAME,
            {
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "applied_by": annotator.strip(),
                "previous_manifest": {"path": str(adjudication.manifest.path), "sha256": adjudication.manifest.sha256},
                "manifest_sha256": manifest.sha256,
                "changed_recordings": sorted(new_references),
                "decisions": [d.to_json() for d in todo.applicable],
                "stale_not_applied": [d.to_json() for d in todo.stale],
            },
        )
        os.replace(scratch, target)  # onto an empty folder: atomic
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    adjudication.store.record_application(
        annotator=annotator.strip(),
        out_dir=str(target),
        previous_manifest_sha256=adjudication.manifest.sha256,
        manifest_sha256=manifest.sha256,
        decision_ids=[d.id for d in todo.applicable],
    )
    return Applied(target, manifest, todo.applicable, todo.stale, sorted(new_references))


def _reserve_version(parent: Path) -> Path:
    """A new, empty ``vNNN-<UTC time>`` folder in ``parent``, numbered after the versions there
    (made with mkdir, so two leads applying at once never get the same one)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    number = 1 + max(
        (int(m.group(1)) for p in parent.iterdir() if (m := _VERSION.match(p.name))),
        default=0,
    )
    for candidate in range(number, number + 1000):
        target = parent / f"v{candidate:03d}-{stamp}"
        try:
            target.mkdir(mode=0o777)
            return target
        except FileExistsError:
            continue
    raise InputError(parent, "no free reference version name")


def apply_to_reference(reference: Reference, decisions: list[Decision]) -> Reference:
    """A new reference with ``decisions`` (one recording's, in time order) applied."""
    result = replace(
        reference,
        utterances=list(reference.utterances),
        words=list(reference.words),
        speech=list(reference.speech),
        unresolved=list(reference.unresolved),
    )
    touched: list[tuple[Decision, float, float]] = []  # each applied decision and the stretch it changed
    for decision in sorted(decisions, key=lambda d: (d.start, d.id)):
        current = reference_text(result, decision.start, decision.end)
        agreeing = any(d.outcome == decision.outcome and d.old_text == decision.old_text for d, _, _ in touched)
        if agreeing and decision.action == CORRECT:
            continue  # the same correction of the same turns is already in
        if not agreeing and current != decision.old_text:  # an agreeing mark adds its own stretch on top
            other = next((d for d, lo, hi in touched if lo < decision.end and hi > decision.start), None)
            culprit = f"decision #{other.id} changed it first" if other else "the reference differs"
            raise InputError(
                None,
                f"decision #{decision.id} on {decision.recording_id} {decision.start:g}-"
                f"{decision.end:g} s was made on the text '{decision.old_text}' but the span now "
                f"reads '{current}' ({culprit}); settle the two decisions",
            )
        touched.append((decision, *extent(result, decision.start, decision.end)))
        if decision.action == CORRECT:
            _correct(result, decision)
        elif decision.action == UNRESOLVED:
            _unresolved(result, decision)
        elif decision.action == NONSPEECH:
            _nonspeech(result, decision)
        elif decision.action != KEEP:
            raise InputError(None, f"decision #{decision.id}: unknown action '{decision.action}'")
    return result


def _correct(reference: Reference, decision: Decision) -> None:
    turns = overlapping_turns(reference, decision.start, decision.end)
    speaker = correctable_speaker(reference, decision.start, decision.end)
    start, end = extent(reference, decision.start, decision.end)
    reference.utterances = sorted(
        [u for u in reference.utterances if u not in turns] + [Utterance(start, end, decision.new_text, speaker)],
        key=lambda u: (u.start, u.end, u.speaker),
    )
    reference.words = [w for w in reference.words if not _inside(w.start, w.end, start, end)]
    reference.speech = without(reference.speech, start, end, only=NONSPEECH_LABEL)


def _unresolved(reference: Reference, decision: Decision) -> None:
    label = decision.note or "adjudicated"
    touching = [i for i in reference.unresolved if i.start <= decision.end and i.end >= decision.start]
    joined = Interval(
        min([decision.start, *(i.start for i in touching)]),
        max([decision.end, *(i.end for i in touching)]),
        "; ".join(dict.fromkeys([*(i.label for i in touching), label])),
    )
    reference.unresolved = sorted(
        [i for i in reference.unresolved if i not in touching] + [joined], key=lambda i: i.start
    )


def _nonspeech(reference: Reference, decision: Decision) -> None:
    start, end = decision.start, decision.end
    reference.utterances = [u for u in reference.utterances if not start <= (u.start + u.end) / 2 <= end]
    reference.words = [w for w in reference.words if not _inside(w.start, w.end, start, end)]
    silent = subtract(merge([(start, end)]), merge((u.start, u.end) for u in reference.utterances))
    speech = reference.speech
    for lo, hi in silent.tolist():
        speech = without(speech, lo, hi)
    nonspeech = merge([(i.start, i.end) for i in speech if i.label == NONSPEECH_LABEL] + silent.tolist())
    others = [i for i in speech if i.label != NONSPEECH_LABEL]
    for lo, hi in nonspeech.tolist():
        others = without(others, lo, hi)
    reference.speech = sorted(
        others + [Interval(lo, hi, NONSPEECH_LABEL) for lo, hi in nonspeech.tolist()], key=lambda i: i.start
    )


def _inside(start: float | None, end: float | None, lo: float, hi: float) -> bool:
    return start is not None and end is not None and lo <= (start + end) / 2 <= hi


def _write_entry(entry: RecordingEntry, reference: Reference | None, scratch: Path, out_dir: Path) -> RecordingEntry:
    """Copy (unchanged) or rewrite (changed) the recording's reference files into the new version."""
    references: dict[str, FileRecord] = {}
    for role, record in entry.references.items():
        if reference is not None and role != NAMES_ROLE:
            role, target = "textgrid", scratch / f"{entry.id}.TextGrid"
            write_reference_textgrid(reference, target, entry.duration)
        else:
            target = scratch / Path(record.path).name
            shutil.copyfile(entry.resolve(record.path), target)
        references[role] = FileRecord(target.name, sha256_file(target), target.stat().st_size)
    return replace(entry, path=_relative(entry.audio_path, out_dir), references=references, base_dir=out_dir)
