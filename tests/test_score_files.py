"""The run folder's JSON score files as typed records: each written by one RunFolder method and read back by
one, byte for byte; files the demo wrote before read back; a damaged or missing file is one line naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from known_causes import known_causes_run

from toolkit.adjudication.queue import build_queue
from toolkit.core.errors import InputError
from toolkit.core.json_records import ABSENT, record_to_json
from toolkit.evaluate import score_run, write_scores
from toolkit.protocol.gates import evaluate_gates
from toolkit.protocol.gates_file import load_gates
from toolkit.runs.folder import RunFolder
from toolkit.runs.score_files import ArmStability, DitherSetting, Stability
from toolkit.scorer.options import ScoreOptions

ROOT = Path(__file__).resolve().parents[1]
DEMO_SCORES = Path(__file__).resolve().parent / "golden" / "demo-scores"  # written by `ablate demo` (and its gate)


def _stability() -> Stability:
    arms = (
        ArmStability.measured("baseline", 0.1, (0.1, 0.11)),
        ArmStability.measured(
            "vad", 0.09, (0.095, 0.08), -0.01, (-0.005, -0.03), (-0.02, 0.001), ("unclear", "better")
        ),
    )
    dither = DitherSetting("tpdf", -80.0, (1, 2))
    return Stability.measured("holdout", "baseline", dither, "holdout-abc", ("holdout-d1", "holdout-d2"), "sig", arms)


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> RunFolder:
    """The known-causes run scored, gated and measured under dither: every kind of score file."""
    _, folder = known_causes_run(tmp_path_factory.mktemp("run"), "holdout", number_at_seam=True)
    evaluation = score_run(folder, ScoreOptions(normalizer="ptbr-norm-3"))
    write_scores(evaluation)
    folder.write_gates(evaluate_gates(evaluation, "vad", load_gates(ROOT / "protocol" / "gates.toml")).to_json())
    folder.write_stability(_stability())
    return folder


def _score_files(folder: RunFolder) -> dict[Path, object]:
    """Every JSON score file of ``folder`` with its reader."""
    readers: dict[Path, object] = {}
    for path in sorted(folder.scores.glob("*/*.json")):
        if path.parent.name == "explain":
            readers[path] = lambda arm=path.stem: folder.read_explanation(arm)
        else:
            readers[path] = lambda arm=path.parent.name, rid=path.stem: folder.read_recording_score(arm, rid)
    for path, read in ((folder.paired, folder.read_paired), (folder.gates, folder.read_gates)):
        if path.is_file():
            readers[path] = read
    if folder.stability.is_file():
        readers[folder.stability] = folder.read_stability
    return readers


def _written_again(folder: RunFolder, path: Path, record: object, into: Path) -> bytes:
    """``record`` written by its writer into a copy of the run folder, at ``path``'s place there."""
    copy, data = RunFolder(into), record_to_json(record)
    where = path.relative_to(folder.root).parts
    if where[-1] == "paired.json":
        copy.write_paired(data)
    elif where[-1] == "gates.json":
        copy.write_gates(data)
    elif where[-1] == "stability.json":
        copy.write_stability(record)  # type: ignore[arg-type]
    elif where[-2] == "explain":
        copy.write_explanation(path.stem, data)
    else:
        copy.write_recording_score(where[-2], path.stem, data)
    return (into / path.relative_to(folder.root)).read_bytes()


def _round_trip(folder: RunFolder, into: Path) -> int:
    files = _score_files(folder)
    for path, read in files.items():
        assert _written_again(folder, path, read(), into) == path.read_bytes(), path  # type: ignore[operator]
    return len(files)


def test_every_score_file_reads_back_and_writes_the_same_bytes(scored: RunFolder, tmp_path: Path) -> None:
    kinds = {p.name if p.parent == scored.scores else p.parent.name for p in _score_files(scored)}
    assert {"paired.json", "gates.json", "stability.json", "explain", "vad", "baseline"} <= kinds
    assert _round_trip(scored, tmp_path / "again") == 6


