"""The package version, whose one source is pyproject.toml, and the line `aoti-debug --version` prints."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

NAME = "aoti-debug"
# The checkout this package sits in, when it does (server/aoti_debug/ -> the repository root).
_PYPROJECT = Path(__file__).resolve().parent.parent.parent / "pyproject.toml"
# The [project] table: from its header to the next table header (list items are indented, never at column 0).
_PROJECT_TABLE = re.compile(r"^\[project\][ \t]*$(.*?)(?=^\[|\Z)", re.M | re.S)


def _checkout_version() -> str | None:
    """[project] version of the pyproject.toml this package sits in (a checkout, editable or on PYTHONPATH)."""
    try:
        text = _PYPROJECT.read_text(encoding="utf-8")
    except OSError:
        return None
    table = _PROJECT_TABLE.search(text)
    if table is None or not re.search(rf'^name\s*=\s*"{NAME}"', table.group(1), re.M):
        return None
    m = re.search(r'^version\s*=\s*"([^"]+)"', table.group(1), re.M)
    return m.group(1) if m else None


@cache
def package_version() -> str:
    """The checkout's pyproject.toml first (an editable install's metadata goes stale when it is bumped), else the
    installed distribution's metadata (a wheel: generated from that same pyproject.toml)."""
    found = _checkout_version()
    if found:
        return found
    from importlib import metadata  # ~80 ms to import: only where there is no checkout to read

    try:
        return metadata.version(NAME)
    except metadata.PackageNotFoundError:
        return "0+unknown"


def describe() -> str:
    """`aoti-debug 0.1.0 (guides sha256 1a2b3c4d5e6f)`: the version and the digest of the guides it serves."""
    from aoti_debug.common.paths import guides_digest, guides_dir

    return f"{NAME} {package_version()} (guides sha256 {guides_digest(guides_dir())[:12]})"
