"""Shared fixtures: the anyio backend for MCP tests and the cached real AOTI packages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/pkgs.py and friends


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
