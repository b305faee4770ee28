"""Named Silero profiles: ``[vad_profiles.NAME]`` written out once, named by ``vad_profile = "NAME"``.

Four places take Silero settings: a whisperx recognizer's ``decoding.silero``, the ``vad`` stage
(inline, beside its merge keys), the windows' ``pauses.vad`` and the onset repair's ``vad``. Each
may name a profile instead of copying the table. The loader puts the profile's table where the
copy stood before anything is built, so configurations, run records and cache keys are exactly
those of the copied tables; copied (inline) tables still load.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from toolkit.audio.vad import SileroVadConfig
from toolkit.core.config import build_config
from toolkit.core.errors import InputError

PROFILES = "vad_profiles"
REFERENCE = "vad_profile"
SILERO_FIELDS = tuple(f.name for f in fields(SileroVadConfig))


@dataclass(frozen=True)
class ProfileSite:
    """A table that may name a profile; ``into`` is the key its Silero table goes under (None: inline)."""

    where: str
    table: dict[str, Any]
    into: str | None


def resolve_vad_profiles(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """``raw`` with every ``vad_profile = "NAME"`` replaced by that profile's table (``raw`` is not changed).

    Refused in one line naming the file and table: an unknown profile (the known ones listed), a
    profile that is not a complete, valid Silero table, a reference beside inline Silero fields
    (neither would win), and a profile no table names (it would look as if it decided something).
    """
    resolved = _copy_tables(raw)
    profiles = _profiles(resolved.pop(PROFILES, {}), path)
    used: set[str] = set()
    for site in _sites(resolved):
        if REFERENCE in site.table:
            used.add(_substitute(site, profiles, path))
    unused = [name for name in profiles if name not in used]
    if unused:
        raise InputError(
            path,
            f"[{PROFILES}.{unused[0]}] is never used: name it with {REFERENCE} = {unused[0]!r} where Silero "
            "settings go, or remove it",
        )
    return resolved


def _profiles(section: Any, path: Path) -> dict[str, dict[str, Any]]:
    """Each ``[vad_profiles.NAME]`` table, checked now as a complete Silero table."""
    if not isinstance(section, dict):
        raise InputError(path, f"[{PROFILES}] must hold tables of Silero parameters, not {section!r}"[:200])
    for name, table in section.items():
        if not isinstance(table, dict):
            raise InputError(path, f"[{PROFILES}.{name}] must be a table of Silero parameters, not {table!r}"[:200])
        build_config(SileroVadConfig, table, path=path, where=f"{PROFILES}.{name}")
    return section


def _sites(raw: dict[str, Any]) -> Iterator[ProfileSite]:
    """Every table where Silero settings go (a ``vad_profile`` anywhere else is refused as an unknown key)."""
    for name, recognizer in _entries(raw, "recognizers"):
        if recognizer.get("backend") == "whisperx" and isinstance(recognizer.get("decoding"), dict):
            yield ProfileSite(f"recognizers.{name}.decoding", recognizer["decoding"], "silero")
    for name, component in _entries(raw, "components"):
        stage = component.get("stage")
        if stage == "vad":
            yield ProfileSite(f"components.{name}", component, None)
        elif stage == "onset_repair":
            yield ProfileSite(f"components.{name}", component, "vad")
        elif stage == "windows" and isinstance(component.get("pauses"), dict):
            yield ProfileSite(f"components.{name}.pauses", component["pauses"], "vad")


def _entries(raw: dict[str, Any], key: str) -> Iterator[tuple[str, dict[str, Any]]]:
    section = raw.get(key)
    if isinstance(section, dict):  # anything else is refused by the loader with its own message
        yield from ((name, table) for name, table in section.items() if isinstance(table, dict))


def _substitute(site: ProfileSite, profiles: dict[str, dict[str, Any]], path: Path) -> str:
    """Put the named profile's table into ``site``; returns the profile's name."""
    name = site.table.pop(REFERENCE)
    if not isinstance(name, str) or name not in profiles:
        known = ", ".join(profiles) or f"none (no [{PROFILES}] table)"
        raise InputError(path, f"[{site.where}] {REFERENCE} = {name!r} is not a profile; profiles: {known}"[:300])
    inline = [key for key in SILERO_FIELDS if key in site.table] if site.into is None else []
    if inline or (site.into is not None and site.into in site.table):
        what = f"Silero field(s) {', '.join(inline)}" if inline else f"a {site.into} table"
        raise InputError(
            path,
            f"[{site.where}] names {REFERENCE} = {name!r} and also sets {what}: neither wins; "
            f"change [{PROFILES}.{name}] or drop {REFERENCE} and write the table out",
        )
    if site.into is None:
        site.table.update(profiles[name])
    else:
        site.table[site.into] = dict(profiles[name])
    return name


def _copy_tables(value: Any) -> Any:
    """A copy of the parsed TOML's nested tables (lists and scalars are never changed, so shared)."""
    if isinstance(value, dict):
        return {key: _copy_tables(item) for key, item in value.items()}
    return value


def profile_table(name: str, config: SileroVadConfig) -> str:
    """``config`` written out as the TOML table ``[vad_profiles.NAME]`` (every field, in field order)."""
    lines = [f"[{PROFILES}.{name}]"] + [f"{key} = {json.dumps(getattr(config, key))}" for key in SILERO_FIELDS]
    return "\n".join(lines) + "\n"
