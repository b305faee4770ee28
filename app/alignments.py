"""Each arm's whole recording aligned by the scorer, kept for the life of the server and shared by sessions.

The first stretch of a recording needs every arm's alignment of that recording (about 25 ms per
arm of a two-minute recording, more for long ones); after the first page of a run, the rest are
computed in the background, so moving on to the next stretch never waits for the scorer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from toolkit.adjudication.context import Adjudication
from toolkit.adjudication.spans import ArmAlignment, arm_alignment
from toolkit.runs.folder import RunFolder

MAX_ENTRIES = 512
_cache: OrderedDict[tuple, ArmAlignment] = OrderedDict()
_lock = threading.Lock()
_warmed: set[tuple[str, str]] = set()


def alignment(adj: Adjudication, folder: RunFolder, arm: str, recording: str) -> ArmAlignment:
    """``arm``'s alignment of ``recording`` (recomputed when the hypothesis or the reference changes)."""
    path = folder.hypothesis_json(arm, recording)
    key = (str(folder.root), arm, recording, path.stat().st_mtime_ns, adj.reference_sha256(recording))
    with _lock:
        hit = _cache.get(key)
    if hit is None:
        hit = arm_alignment(adj.reference(recording), folder.read_hypothesis(arm, recording), adj.score_options)
        with _lock:
            _cache[key] = hit
            while len(_cache) > MAX_ENTRIES:
                _cache.popitem(last=False)
    return hit


def warm(adj: Adjudication, folder: RunFolder, arms: list[str], recordings: list[str]) -> None:
    """Align every arm of every recording of the run in a background thread (once per run and version)."""
    marker = (str(folder.root), adj.manifest.sha256)
    with _lock:
        if marker in _warmed:
            return
        _warmed.add(marker)

    def work() -> None:
        for recording in recordings:
            for arm in arms:
                if folder.hypothesis_json(arm, recording).is_file():
                    try:
                        alignment(adj, folder, arm, recording)
                    except Exception:  # noqa: BLE001 - the page computes (and reports) it again when shown
                        pass

    threading.Thread(target=work, name="ablate-align-warm", daemon=True).start()
