"""Dependencies point one way: no module of the package imports, even for type hints or lazily, one that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "toolkit"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
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
                if target in modules and target not in (name, "toolkit") and not (is_package and target.startswith(name + ".")):
                    targets.add(target)
        graph[name] = targets
    return graph


def test_no_import_cycles_between_modules():
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_the_scorer_never_imports_arms_evaluate_or_report():
    graph = _graph()
    scorer = [m for m in graph if m in ("toolkit.scoring", "toolkit.signature", "toolkit.score_options", "toolkit.align",
                                        "toolkit.api", "toolkit.alignment_view")
              or m.startswith(("toolkit.metrics", "toolkit.normalize"))]
    for module in scorer:
        assert not {t for t in graph[module] if t.startswith(("toolkit.arms", "toolkit.evaluate", "toolkit.report"))}, module
