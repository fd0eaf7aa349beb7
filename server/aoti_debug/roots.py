"""Allowed roots: every path a client names (log, script, working directory) must resolve inside one."""

from __future__ import annotations

import os
from pathlib import Path

from aoti_debug.errors import BadInput

ENV_ROOTS = "AOTI_DEBUG_ROOTS"
ENV_HOME = "AOTI_DEBUG_HOME"


def state_dir() -> Path:
    """Where runs and caches live: $AOTI_DEBUG_HOME, else ~/.cache/aoti-debug."""
    home = os.environ.get(ENV_HOME)
    base = Path(home) if home else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aoti-debug"
    return base.expanduser().resolve()


def runs_dir() -> Path:
    return state_dir() / "runs"


def configured_roots(cli_roots: list[str] | None = None, cwd: Path | None = None) -> list[Path]:
    """--root options plus $AOTI_DEBUG_ROOTS; the starting directory when neither is given."""
    raw = list(cli_roots or [])
    raw += [p for p in os.environ.get(ENV_ROOTS, "").split(os.pathsep) if p]
    if not raw:
        raw = [str(cwd or Path.cwd())]
    roots = []
    for r in raw:
        p = Path(r).expanduser()
        if not p.is_dir():
            raise BadInput(f"allowed root {r!r} is not a directory")
        roots.append(p.resolve())
    return roots


def check_path(path: str | Path, roots: list[Path], *, what: str = "path", base: Path | None = None) -> Path:
    """Resolve path (symlinks too) and require it inside a root or the runs folder; BadInput otherwise."""
    if isinstance(path, str) and "\x00" in path:
        raise BadInput(f"{what} contains a NUL byte")
    p = Path(path).expanduser()
    if not p.is_absolute():
        p = (base or roots[0]) / p
    resolved = p.resolve()
    for root in [*roots, runs_dir()]:
        if resolved == root or resolved.is_relative_to(root):
            return resolved
    allowed = ", ".join(str(r) for r in roots)
    raise BadInput(f"{what} {str(path)!r} resolves to {resolved}, outside the allowed roots ({allowed}); "
                   f"start the server with --root DIR or set {ENV_ROOTS}")
