"""A digest of the code that turns reference and hypothesis files into scores, for the signature.

The signature names options, tables and library versions; this adds the code itself, so a rule
changed without a new normalizer version still changes the signature: equal signatures mean the
same scoring code. It covers ``toolkit/scorer`` (normalizer, alignment, metrics, audits) and
``toolkit/formats`` (how a file becomes words). Each module is hashed as its syntax tree without
docstrings, so comments, docstrings and formatting do not count, and every change to what runs does.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # the toolkit package
COVERED = ("scorer", "formats")


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


def module_digest(source: str) -> str:
    """sha256 of a module's syntax tree without docstrings (comments and layout never reach the tree)."""
    tree = _without_docstrings(ast.parse(source))
    return hashlib.sha256(ast.dump(tree, annotate_fields=False).encode("utf-8")).hexdigest()


def code_digest(package: Path = PACKAGE, folders: Sequence[str] = COVERED) -> str:
    """sha256 over every ``.py`` module of ``folders`` inside ``package``: relative path and module digest."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted((package / folder).rglob("*.py")):
            relative = path.relative_to(package).as_posix()
            digest.update(f"{relative}\0{module_digest(path.read_text(encoding='utf-8'))}\n".encode())
    return digest.hexdigest()


@cache
def scoring_code_digest() -> str:
    """The digest of this installation's scoring code (computed once per process)."""
    return code_digest()
