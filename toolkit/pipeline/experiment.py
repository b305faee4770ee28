"""The experiment file (TOML): manifest, recognizers, named components and arms.

An arm is a named list of components; a component is one configured pipeline stage with
every parameter written out. Everything is validated when the file is loaded, so an
unknown arm or stage, a wrong type or an out-of-range value stops the run before any
decoding starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from toolkit.core.data_files import parse_toml
from toolkit.core.errors import InputError, Mistakes
from toolkit.core.names import path_name_problem, unknown_name
from toolkit.core.text import read_text
from toolkit.pipeline.imported import ImportedArm, read_import
from toolkit.pipeline.stage import Stage, StageBase, StageConfig
from toolkit.pipeline.stage_registry import position, stage_named
from toolkit.pipeline.stages import WINDOWS
from toolkit.pipeline.vad_profiles import PROFILES, resolve_vad_profiles
from toolkit.scorer.options import ScoreOptions, checked_options

if TYPE_CHECKING:
    from toolkit.scorer.options import ScoreOptions

T = TypeVar("T")
C = TypeVar("C", bound=StageConfig)


@dataclass(frozen=True)
class RecognizerSpec:
    """A recognizer as the experiment names it: backend, model and decoding table."""

    name: str
    backend: str
    model: str
    label: str
    decoding: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "backend": self.backend,
            "model": self.model,
            "label": self.label,
            "decoding": self.decoding,
        }


@dataclass(frozen=True)
class Component:
    """A named, fully configured stage (one of toolkit.pipeline.stage_registry.STAGES)."""

    name: str
    stage: Stage
    config: StageConfig

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "stage": self.stage.name, "config": self.stage.identity(self.config)}


@dataclass(frozen=True)
class Arm:
    """A named pipeline; ``variant_of`` names the arm it reruns with a shifted window origin. An ``imported`` arm
    has no stages: its words are files made elsewhere (toolkit.pipeline.imported)."""

    name: str
    components: tuple[Component, ...]
    variant_of: str | None = None
    imported: ImportedArm | None = None

    def component(self, stage: Stage) -> Component | None:
        """The arm's component of ``stage`` (an arm has at most one per stage), or None."""
        return next((c for c in self.components if c.stage is stage), None)

    def config(self, stage: StageBase[C]) -> C | None:
        """The config of the arm's ``stage`` component, typed as that stage's, or None."""
        component = self.component(stage)
        return None if component is None else stage.own(component.config)

    def origin_variants(self) -> list[Arm]:
        """This arm rerun at each of its windows' shifted origins, named ``NAME@<origin>s``."""
        windows = self.component(WINDOWS)
        config = self.config(WINDOWS)
        if windows is None or config is None:
            return []
        variants = []
        for origin in config.shifted_origins_s:
            moved = Component(
                f"{windows.name}@{origin:g}s", WINDOWS, replace(config, origin_s=origin, shifted_origins_s=())
            )
            components = tuple(moved if c is windows else c for c in self.components)
            variants.append(Arm(f"{self.name}@{origin:g}s", components, variant_of=self.name))
        return variants

    def to_json(self) -> dict[str, Any]:
        data = {"name": self.name, "components": [c.to_json() for c in self.components], "variant_of": self.variant_of}
        return data if self.imported is None else {**data, "imported": self.imported.to_json()}


@dataclass
class Experiment:
    path: Path
    name: str
    manifest_path: Path
    primary: str
    recognizers: dict[str, RecognizerSpec]
    components: dict[str, Component]
    arms: dict[str, Arm]
    time_tolerance_s: float
    seed: int
    scoring: ScoreOptions = field(default_factory=ScoreOptions)  # the [scoring] table: how its runs are scored

    @property
    def folder(self) -> Path:
        return self.path.parent

    def score_options(self) -> ScoreOptions:
        """How this experiment's runs are scored (its ``[scoring]`` table): one place for every caller."""
        return self.scoring

    def select_arms(self, names: list[str] | None) -> list[Arm]:
        """The arms to run (``None``: every arm, in file order); unknown, repeated or no names are an error."""
        if names is None:
            return list(self.arms.values())
        if not names or any(not name for name in names):
            raise InputError(
                self.path, f"empty arm name in the arm list {','.join(names)!r}; name arms from {', '.join(self.arms)}"
            )
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise InputError(self.path, f"arm(s) {', '.join(repeated)} named more than once; each arm runs once")
        mistakes = Mistakes()
        for name in names:
            if name not in self.arms:
                mistakes.add(self.path, unknown_name("arm", name, list(self.arms)))
        mistakes.raise_found()
        return [self.arms[n] for n in names]


