"""Dependencies point one way, between modules and between subsystem folders.

Every import counts, at module level, inside a function or for type hints only, in the package and in
the app. The allowed folder dependencies are written once here (``ALLOWED``) and drawn in
docs/architecture.md, whose arrows a test holds to them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "toolkit"
APP = ROOT / "app"  # the Streamlit pages (shipped as toolkit/app, a link the walk below does not follow)

# Who may import whom: each subsystem (a folder of toolkit/, a top-level module, or the app) and the
# subsystems below it. "toolkit" is the package's own __init__: its version, and the public API
# (``toolkit.wer``...) that it loads from toolkit.api by name on first use, never on import.
ALLOWED: dict[str, set[str]] = {
    "toolkit": set(),
    "core": set(),
    "audio": {"core"},
    "formats": {"core", "scorer"},
    "corpus": {"core", "audio", "formats"},
    "scorer": {"toolkit", "core"},
    "asr": {"core", "audio", "formats"},
    "enhance": {"core", "audio"},
    "demo": {"core", "audio", "formats"},
    "runs": {"core", "formats", "scorer"},
    "pipeline": {"core", "audio", "formats", "corpus", "scorer", "asr", "enhance", "runs"},
    "explain": {"core", "runs", "scorer", "pipeline"},
    "report": {"core", "runs", "scorer", "explain"},
    "evaluate": {"core", "corpus", "runs", "scorer", "explain", "report"},
    "protocol": {"core", "audio", "corpus", "runs", "scorer", "pipeline", "evaluate", "report", "explain"},
    "adjudication": {"core", "audio", "corpus", "formats", "runs", "scorer", "pipeline"},
    "api": {"core", "formats", "scorer", "runs", "evaluate", "explain"},
    "app": {"core", "runs", "adjudication"},
}
TOP = {"cli", "__main__"}  # the command sits on everything


def _modules() -> dict[str, Path]:
    modules = {}
    for path in [*PACKAGE.rglob("*.py"), *APP.rglob("*.py")]:
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                candidates = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            else:
                continue
            for target in candidates:
                # A package re-exporting its own submodules is not a dependency between modules.
                if target in modules and target != name and not (is_package and target.startswith(name + ".")):
                    targets.add(target)
        graph[name] = targets
    return graph


def _subsystem(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "app":
        return "app"
    return parts[1] if len(parts) > 1 else "toolkit"


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    cycles: list[str] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def test_no_import_cycles_between_modules() -> None:
    graph = {m: {t for t in targets if t != "toolkit"} for m, targets in _graph().items()}
    assert _cycles(graph) == []


def test_subsystems_import_only_the_subsystems_below_them() -> None:
    graph = _graph()
    subsystems = {_subsystem(m) for m in graph}
    assert subsystems - TOP == set(ALLOWED), "a new subsystem needs its place in ALLOWED"
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if _subsystem(module) not in TOP
        and _subsystem(target) != _subsystem(module)
        and _subsystem(target) not in ALLOWED[_subsystem(module)]
    )
    assert wrong == []


def test_the_allowed_folder_graph_has_no_loop() -> None:
    assert _cycles({name: set(below) for name, below in ALLOWED.items()}) == []


def test_no_top_level_module_serves_one_subsystem_only() -> None:
    """A module directly in toolkit/ is a public face (api, evaluate) or the package itself, used widely."""
    top = {path.stem for path in PACKAGE.glob("*.py")}
    assert top == {"__init__", "__main__", "api", "evaluate"}


def _reach(arrows: dict[str, set[str]]) -> dict[str, set[str]]:
    """Every subsystem each one may reach through the arrows (an arrow means "may import")."""
    reach: dict[str, set[str]] = {}

    def below(name: str) -> set[str]:
        if name not in reach:
            reach[name] = set()
            for target in arrows.get(name, ()):
                reach[name] |= {target, *below(target)}
        return reach[name]

    for name in arrows:
        below(name)
    return reach


def _diagram() -> dict[str, set[str]]:
    """The arrows of docs/architecture.md's diagram: ``name[label] --> a & b``."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("```mermaid", 1)[1].split("```", 1)[0]
    arrows: dict[str, set[str]] = {}
    for line in block.splitlines():
        found = re.match(r"\s*(\w+)\[[^\]]*\](?:\s*-->\s*(.+))?\s*$", line)
        if found:
            arrows[found[1]] = {t.strip() for t in (found[2] or "").split("&") if t.strip()}
    return arrows


def test_the_architecture_diagram_draws_the_allowed_table() -> None:
    """The drawing leaves out arrows a longer path implies, but may reach exactly what ALLOWED lets each import."""
    drawn = _diagram()
    allowed = {name: below - {"toolkit"} for name, below in ALLOWED.items() if name != "toolkit"}
    assert set(drawn) == set(allowed) | {"cli"}
    drawn_reach, allowed_reach = _reach(drawn), _reach(allowed)
    assert {name: drawn_reach[name] for name in allowed} == allowed_reach
