"""One rule for every name that becomes part of a path: arms, components, recognizers, experiments, recordings;
and one wording for a name that is not one of those known, with the closest one suggested.

A name must be one plain path component, so no output of a run can leave its experiment folder:
not empty, not ``.`` or ``..``, no ``/`` or ``\\``, no control or invisible characters, not starting
with ``.`` (hidden) or ``-`` (read as an option), at most 100 characters.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Sequence

MAX_LENGTH = 100
LISTED = 12  # names listed in a refusal; a longer list ends with how many there are


def path_name_problem(name: object, what: str) -> str | None:
    """Why ``name`` cannot name a file or folder of a run (``what``: "arm", "recording id", ...), or None."""
    if not isinstance(name, str) or not name:
        return f"{what} name must be a non-empty string, not {name!r}"
    shown = repr(name[:40] + ("…" if len(name) > 40 else ""))
    if name in (".", "..") or "/" in name or "\\" in name:
        return f"{what} name {shown} must be a plain name, not a path (no '/', '\\\\', '.' or '..')"
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        return f"{what} name {shown} contains a control or invisible character"
    if name.startswith((".", "-")):
        return f"{what} name {shown} must not start with '.' or '-'"
    if len(name) > MAX_LENGTH:
        return f"{what} name {shown} is longer than {MAX_LENGTH} characters"
    return None


def did_you_mean(given: str, known: Sequence[str]) -> str:
    """``; did you mean 'tuning'?`` for the one of ``known`` closest to ``given`` (difflib's ratio, at least
    0.6), or "" when none is close: the one suggestion every refusal of a name makes. Names equally close
    are all offered, in ``known``'s order, up to three (more than that, and any choice would be a guess)."""
    close = difflib.get_close_matches(given, known, n=max(len(known), 1))
    if not close:
        return ""
    best = _similarity(given, close[0])
    closest = {name for name in close if _similarity(given, name) == best}
    tied = [name for name in dict.fromkeys(known) if name in closest]
    if len(tied) > 3:
        return ""
    offered = " or ".join(filter(None, (", ".join(map(repr, tied[:-1])), repr(tied[-1]))))
    return f"; did you mean {offered}?"


def _similarity(first: str, second: str) -> float:
    return difflib.SequenceMatcher(None, second, first).ratio()  # the order get_close_matches compares in


def unknown_name(what: str, given: str, known: Sequence[str], plural: str = "") -> str:
    """A name the user gave that is none of ``known``, e.g. ``no split 'tunning'; did you mean 'tuning'?
    (splits: tuning, holdout)``; ``plural`` defaults to ``what`` + "s"."""
    hint = did_you_mean(given, known)
    shown = ", ".join(known[:LISTED]) + (f", … ({len(known)} in all)" if len(known) > LISTED else "")
    return f"no {what} {given!r}{hint}{'  ' if hint else ' '}({plural or what + 's'}: {shown or 'none'})"