KNOWN_TOP_LEVEL = (
    "name",
    "manifest",
    "recognizer",
    "time_tolerance_s",
    "seed",
    "recognizers",
    "components",
    "arms",
    "lexicon",
    "normalizer",
    "scoring",
    PROFILES,
)
REQUIRED_TOP_LEVEL = ("name", "manifest", "recognizer", "time_tolerance_s", "seed", "recognizers", "arms")


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate an experiment file (or a folder holding ``experiment.toml``).

    Every mistake the checks can find is reported at once, one line each; a check whose input is
    itself refused (an arm naming a broken component) is skipped, so nothing but a mistake is reported.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "experiment.toml"
    if not path.is_file():
        raise InputError(path, "experiment file not found")
    mistakes = Mistakes()
    parsed = parse_toml(read_text(path), path)
    unknown = sorted(set(parsed) - set(KNOWN_TOP_LEVEL))
    if unknown:
        mistakes.add(path, f"unknown top-level key(s) {', '.join(unknown)}")
    profiles = resolve_vad_profiles(parsed, path, mistakes)
    raw = profiles.raw
    for key in REQUIRED_TOP_LEVEL:
        if key not in raw:
            mistakes.add(path, f"missing required key '{key}'")

    def given(check: Callable[..., T], key: str, *args: Any) -> T | None:
        """``check(path, ..., raw[key])`` when the file sets ``key`` (its absence is a mistake above)."""
        return mistakes.check(check, path, *args, raw[key]) if key in raw else None

    name = given(_require_text, "name", "name")
    manifest = given(_require_text, "manifest", "manifest")
    primary = given(_require_text, "recognizer", "recognizer")
    if name is not None:
        mistakes.check(_require_path_name, path, "experiment", name)
    declared_recognizers = given(_section, "recognizers", "recognizers")
    recognizers = {
        key: spec
        for key, table in (declared_recognizers or {}).items()
        if f"recognizers.{key}" not in profiles.unsure
        and (spec := mistakes.check(_recognizer, path, key, table)) is not None
    }
    if primary is not None and declared_recognizers is not None and primary not in declared_recognizers:
        mistakes.add(path, f"recognizer = {primary!r} is not one of [recognizers]: {', '.join(declared_recognizers)}")
    declared_components = mistakes.check(_section, path, "components", raw.get("components", {}), False)
    components = {
        key: component
        for key, table in (declared_components or {}).items()
        if f"components.{key}" not in profiles.unsure
        and (component := mistakes.check(_component, path, key, table, declared_recognizers, primary)) is not None
    }
    arms: dict[str, Arm] = {}
    for key, members in (given(_arm_section, "arms") or {}).items():
        declared = mistakes.check(_arm, path, key, members, components, declared_components)
        for arm in (declared, *declared.origin_variants()) if declared is not None else ():
            arms[arm.name] = arm
    tolerance = given(_time_tolerance, "time_tolerance_s")
    seed = given(_seed, "seed")
    scoring = mistakes.check(_scoring, path, raw)
    mistakes.raise_found()
    assert name and manifest and primary and tolerance is not None and seed is not None and scoring is not None
    return Experiment(
        path=path,
        name=name,
        manifest_path=(path.parent / manifest),
        primary=primary,
        recognizers=recognizers,
        components=components,
        arms=arms,
        time_tolerance_s=tolerance,
        seed=seed,
        scoring=scoring,
    )


def _time_tolerance(path: Path, tolerance: Any) -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance <= 2:
        raise InputError(path, f"time_tolerance_s must be a number of seconds in [0, 2], not {tolerance!r}")
    return float(tolerance)


