"""Where the guides, the skill and the examples live: the source checkout, else the copy inside the wheel."""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # server/aoti_debug/


@cache
def project_root() -> Path:
    """The folder holding SKILL.md and guides/ (a source checkout, or the bundle inside an installed wheel)."""
    override = os.environ.get("AOTI_DEBUG_DATA_ROOT")
    candidates = [Path(override)] if override else []
    candidates += [_PACKAGE.parent.parent, _PACKAGE / "_bundled"]
    for root in candidates:
        if (root / "guides").is_dir() and (root / "SKILL.md").is_file():
            return root
    raise FileNotFoundError(f"no guides/ and SKILL.md found in any of {[str(c) for c in candidates]}")


def guides_dir() -> Path:
    return project_root() / "guides"


def skill_file() -> Path:
    return project_root() / "SKILL.md"


def skill_dir() -> Path:
    return project_root() / "skill"


def examples_dir() -> Path:
    return project_root() / "examples"


def guides_digest(folder: Path) -> str:
    """sha256 over the guide files' names and bytes (a millisecond: no parsing)."""
    h = hashlib.sha256()
    for path in sorted(folder.glob("*.md")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
