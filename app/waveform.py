"""What the player's waveform view is given: the listener's own marks and the lanes of word boundaries.

The view itself is ``components/waveform.js``; marks are stored through ``web.py``'s ``/api/marks``
(``toolkit.adjudication.marks``). A lane is a row of timed words (and turns) under the waveform:
the reference's or the listener's own transcription, and on the review page each arm's words
as the desk shows them. Only times inside the clip (the stretch with its context) are sent.
"""

from __future__ import annotations

from typing import Any

import web

from toolkit.adjudication.marks import MarkStore
from toolkit.adjudication.spans import CONTEXT_S
from toolkit.core.transcripts import Reference


def view(store_path: Any, annotator: str, recording_id: str, lanes: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``wave`` data of ``app_state.player``: where marks are stored, this listener's marks, the lanes."""
    marks = MarkStore(store_path).current(recording_id, annotator)
    return {"path": web.MARKS_PATH, "recording": recording_id, "marks": [m.to_json() for m in marks], "lanes": lanes}


def _inside(start: float | None, end: float | None, lo: float, hi: float) -> bool:
    return start is not None and end is not None and end > lo and start < hi


def transcript_lane(name: str, reference: Reference, start: float, end: float) -> dict[str, Any]:
    """A reference's (or a listener's transcription's) turns and timed words around ``[start, end]``."""
    lo, hi = start - CONTEXT_S, end + CONTEXT_S
    turns = [u for u in reference.utterances if _inside(u.start, u.end, lo, hi)]
    words = [w for w in reference.words if _inside(w.start, w.end, lo, hi)]
    return {
        "name": name,
        "turns": [{"start": u.start, "end": u.end, "text": u.text} for u in turns],
        "words": [{"start": w.start, "end": w.end, "text": w.text} for w in words],
    }


def arm_lanes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each arm's timed words as the review desk's rows hold them (``views/review.py``), edges included."""
    lanes = []
    for row in rows:
        steps = [*row.get("before", []), *row.get("steps", []), *row.get("after", [])]
        words = [
            {"start": s["hyp_start"], "end": s["hyp_end"], "text": s["hypothesis"]}
            for s in steps
            if s.get("hypothesis") and s.get("hyp_start") is not None and s.get("hyp_end") is not None
        ]
        lanes.append({"name": row["name"], "turns": [], "words": words})
    return lanes
