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
from toolkit.core.errors import InputError, Mistakes
from toolkit.pipeline.stage_registry import STAGES

PROFILES = "vad_profiles"
REFERENCE = "vad_profile"
SILERO_FIELDS = tuple(f.name for f in fields(SileroVadConfig))


@dataclass(frozen=True)
class ProfileSite:
    """A table that may name a profile; ``into`` is the key its Silero table goes under (None: inline);
    ``owner`` the recognizer or component it belongs to (``components.NAME``)."""

    where: str
    table: dict[str, Any]
    into: str | None
    owner: str


@dataclass(frozen=True)
class ResolvedProfiles:
    """The parsed file with every profile put in place, and the tables (``owner``s) whose profile could not
    be: those cannot be checked further without reporting a consequence as a mistake of their own."""

    raw: dict[str, Any]
    unsure: frozenset[str]


def resolve_vad_profiles(raw: dict[str, Any], path: Path, mistakes: Mistakes) -> ResolvedProfiles:
    """``raw`` with every ``vad_profile = "NAME"`` replaced by that profile's table (``raw`` is not changed).

    Refused, each in one line naming the file and table (all of them kept in ``mistakes``): an unknown
    profile (the known ones listed), a profile that is not a complete, valid Silero table, a reference
    beside inline Silero fields (neither would win), and a profile no table names (it would look as if it
    decided something). A reference to a profile that is itself refused is not a mistake of its own.
    """
    resolved = _copy_tables(raw)
    profiles, broken = _profiles(resolved.pop(PROFILES, {}), path, mistakes)
    used: set[str] = set()
    unsure: set[str] = set()
    for site in _sites(resolved):
        if REFERENCE not in site.table:
            continue
        name = site.table.pop(REFERENCE)
        named = name if isinstance(name, str) else None
        if named is not None:
            used.add(named)  # named, even where it cannot be put in place: not an unused profile
        if broken is None or named in broken or mistakes.check(_substitute, site, name, profiles, path) is None:
            unsure.add(site.owner)
    for name in profiles if broken is not None else ():
        if name not in used:
            mistakes.add(
                path,
                f"[{PROFILES}.{name}] is never used: name it with {REFERENCE} = {name!r} where Silero settings "
                "go, or remove it",
            )
    return ResolvedProfiles(resolved, frozenset(unsure))


def _profiles(section: Any, path: Path, mistakes: Mistakes) -> tuple[dict[str, dict[str, Any]], set[str] | None]:
    """Each ``[vad_profiles.NAME]`` table, checked now as a complete Silero table, and the names of those
    refused (None: the whole section was, so no reference can be checked)."""
    if not isinstance(section, dict):
        mistakes.add(path, f"[{PROFILES}] must hold tables of Silero parameters, not {section!r}"[:200])
        return {}, None
    broken = {name for name, table in section.items() if mistakes.check(_profile, name, table, path) is None}
    return section, broken


def _profile(name: str, table: Any, path: Path) -> SileroVadConfig:
    if not isinstance(table, dict):
        raise InputError(path, f"[{PROFILES}.{name}] must be a table of Silero parameters, not {table!r}"[:200])
    return build_config(SileroVadConfig, table, path=path, where=f"{PROFILES}.{name}")


def _sites(raw: dict[str, Any]) -> Iterator[ProfileSite]:
    """Every table where Silero settings go (a ``vad_profile`` anywhere else is refused as an unknown key)."""
    for name, recognizer in _entries(raw, "recognizers"):
        if recognizer.get("backend") == "whisperx" and isinstance(recognizer.get("decoding"), dict):
            yield ProfileSite(f"recognizers.{name}.decoding", recognizer["decoding"], "silero", f"recognizers.{name}")
    for name, component in _entries(raw, "components"):
        owner = f"components.{name}"
        stage = next((s for s in STAGES if s.name == component.get("stage")), None)  # unknown: the loader says so
        for site in stage.silero_sites() if stage is not None else ():
            table, where = component, owner
            for key in site[:-1]:
                inner = table.get(key)
                if not isinstance(inner, dict):
                    break
                table, where = inner, f"{where}.{key}"
            else:
                yield ProfileSite(where, table, site[-1] if site else None, owner)


def _entries(raw: dict[str, Any], key: str) -> Iterator[tuple[str, dict[str, Any]]]:
    section = raw.get(key)
    if isinstance(section, dict):  # anything else is refused by the loader with its own message
        yield from ((name, table) for name, table in section.items() if isinstance(table, dict))


def _substitute(site: ProfileSite, name: Any, profiles: dict[str, dict[str, Any]], path: Path) -> str:
    """Put the named profile's table into ``site``; returns the profile's name."""
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
