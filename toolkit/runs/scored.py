"""The record of one scored run, shared by the scorer of runs (``evaluate``) and the report.

Its own module so that the report and the gates read it without importing ``evaluate``, and
``evaluate`` imports the report one way only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.core.transcripts import Reference
    from toolkit.runs.arm_output_file import ArmOutputFile
    from toolkit.runs.folder import RunFolder
    from toolkit.runs.record import ArmFailure, RunRecord
    from toolkit.scorer.options import ScoreOptions
    from toolkit.scorer.results import RecordingScore
    from toolkit.scorer.stats import PairedComparison


@dataclass
class Evaluation:
    """Everything scored for one run, and where the report landed."""

    folder: RunFolder
    record: RunRecord
    per_recording: pd.DataFrame
    aggregate: pd.DataFrame
    comparisons: dict[str, PairedComparison]
    scores: dict[str, dict[str, RecordingScore]]
    runtime: pd.DataFrame
    seams: pd.DataFrame
    origin_spread: pd.DataFrame
    signature: str
    reference_arm: str
    options: ScoreOptions
    references: dict[str, Reference] = field(default_factory=dict)  # by recording, as scored
    # (arm, recording): its full output; none for an arm that failed on the recording
    outputs: dict[tuple[str, str], ArmOutputFile] = field(default_factory=dict)
    table_text: str = ""
    report_markdown: Path | None = None
    report_html: Path | None = None

    @property
    def arm_failures(self) -> tuple[ArmFailure, ...]:
        """The (arm, recording) pairs a stage failed on, each scored as no words."""
        return self.record.arm_failures
