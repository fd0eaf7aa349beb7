"""Shared fixtures: the anyio backend for MCP tests and the cached real AOTI packages."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/pkgs.py and friends


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_configure(config: pytest.Config) -> None:
    # Run directories of tools under test never land in the user's ~/.cache (one folder per xdist worker).
    os.environ.setdefault("AOTI_DEBUG_HOME", tempfile.mkdtemp(prefix="aoti-debug-tests-"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The real printer runs (tests/kernel_runs.py, four compiles) are cached per process: keep every test
    # that uses them on one xdist worker (--dist loadgroup) so they are compiled once.
    for item in items:
        if getattr(item.module, "cpu_dump", None) is not None:
            item.add_marker(pytest.mark.xdist_group("kernel_runs"))
