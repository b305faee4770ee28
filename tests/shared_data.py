"""Where the shared pt-BR development recordings are: ``../shared/data/ptbr-dev`` beside the clone.

``ABLATE_SHARED_DATA`` overrides it. Tests that need the folder skip with a reason when it is
absent (a fresh clone of the project alone); CI has it beside the clone.
"""

from __future__ import annotations

import os
from pathlib import Path

PTBR_DEV = Path(
    os.environ.get("ABLATE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data" / "ptbr-dev")
)
