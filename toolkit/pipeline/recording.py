"""One recording through every arm of a run: results read back or computed, written, then reviewed.

The unit of work of a run, the same in ``ablate run``'s own process and in a Dask worker
(toolkit.pipeline.cluster): each (arm, recording) result is written as soon as it is finished,
its full output file last (the mark that it is complete), so whoever runs a recording next
reuses what is there. An arm whose stage fails on a recording (``StageError``) is recorded as
failed for that recording; the other arms go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis
from toolkit.pipeline.code_version import code_digest
from toolkit.pipeline.experiment import Arm
from toolkit.pipeline.measure import Measurement, measure
from toolkit.pipeline.runner import ArmOutput, ArmRunner, StageError, reuse_counts
from toolkit.pipeline.workers import WorkNeeded
from toolkit.runs.arm_output_file import ArmOutputFile
from toolkit.runs.folder import RunFolder
from toolkit.runs.record import IMPORTED, ArmFailure, RuntimeRow


@dataclass
class RecordingResult:
    """What running every arm on one recording gave: its runtime rows (arm order) and reuse counts.

    ``failure`` (one line naming the worker and the file) replaces the rows of a recording that
    could not be finished; arms it did finish are on disk and are reused by the next run.
    ``arm_failures`` lists the arms a stage failed for on this recording (no output written).
    ``needs_work`` (a runner that may not start models): an arm needed a unit that is not cached;
    the arms before it are done, the rest are left for a runner that may.
    """

    recording: str
    rows: list[RuntimeRow] = field(default_factory=list)
    computed: int = 0
    reused: int = 0
    units: dict[str, dict[str, int]] = field(default_factory=reuse_counts)
    this_run: Measurement = field(default_factory=Measurement)
    measured: Measurement = field(default_factory=Measurement)
    worker: str | None = None
    failure: str | None = None
    arm_failures: list[ArmFailure] = field(default_factory=list)
    needs_work: bool = False
    # A cluster worker's recognizers' weight hashes (sha256), verified on its host before any unit ran there.
    models_sha256: dict[str, str] = field(default_factory=dict)

    def after(self, earlier: RecordingResult) -> RecordingResult:
        """This result (a second pass over the recording) with what ``earlier`` computed before it: those
        arms were read back here, but were made in this run."""
        made = {row.arm: row for row in earlier.rows}
        self.rows = [made.get(row.arm, row) for row in self.rows]
        self.computed += earlier.computed
        self.reused -= earlier.computed
        for kind, counts in earlier.units.items():
            for outcome, count in counts.items():
                self.units[kind][outcome] += count
        self.this_run.add(earlier.this_run)
        self.arm_failures = earlier.arm_failures + self.arm_failures
        return self


def arm_failure(arm: str, recording: str, error: StageError) -> ArmFailure:
    """The record of an arm that failed on one recording, with its one-line message."""
    return ArmFailure(
        arm, recording, error.stage, f"arm {arm}, stage {error.stage}, recording {recording}: {error.problem}"
    )


def run_recording(
    runner: ArmRunner,
    folder: RunFolder,
    arms: list[Arm],
    entry: Any,
    keys: dict[str, str],
    bar: Any = None,
    guard: ResultGuard | None = None,
) -> RecordingResult:
    """Every arm on one recording: stored results are read back (only those ``guard`` adopts), the others
    computed and written (full output last), then the disagreement lists against the baseline. ``bar``
    (tqdm) advances per arm."""
    result = RecordingResult(entry.id)
    signal = None
    outputs: dict[str, ArmOutputFile] = {}
    for arm in arms:
        if bar is not None:
            bar.set_postfix_str(f"{entry.id} {arm.name}")
        stored = stored_output(folder, arm.name, entry.id, keys[arm.name], guard)
        this_run = None
        if stored is None:
            loading = runner.started_wall_s()
            try:
                with measure(memory=False) as spent:
                    if arm.imported is not None:  # made elsewhere: read, never decoded, no cost measured
                        output = ArmOutput(words=arm.imported.words(entry.id, entry.duration))
                    else:
                        signal = signal if signal is not None else entry.load_audio()
                        output = runner.run(arm, entry.sha256, signal)
            except StageError as error:
                result.arm_failures.append(arm_failure(arm.name, entry.id, error))
                if bar is not None:
                    bar.update()
                continue
            except WorkNeeded:
                result.needs_work = True
                break
            # Models started on the way are reported apart (their loads), not in the result's time.
            # Memory is measured per unit in the workers that hold the models; this process holds none.
            loading = runner.started_wall_s() - loading
            this_run = Measurement(spent.wall_s - loading, spent.cpu_s + output.worker_cpu_s)
            stored = _write_result(folder, arm, entry.id, entry.duration, output, keys[arm.name], times(this_run))
            result.computed += 1
            for kind, counts in output.reuse.items():
                for outcome, count in counts.items():
                    result.units[kind][outcome] += count
        else:
            result.reused += 1
        result.this_run.add(this_run or Measurement())
        result.measured.add(Measurement(**asdict(stored.compute)))
        outputs[arm.name] = stored
        result.rows.append(_row(arm, entry.id, entry.duration, stored, this_run))
        if bar is not None:
            bar.update()
    if not result.needs_work:
        _write_arm_disagreements(folder, entry.id, arms, outputs)
    return result


def times(spent: Measurement) -> dict[str, float]:
    """Wall and CPU time of what this run spent (no memory figure: see RUNTIME_COLUMNS)."""
    return {"wall_s": round(spent.wall_s, 4), "cpu_s": round(spent.cpu_s, 4)}


class ResultGuard(Protocol):
    """Who decides whether a stored result may be reused: for a test split, the protocol, which
    adopts only results whose files still hash to what its audit log recorded (and refuses
    changed ones). Picklable: Dask workers read results too."""

    def adopt(self, folder: RunFolder, arm: str, recording: str, unit_key: str) -> bool: ...

    def recorded(self, folder: RunFolder, recording: str, arms: Sequence[str]) -> None: ...


def stored_output(
    folder: RunFolder, arm: str, recording: str, unit_key: str, guard: ResultGuard | None = None
) -> ArmOutputFile | None:
    """The stored result of ``arm`` on ``recording`` if it was made with ``unit_key`` (and ``guard`` adopts it)."""
    if guard is not None and not guard.adopt(folder, arm, recording, unit_key):
        return None
    if not folder.arm_output(arm, recording).is_file():
        return None
    try:
        stored = folder.read_arm_output(arm, recording)
    except InputError:  # damaged, or written before a field was recorded: made again (from the cache)
        return None
    return stored if stored.unit_key == unit_key else None


def _write_result(
    folder: RunFolder,
    arm: Arm,
    recording: str,
    duration: float,
    output: ArmOutput,
    unit_key: str,
    this_run: dict[str, float],
) -> ArmOutputFile:
    """Write hypothesis (JSON + CTM), disagreement list, then the full output last (the completion mark)."""
    from toolkit.formats import write_ctm, write_hypothesis_json

    hypothesis = Hypothesis(
        recording,
        output.words,
        arm=arm.name,
        meta={"unmapped_times": output.unmapped_times, "notes": output.notes, "recognizers": output.recognizer_notes},
    )
    write_hypothesis_json(hypothesis, folder.hypothesis_json(arm.name, recording))
    write_ctm(hypothesis, folder.hypothesis_ctm(arm.name, recording))
    stored = output.stored(unit_key, code_digest("arm"), arm.name, recording, duration, this_run)
    return folder.write_arm_output(arm.name, recording, stored)


def _row(arm: Arm, recording: str, duration: float, stored: ArmOutputFile, this_run: Measurement | None) -> RuntimeRow:
    """One runtime row (``this_run`` None: the stored result was reused whole); RUNTIME_COLUMNS in
    toolkit.report.tables says what each figure means. An imported arm's cost was spent elsewhere: its figures are
    None (not measured), never zeros."""
    from toolkit.asr.segments import temperature_summary

    units = stored.reuse.values() if this_run is not None else []
    this_run = this_run or Measurement()
    temperatures = temperature_summary(stored.segments)
    measured = arm.imported is None
    return RuntimeRow(
        arm=arm.name,
        recording=recording,
        duration_s=duration,
        words=len(stored.words),
        wall_s=stored.compute.wall_s if measured else None,
        cpu_s=stored.compute.cpu_s if measured else None,
        peak_rss_mb=stored.compute.peak_rss_mb if measured else None,
        real_time_factor=stored.real_time_factor if measured else None,
        this_run_wall_s=round(this_run.wall_s, 4),
        this_run_cpu_s=round(this_run.cpu_s, 4),
        result=IMPORTED if not measured else "computed" if units else "reused",
        units_computed=sum(u.computed for u in units),
        units_reused=sum(u.reused for u in units),
        decoded_s=temperatures["decoded_s"],
        fallback_share=temperatures["fallback_share"],
        fallback_dominated=temperatures["fallback_dominated"],
        temperatures="; ".join(f"{t}: {100 * share:.0f}%" for t, share in temperatures["share_by_temperature"].items()),
        unmapped_times=stored.unmapped_times,
        seams=len(stored.seams),
        disagreements=len(stored.disagreements),
    )


def _write_arm_disagreements(
    folder: RunFolder, recording: str, arms: list[Arm], outputs: dict[str, ArmOutputFile]
) -> None:
    """Disagreement lists (JSON and CSV) of where each arm disagrees with the first arm, the baseline
    (none for an arm that failed, or for any when the baseline failed).

    Disagreements between two recognizers of one arm stay in that arm's output file.
    """
    from toolkit.pipeline.disagreement import disagreement_spans, write_disagreements

    base = arms[0].name
    if base not in outputs:
        return
    base_words = outputs[base].words
    for arm in (a for a in arms[1:] if a.name in outputs):
        spans = disagreement_spans(base_words, outputs[arm.name].words)
        for path in (folder.disagreements(arm.name, recording), folder.disagreements(arm.name, recording, "csv")):
            write_disagreements(spans, path, recording_id=recording, label_a=base, label_b=arm.name)
