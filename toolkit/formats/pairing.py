"""Pair a reference file with a hypothesis file only when both are the same recording (and channel).

sclite's best-known trap is a silently wrong WER when the ids do not match. CTM, STM and JSON
files carry recording ids (CTM and STM also channels); a TextGrid or plain-text file is named
by its file stem. The two sides must agree, or the user names the recording (and channel)
explicitly; otherwise the pair is refused naming both ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.core.names import unknown_name
from toolkit.formats import hypothesis_json_id
from toolkit.formats.ctm import ctm_channels, read_ctm
from toolkit.formats.ids import describe_difference
from toolkit.formats.stm import read_stm, stm_channels


@dataclass(frozen=True)
class _Side:
    """What one file says about which recordings (and channels) it holds."""

    path: Path
    role: str  # "reference" or "hypothesis"
    ids: tuple[str, ...]  # recording ids carried in the file; empty when named by the file stem
    channels: dict[str, list[str]]  # channels per carried recording id (CTM/STM only)

    @property
    def named_by_stem(self) -> bool:
        return not self.ids

    def describe(self, recording_id: str | None = None) -> str:
        if self.named_by_stem:
            return f"{self.role} '{self.path.stem}' (named by its file name {self.path.name})"
        held = recording_id if recording_id is not None else ", ".join(self.ids)
        return f"{self.role} '{held}' (in {self.path.name})"


def pair_ids(
    reference_path: str | Path, hypothesis_path: str | Path, recording_id: str | None = None, channel: str | None = None
) -> tuple[str, str | None]:
    """The one recording id and channel both files hold, or an InputError naming both ids.

    ``recording_id`` and ``channel`` name them explicitly (a file without ids is then taken to be
    that recording); without them, the ids and channels the files carry must agree.
    """
    reference = _side(Path(reference_path), "reference")
    hypothesis = _side(Path(hypothesis_path), "hypothesis")
    chosen = recording_id if recording_id is not None else _agreed_id(reference, hypothesis)
    for side in (reference, hypothesis):
        if side.ids and chosen not in side.ids:
            look_alike = describe_difference(chosen, side.ids[0]) if len(side.ids) == 1 else ""
            raise InputError(side.path, f"{unknown_name('recording', chosen, side.ids)}{look_alike}")
    return chosen, _agreed_channel(reference, hypothesis, chosen, channel)


def _agreed_id(reference: _Side, hypothesis: _Side) -> str:
    def candidates(side: _Side) -> tuple[str, ...]:
        return side.ids or (side.path.stem,)

    ref_ids, hyp_ids = candidates(reference), candidates(hypothesis)
    for single, other in ((hyp_ids, ref_ids), (ref_ids, hyp_ids)):
        if len(single) == 1 and single[0] in other:
            return single[0]
    if len(ref_ids) == 1 and len(hyp_ids) == 1:
        raise InputError(
            hypothesis.path,
            f"{reference.describe()} and {hypothesis.describe()} are different "
            f"recordings{describe_difference(ref_ids[0], hyp_ids[0])}; "
            "if they are the same recording, name it with --id",
        )
    raise InputError(
        hypothesis.path,
        f"cannot tell which recording to score: {reference.describe()}, {hypothesis.describe()}; name it with --id",
    )


def _agreed_channel(reference: _Side, hypothesis: _Side, recording_id: str, channel: str | None) -> str | None:
    held = {side.role: side.channels.get(recording_id, []) for side in (reference, hypothesis)}
    if channel is not None:
        for side in (reference, hypothesis):
            if held[side.role] and channel not in held[side.role]:
                raise InputError(
                    side.path,
                    f"recording '{recording_id}' has no channel '{channel}' (channels: {', '.join(held[side.role])})",
                )
        return channel
    for side in (reference, hypothesis):
        if len(held[side.role]) > 1:
            raise InputError(
                side.path,
                f"recording '{recording_id}' is on channels {', '.join(held[side.role])}; choose one with --channel",
            )
    ref_channels, hyp_channels = held["reference"], held["hypothesis"]
    if ref_channels and hyp_channels and ref_channels != hyp_channels:
        raise InputError(
            hypothesis.path,
            f"reference '{recording_id}' is channel {ref_channels[0]} "
            f"(in {reference.path.name}), hypothesis '{recording_id}' is channel "
            f"{hyp_channels[0]}; if they are the same audio, name it with --channel",
        )
    agreed = ref_channels or hyp_channels
    return agreed[0] if agreed else None


def _side(path: Path, role: str) -> _Side:
    if not path.is_file():  # before any pairing by name: a missing file is not an id mismatch
        raise InputError(path, "file not found" if not path.exists() else "not a file")
    suffix = path.suffix.lower()
    if suffix == ".stm":
        references = read_stm(path)
        ids = tuple(sorted({recording for recording, _ in references}))
        return _Side(path, role, ids, {rid: stm_channels(references, rid) for rid in ids})
    if suffix == ".ctm":
        by_recording = read_ctm(path)
        return _Side(
            path, role, tuple(sorted(by_recording)), {rid: ctm_channels(words) for rid, words in by_recording.items()}
        )
    if suffix == ".json":
        return _Side(path, role, (hypothesis_json_id(path),), {})
    return _Side(path, role, (), {})