def test_the_demo_score_files_read_back_byte_for_byte(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    shutil.copytree(DEMO_SCORES, folder.scores)
    assert _round_trip(folder, tmp_path / "again") == 4
    score = folder.read_recording_score("windows", "demo01")
    assert score.recording_id == "demo01" and score.arm == "windows" and score.seams is not ABSENT
    assert score.figures["hits"] > 0 and score.audits.names.figures["ref_count"] > 0
    verdict = folder.read_gates()
    assert verdict.split == "holdout" and verdict.challenge is None and len(verdict.gates) == 10
    assert folder.read_paired()["vad"].per_recording[0].recording_id == "demo01"
    explanation = folder.read_explanation("windows")
    assert explanation.against == "baseline" and explanation.causes["seam"].regressions >= 0


def test_typed_fields_are_what_the_file_says(scored: RunFolder) -> None:
    data = json.loads(scored.recording_score("vad", "r1").read_text(encoding="utf-8"))
    score = scored.read_recording_score("vad", "r1")
    assert (score.wer, score.policy, score.signature) == (data["wer"], data["policy"], data["signature"])
    numbers = [(i.time, i.reference, i.kind) for i in score.audits.numbers.instances]
    assert numbers == [(i["time"], i["reference"], i["kind"]) for i in data["audits"]["numbers"]["instances"]]
    stability = scored.read_stability()
    assert stability == _stability() and stability.flipped == ("vad",) and stability.arms[1].flips


def _damage(path: Path, edit) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(
    "where, edit, problem",
    [
        (("vad", "r1"), lambda d: d.pop("policy"), "policy is missing"),
        (("vad", "r1"), lambda d: d.update(wer="low"), "wer must be a number, not 'low'"),
        (("vad", "r1"), lambda d: d["audits"]["names"].update(instances={}), "audits.names.instances must be a list"),
        (
            ("vad", "r1"),
            lambda d: d["audits"]["numbers"]["instances"].append({"time": 1.0}),
            "audits.numbers.instances[1].end is missing",
        ),
        (("explain", "vad"), lambda d: d.update(surprise=1), "has unknown key(s) surprise"),
        (("explain", "vad"), lambda d: d["instances"][0].update(turn="2"), "instances[0].turn must be int, not '2'"),
    ],
)
def test_a_damaged_score_file_is_one_line_naming_it_and_the_key(
    scored: RunFolder, tmp_path: Path, where: tuple[str, str], edit, problem: str
) -> None:
    folder = RunFolder(tmp_path / "run")
    shutil.copytree(scored.root, folder.root)
    path = folder.scores / where[0] / f"{where[1]}.json"
    _damage(path, edit)
    read = folder.read_explanation if where[0] == "explain" else lambda _: folder.read_recording_score(*where)
    with pytest.raises(InputError) as raised:
        read(where[1])
    assert str(raised.value).startswith(f"{path}: ")
    assert problem in str(raised.value) and "\n" not in str(raised.value)


def test_a_missing_or_unparsable_file_is_one_line(scored: RunFolder, tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "empty")
    with pytest.raises(InputError, match="no gate verdict here"):
        folder.read_gates()
    folder.scores.mkdir(parents=True)
    folder.paired.write_text('{"vad": ', encoding="utf-8")
    with pytest.raises(InputError) as raised:
        folder.read_paired()
    assert str(raised.value).startswith(f"{folder.paired}: not a readable paired comparison file")


def test_a_writer_refuses_what_its_reader_would_and_writes_nothing(scored: RunFolder, tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    broken = record_to_json(scored.read_explanation("vad"))
    del broken["causes"]["seam"]["net"]
    with pytest.raises(InputError, match="causes.seam.net is missing"):
        folder.write_explanation("vad", broken)
    assert not folder.explanation("vad").exists()


def test_the_queue_reads_scores_through_the_records_and_names_a_damaged_file(scored: RunFolder, tmp_path: Path) -> None:
    kinds = {item.kind for item in build_queue(scored).items}
    assert {"critical", "regression"} <= kinds
    folder = RunFolder(tmp_path / "run")
    shutil.copytree(scored.root, folder.root)
    _damage(folder.recording_score("vad", "r1"), lambda d: d.pop("audits"))
    problems = build_queue(folder).problems
    assert f"{folder.recording_score('vad', 'r1')}: audits is missing" in problems
