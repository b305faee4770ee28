"""One experiment as the adjudication app sees it: its manifest, run folders, references and store.

``decide`` is the single way a decision enters the store: it fills in what an annotator must not
type (the old text, the reference version's sha256, the manifest identity, the recording's
duration bound) from the frozen manifest. ``listener_view`` is what one listener may know about
a stretch before deciding it: their own decision and how many others decided, never what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.adjudication.spans import correctable_speaker, reference_text
from toolkit.adjudication.store import CORRECT, STORE_NAME, TIME_DECIMALS, Decision, DecisionStore, SpanState
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Reference
from toolkit.corpus.manifest import Manifest, RecordingEntry, load_manifest
from toolkit.pipeline.experiment import Experiment, load_experiment
from toolkit.runs.folder import RunFolder
from toolkit.scorer.options import ScoreOptions

OPEN, DECIDED, CONFLICT, STALE = "open", "decided", "conflict", "stale"
# How `ablate app` tells the Streamlit app what to open (environment variables).
APP_ENV = {
    "experiment": "ABLATE_APP_EXPERIMENT",
    "manifest": "ABLATE_APP_MANIFEST",
    "annotator": "ABLATE_APP_ANNOTATOR",
    "role": "ABLATE_APP_ROLE",
    "users": "ABLATE_APP_USERS",
    "blind": "ABLATE_APP_BLIND",
    "lang": "ABLATE_APP_LANG",
}
STATUSES = (OPEN, DECIDED, CONFLICT, STALE)


@dataclass(frozen=True)
class ListenerView:
    """What one listener may see about a stretch: their own latest decision, and how many decided it."""

    mine: Decision | None
    listeners: int


@dataclass
class Adjudication:
    """The experiment folder, its frozen manifest and its decision store."""

    experiment_dir: Path
    name: str
    manifest: Manifest
    store: DecisionStore
    score_options: ScoreOptions  # the experiment's scorer options: the span review aligns as the scorer does
    experiment: Experiment | None = None
    _references: dict[str, Reference] = field(default_factory=dict, repr=False)

    def run_folders(self) -> list[RunFolder]:
        """Run folders that have a run record, newest first."""
        runs = self.experiment_dir / "runs"
        found = [RunFolder(p) for p in runs.iterdir() if (p / "run.json").is_file()] if runs.is_dir() else []
        return sorted(found, key=lambda f: f.record.stat().st_mtime, reverse=True)

    def entry(self, recording_id: str) -> RecordingEntry:
        return self.manifest.entry(recording_id)

    def reference_sha256(self, recording_id: str) -> str:
        """The sha256 of the reference file of ``recording_id`` in this reference version."""
        entry = self.entry(recording_id)
        role = entry.reference_role
        if role is None:
            raise InputError(self.manifest.path, f"recording '{recording_id}' has no reference")
        return entry.references[role].sha256

    def reference(self, recording_id: str) -> Reference:
        """The verified reference (read once per context)."""
        if recording_id not in self._references:
            self._references[recording_id] = self.entry(recording_id).load_reference()
        return self._references[recording_id]

    def references(self) -> dict[str, Reference]:
        return {entry.id: self.reference(entry.id) for entry in self.manifest.recordings}

    def decide(
        self,
        *,
        recording_id: str,
        start: float,
        end: float,
        action: str,
        annotator: str,
        new_text: str = "",
        note: str = "",
        source: str = "",
        settle: bool = False,
        seen: int | None = None,
    ) -> Decision:
        """Store a decision on the current reference version of ``recording_id`` (``seen``: see
        ``DecisionStore.record``)."""
        entry = self.entry(recording_id)
        if action == CORRECT:
            correctable_speaker(self.reference(recording_id), start, end)
        return self.store.record(
            recording_id=recording_id,
            start=start,
            end=end,
            action=action,
            old_text=reference_text(self.reference(recording_id), start, end),
            new_text=new_text,
            annotator=annotator,
            reference_sha256=self.reference_sha256(recording_id),
            manifest_sha256=self.manifest.sha256,
            note=note,
            source=source,
            settle=settle,
            seen=seen,
            duration=entry.duration,
        )

    def is_stale(self, decision: Decision) -> bool:
        """Made against another reference version than the manifest's (never applied to this one)."""
        try:
            return decision.reference_sha256 != self.reference_sha256(decision.recording_id)
        except InputError:
            return True

    def item_statuses(self, spans: list[tuple[str, float | None, float | None]]) -> list[str]:
        """Status of each (recording, start, end): its own span's, else decided when an effective
        decision's span covers it, else open."""
        states = self.store.span_states()
        exact = {(s.recording_id, s.start, s.end): s for s in states}
        covering: dict[str, list[SpanState]] = {}
        for state in states:
            if (state.replaced_by or state.effective) is not None:
                covering.setdefault(state.recording_id, []).append(state)
        result = []
        for recording, start, end in spans:
            if start is None or end is None:
                result.append(OPEN)
                continue
            found = exact.get((recording, round(start, TIME_DECIMALS), round(end, TIME_DECIMALS)))
            if found is None:
                found = next((s for s in covering.get(recording, []) if s.start <= start and s.end >= end), None)
            result.append(self.status(found))
        return result

    def listener_view(self, spans: list[tuple[str, float | None, float | None]], annotator: str) -> list[ListenerView]:
        """Per (recording, start, end): this listener's own latest decision on it and how many
        listeners decided it; nothing about what the others decided."""
        states = {(s.recording_id, s.start, s.end): s for s in self.store.span_states()}
        views = []
        for recording, start, end in spans:
            state = None
            if start is not None and end is not None:
                state = states.get((recording, round(start, TIME_DECIMALS), round(end, TIME_DECIMALS)))
            mine = next((d for d in state.listeners if d.annotator == annotator), None) if state else None
            views.append(ListenerView(mine, len(state.listeners) if state else 0))
        return views

    def status(self, state: SpanState | None) -> str:
        if state is None:
            return OPEN
        if state.conflict:
            return CONFLICT
        effective = state.replaced_by or state.effective
        return STALE if effective is not None and self.is_stale(effective) else DECIDED


def open_experiment(experiment_dir: str | Path, manifest_path: str | Path | None = None) -> Adjudication:
    """The experiment's manifest (or ``manifest_path``, e.g. a newer reference version) and its store."""
    experiment_dir = Path(experiment_dir)
    experiment = load_experiment(experiment_dir)
    manifest = load_manifest(manifest_path or experiment.manifest_path)
    return Adjudication(
        experiment.folder,
        experiment.name,
        manifest,
        DecisionStore(experiment.folder / STORE_NAME),
        experiment.score_options(),
        experiment,
    )
