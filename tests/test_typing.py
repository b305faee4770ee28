"""The strictly typed paths (toolkit/core, toolkit/pipeline, toolkit/asr: mypy's strict flags, pyproject.toml) take
no new explicit ``Any``: each module may hold at most the ``Any`` it held when strict checking was turned on, a new
module none. Lower a ceiling when a module sheds one; a JSON record's shape is better written as a type."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "toolkit"
STRICT = ("core", "pipeline", "asr")
ANY = re.compile(r"\bAny\b")
# Occurrences of the word Any per module (imports included), as of strict checking.
CEILINGS = {
    "core/config.py": 11,
    "core/data_files.py": 18,
    "core/files.py": 4,
    "core/json_records.py": 39,
    "core/json_text.py": 4,
    "core/transcripts.py": 3,
    "pipeline/cache.py": 8,
    "pipeline/cluster.py": 12,
    "pipeline/cluster_worker.py": 13,
    "pipeline/combine.py": 3,
    "pipeline/disagreement.py": 2,
    "pipeline/engine.py": 4,
    "pipeline/experiment.py": 23,
    "pipeline/imported.py": 4,
    "pipeline/planner.py": 3,
    "pipeline/recognizers.py": 11,
    "pipeline/recording.py": 3,
    "pipeline/runner.py": 27,
    "pipeline/seam_records.py": 6,
    "pipeline/slurm.py": 5,
    "pipeline/stages.py": 3,
    "pipeline/vad_profiles.py": 14,
    "pipeline/workers.py": 9,
    # The command backend's and the registry's are the Recognizer protocol's JSON records (notes, identity, the
    # settings dataclass a backend names), the same shapes the Whisper backends return.
    "asr/command_backend.py": 6,
    "asr/faster_whisper_backend.py": 15,
    "asr/forced_alignment.py": 5,
    "asr/registry.py": 16,
    "asr/segments.py": 7,
    "asr/whisperx_backend.py": 13,
    "asr/work_counts.py": 11,
}


def test_no_strictly_typed_module_takes_a_new_any() -> None:
    counts = {
        str(path.relative_to(PACKAGE)): len(ANY.findall(path.read_text(encoding="utf-8")))
        for folder in STRICT
        for path in sorted((PACKAGE / folder).rglob("*.py"))
    }
    over = {name: (count, CEILINGS.get(name, 0)) for name, count in counts.items() if count > CEILINGS.get(name, 0)}
    assert over == {}
    assert set(CEILINGS) <= set(counts), "a module named here no longer exists: drop its line"
