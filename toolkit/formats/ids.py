"""Recording ids: which ones CTM and STM lines can carry, and how two ids that look alike differ."""

from __future__ import annotations

import unicodedata

from toolkit.core.names import path_name_problem


def recording_id_problem(recording_id: str) -> str | None:
    """Why ``recording_id`` cannot be written to (and read back from) a CTM or STM line, or ``None``.

    Those formats split lines on whitespace and treat ``;;`` as a comment, so an id must be one
    non-empty token of printable characters that does not start with ``;;``.
    """
    if not recording_id:
        return "the recording id is empty"
    if any(ch.isspace() for ch in recording_id):
        return (
            f"recording id {recording_id!r} contains whitespace, which CTM and STM lines cannot carry; "
            f"rename it to {'_'.join(recording_id.split()) or '_'!r}"
        )
    if any(unicodedata.category(ch).startswith("C") for ch in recording_id):
        return f"recording id {recording_id!r} contains a control or invisible character ({code_points(recording_id)})"
    if recording_id.startswith(";;"):
        return f"recording id {recording_id!r} starts with ';;', which CTM and STM read as a comment"
    return path_name_problem(recording_id, "recording id")  # it names the files of its results too


def code_points(text: str) -> str:
    """``U+0061 U+0303 ...``: what a name is made of, for names that look identical but are not."""
    return " ".join(f"U+{ord(ch):04X}" for ch in text)


def describe_difference(first: str, second: str) -> str:
    """A hint for two ids that differ; spells out code points when they only differ in Unicode normalization."""
    if first != second and unicodedata.normalize("NFC", first) == unicodedata.normalize("NFC", second):
        return (
            f" (they differ in Unicode normalization: {first!r} is {code_points(first)}, "
            f"{second!r} is {code_points(second)}; save both names in NFC)"
        )
    return ""
