"""Load a script that is not a module of a package (a benchmark, the GPU suite, a probe) by its path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load(relpath: str) -> ModuleType:
    """The module at ROOT/relpath, executed afresh; named after its file."""
    path = ROOT / relpath
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
