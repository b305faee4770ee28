"""A probe script run by a child Python that imports toolkit from one folder only, not from this checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def probe_json(probe: str, pythonpath: Path, cwd: Path) -> dict[str, Any]:
    """``python -c probe`` in ``cwd`` with ``pythonpath`` as its only PYTHONPATH; the JSON it printed."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={**env, "PYTHONPATH": str(pythonpath)},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)
