"""The package's shape: only the adapter imports MCP, modules stay small and say what they are for."""

from __future__ import annotations

import ast
from pathlib import Path

import aoti_debug

PACKAGE = Path(aoti_debug.__file__).resolve().parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "_bundled" not in p.parts)
# Modules allowed past the cap, by name, with the reason.
MAX_LINES = 400
LONGER: dict[str, str] = {}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_adapter_imports_mcp() -> None:
    importers = {p.relative_to(PACKAGE).as_posix() for p in MODULES if "mcp" in _imports(p)}
    assert importers == {"app.py"}


def test_no_module_of_the_server_imports_torch() -> None:
    # Probe scripts run in the target Python as subprocesses; they are the only place torch may appear.
    importers = {p.relative_to(PACKAGE).as_posix() for p in MODULES if "torch" in _imports(p)}
    assert {m for m in importers if not m.startswith("probes/")} == set()


def test_modules_stay_under_the_line_cap_unless_listed() -> None:
    long = {p.relative_to(PACKAGE).as_posix(): n for p in MODULES
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert set(long) - set(LONGER) == set(), long


def test_every_module_opens_with_a_docstring() -> None:
    bare = [p.relative_to(PACKAGE).as_posix() for p in MODULES
            if p.name != "__main__.py" and ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) is None]
    assert bare == []