def _scoring_options(path: Path, given: dict[str, Any]) -> ScoreOptions:
    """``given`` through the scorer's one schema; its refusal as this file's one line."""
    try:
        return checked_options(given)
    except (TypeError, ValueError) as error:
        raise InputError(path, f"[scoring] {error}") from None


def _seed(path: Path, seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise InputError(path, f"seed must be an integer in [0, 2^32) (CTranslate2's seed), not {str(seed)[:24]}")
    return seed


def _scoring(path: Path, raw: dict[str, Any]) -> ScoreOptions:
    """The ``[scoring]`` table (any ScoreOptions field but ``names``, which each recording's reference
    gives), checked by the scorer's one schema; ``lexicon`` is a file beside the experiment, read now with
    the chosen normalizer so a bad line fails early. Top-level ``normalizer`` and ``lexicon`` (files
    written before the table existed) are read as if they were in it."""
    from toolkit.scorer.normalize.registry import POLICIES, normalizer

    table = raw.get("scoring", {})
    if not isinstance(table, dict):
        raise InputError(path, f"[scoring] must be a table of scoring options, not {table!r}"[:200])
    given = dict(table)
    for key in ("normalizer", "lexicon"):
        if key in raw:
            if key in table:
                raise InputError(path, f"{key} is set twice, at the top and in [scoring]: set it once, in [scoring]")
            given[key] = raw[key]
    if "names" in given:
        raise InputError(path, "[scoring] names: names come with each recording's reference (the manifest), not here")
    if "lexicon" in given:
        if not isinstance(given["lexicon"], str) or not given["lexicon"]:
            raise InputError(path, f"lexicon must be a file name (a string), not {given['lexicon']!r}")
        given["lexicon"] = (path.parent / given["lexicon"]).resolve()
    mistakes = Mistakes()
    for key, value in given.items():  # each option alone first: every bad one is reported, one line each
        mistakes.check(_scoring_options, path, {key: value})
    mistakes.raise_found()
    options = _scoring_options(path, given)
    if options.lexicon is not None:
        for policy in POLICIES:
            normalizer(policy, options.normalizer, options.lexicon)
    return options


def _require_path_name(path: Path, what: str, name: Any) -> None:
    """Names become folders and files of a run: one rule (toolkit.core.names) keeps them inside it."""
    problem = path_name_problem(name, what)
    if problem is not None:
        raise InputError(path, problem)


def _section(path: Path, key: str, section: Any, required: bool = True) -> dict[str, Any]:
    """The ``[key]`` table of named entries (each entry is checked on its own)."""
    if not isinstance(section, dict) or (required and not section):
        raise InputError(path, f"[{key}] must be a table with at least one entry")
    return section


def _entry(path: Path, key: str, name: str, table: Any) -> dict[str, Any]:
    """One named entry of ``[key]``: a name a run can use as a folder, and a table."""
    _require_path_name(path, key.rstrip("s"), name)
    if not isinstance(table, dict):
        raise InputError(path, f"[{key}.{name}] must be a table")
    return table


def _recognizer(path: Path, name: str, table: Any) -> RecognizerSpec:
    """``[recognizers.NAME]``: backend, label, and the backend's settings where its registry entry says they are
    (under ``[decoding]`` beside ``model``; or, for a command, in the table itself with ``model`` optional)."""
    from toolkit.asr.registry import BACKENDS
    from toolkit.pipeline.stages import check_recognizer

    _entry(path, "recognizers", name, table)
    known = BACKENDS.get(table.get("backend")) if isinstance(table.get("backend"), str) else None
    flat = known is not None and known.flat_table  # an unknown backend is refused by check_recognizer
    if flat:
        if "label" not in table:
            raise InputError(path, f"[recognizers.{name}] needs a label")
        settings = {k: v for k, v in table.items() if k not in ("backend", "label", "model")}
        table = {
            "backend": table["backend"],
            "label": table["label"],
            "model": table.get("model", ""),
            "decoding": settings,
        }
    expected = {"backend", "model", "label", "decoding"}
    if set(table) != expected:
        raise InputError(
            path, f"[recognizers.{name}] needs exactly {', '.join(sorted(expected))}; got {', '.join(sorted(table))}"
        )
    mistakes = Mistakes()
    for key in ("backend", "label") if flat and not table["model"] else ("backend", "model", "label"):
        mistakes.check(_require_text, path, f"recognizers.{name}.{key}", table[key])
    if not isinstance(table["decoding"], dict):
        mistakes.add(path, f"[recognizers.{name}.decoding] must be a table, not {table['decoding']!r}")
    mistakes.raise_found()  # the decoding table is checked against its backend's parameters
    spec = RecognizerSpec(
        name=name,
        backend=table["backend"],
        model=table["model"],
        label=table["label"],
        decoding=dict(table["decoding"]),
    )
    check_recognizer(spec, path=path)
    return spec


def _component(path: Path, name: str, table: Any, recognizers: dict[str, Any] | None, primary: str | None) -> Component:
    """``[components.NAME]``; the recognizers a stage decodes with are checked against the declared
    recognizers (``None``: their section was refused, so they cannot be)."""
    _entry(path, "components", name, table)
    where = f"components.{name}"
    stage = stage_named(table.get("stage"), path=path, where=where)
    config = stage.parse({k: v for k, v in table.items() if k != "stage"}, path=path, where=where)
    for recognizer in stage.recognizers(config):
        if recognizers is not None and (recognizer not in recognizers or recognizer == primary):
            other = f" other than the primary {primary!r}" if primary is not None else ""  # None: it was refused
            raise InputError(
                path,
                f"[{where}] recognizer {recognizer!r} must be one of [recognizers]{other}: {', '.join(recognizers)}",
            )
    return Component(name, stage, config)


def _require_text(path: Path, key: str, value: Any) -> str:
    """A key that must be a non-empty string (a name, a path, a label)."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, f"{key} must be a non-empty string, not {value!r}")
    return value


def _arm_section(path: Path, arms: Any) -> dict[str, Any]:
    if not isinstance(arms, dict) or not arms:
        raise InputError(path, "[arms] must name at least one arm")
    return arms


def _arm(
    path: Path, name: str, members: Any, components: dict[str, Component], declared: dict[str, Any] | None
) -> Arm | None:
    """The arm, or None when it names a component that was itself refused (``declared`` None: every one
    was), since what it would be cannot be known."""
    _require_path_name(path, "arm", name)
    if isinstance(members, dict):
        return _imported_arm(path, name, members)
    if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        raise InputError(
            path, f'arm {name!r} must be a list of component names (or {{ imported = "imported/{name}" }})'
        )
    if declared is None:
        return None
    unknown = [m for m in members if m not in declared]
    if unknown:
        raise InputError(
            path,
            f"arm {name!r} uses unknown component(s) {', '.join(unknown)}; "
            f"components are {', '.join(declared) or '(none)'}",
        )
    if any(m not in components for m in members):
        return None
    chosen = [components[m] for m in members]
    stages = [c.stage.name for c in chosen]
    repeated = sorted({s for s in stages if stages.count(s) > 1})
    if repeated:
        raise InputError(path, f"arm {name!r} has more than one {', '.join(repeated)} component")
    chosen.sort(key=lambda c: position(c.stage.name))
    return Arm(name, tuple(chosen))


def _imported_arm(path: Path, name: str, table: dict[str, Any]) -> Arm:
    """``NAME = { imported = "imported/NAME" }``: the arm ``ablate arms import`` copied into that folder."""
    from toolkit.pipeline.imported import FOLDER

    expected = f"{FOLDER}/{name}"
    if set(table) != {"imported"} or table["imported"] != expected:
        raise InputError(
            path, f"imported arm {name!r} must be written {name} = {{ imported = {expected!r} }} (ablate arms import)"
        )
    imported = read_import(path.parent / expected)
    if imported.record.arm != name:
        raise InputError(imported.folder, f"import record is for arm {imported.record.arm!r}, not {name!r}")
    return Arm(name, (), imported=imported)
