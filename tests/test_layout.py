"""The package's shape: which package may import which (the layers), no import cycle, only the adapter imports
MCP, modules stay small and say what they are for."""

from __future__ import annotations

import ast
from pathlib import Path

import aoti_debug

PACKAGE = Path(aoti_debug.__file__).resolve().parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "_bundled" not in p.parts)
# Modules allowed past the cap, by name, with the reason.
MAX_LINES = 400
LONGER: dict[str, str] = {}


# Which package of aoti_debug may import which: the layers, bottom up. A new edge fails until it is written here
# (and in the importing package's __init__ docstring). Top-level modules count as a package of their own name.
ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "probes": set(),  # scripts run in the target Python: they import nothing of the server
    "classify": {"common"},
    "package": {"common"},
    "install": {"common"},
    "runs": {"common", "classify"},
    "parity": {"common", "package", "runs"},
    "kernels": {"common", "package", "runs"},
    "triage": {"common", "classify", "package", "runs", "parity", "kernels"},
    "mcp": {"common", "classify", "package", "runs", "parity", "kernels", "triage", "version"},
    "cli": {"common", "classify", "package", "runs", "parity", "kernels", "triage", "mcp", "install", "version"},
    "version": {"common"},
    "__init__": {"version"},
    "__main__": {"cli"},
}


def _part(module: str) -> str:
    """aoti_debug.runs.store -> runs; aoti_debug.version -> version; aoti_debug -> __init__."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def _targets(path: Path) -> set[str]:
    """The aoti_debug modules a file imports, also inside functions, and those it names as 'module:Class'."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "aoti_debug":
            if node.module == "aoti_debug":  # from aoti_debug import x: the module x, or a name of __init__
                found |= {f"aoti_debug.{a.name}" for a in node.names if (PACKAGE / a.name).exists()
                          or (PACKAGE / f"{a.name}.py").exists()} or {"aoti_debug"}
            else:  # from aoti_debug.pkg import mod: the module mod, else a name of aoti_debug.pkg
                base = PACKAGE.joinpath(*node.module.split(".")[1:])
                subs = {f"{node.module}.{a.name}" for a in node.names
                        if (base / f"{a.name}.py").exists() or (base / a.name / "__init__.py").exists()}
                found |= subs or {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "aoti_debug"}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.startswith("aoti_debug.") and ":" in node.value and " " not in node.value:
            found.add(node.value.partition(":")[0])
    return found


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _targets(p) for p in MODULES}


def test_every_package_imports_only_the_layers_its_row_allows() -> None:
    edges = {(_part(m), _part(t), m, t) for m, targets in _graph().items() for t in targets}
    bad = sorted(f"{m} -> {t}" for a, b, m, t in edges if a != b and b not in ALLOWED.get(a, set()))
    assert bad == []
    assert {_part(m) for m in _graph()} <= set(ALLOWED), "a new package needs its row in ALLOWED"


def test_the_module_import_graph_has_no_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                cycles.append(path[path.index(t):] + [t] if t in path else [m, t])
            elif t in graph and t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_every_subpackage_says_what_it_owns_and_may_import() -> None:
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        if "_bundled" in init.parts:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(doc) > 40 and ("import" in doc.lower()), init


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_mcp_package_imports_mcp() -> None:
    importers = {p.relative_to(PACKAGE).as_posix() for p in MODULES if "mcp" in _imports(p)}
    assert importers == {"mcp/app.py", "mcp/serve.py"}


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
