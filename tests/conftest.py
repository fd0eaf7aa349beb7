"""Shared fixtures and hooks: the anyio backend for MCP tests, the cached real AOTI packages, the `gpu` skip, and
the guard that fails a test which starts a process without the `spawns` marker."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/pkgs.py and friends

# Audit events (PEP 578) that start a process; a test that raises one during its setup or call must carry
# @pytest.mark.spawns (tests/README.md), so `-m "not spawns"` really runs no subprocess.
SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "os.fork",
                          "os.forkpty", "pty.spawn"})
_spawned: list[str] | None = None  # the current test's spawns, while one is watched


def _audit(event: str, args: tuple) -> None:
    if _spawned is not None and event in SPAWN_EVENTS:
        what = args[1] if event == "subprocess.Popen" and len(args) > 1 else args[0] if args else ""
        _spawned.append(f"{event} {what!r}"[:200])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


_home: str | None = None  # the run-store folder this process made, removed when the session ends


def pytest_configure(config: pytest.Config) -> None:
    # Run directories of tools under test never land in the user's ~/.cache: one folder for the session, made by
    # the process that starts it (xdist's workers inherit it) and removed by that process at the end.
    global _home
    if "AOTI_DEBUG_HOME" not in os.environ:
        _home = os.environ["AOTI_DEBUG_HOME"] = tempfile.mkdtemp(prefix="aoti-debug-tests-")
    sys.addaudithook(_audit)  # cannot be removed: it only records while a test is watched


def pytest_unconfigure(config: pytest.Config) -> None:
    if _home is not None:
        shutil.rmtree(_home, ignore_errors=True)
        os.environ.pop("AOTI_DEBUG_HOME", None)  # a later session in this process makes its own


def _cuda_available() -> bool:
    with warnings.catch_warnings():  # torch's import-time warnings are not the tests' (filterwarnings = error)
        warnings.simplefilter("ignore")
        try:
            import torch
        except ImportError:
            return False
        return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The real printer runs (tests/kernel_runs.py, four compiles) are cached per process: keep every test
    # that uses them on one xdist worker (--dist loadgroup) so they are compiled once.
    for item in items:
        if getattr(item.module, "cpu_dump", None) is not None:
            item.add_marker(pytest.mark.xdist_group("kernel_runs"))
    gpu = [item for item in items if item.get_closest_marker("gpu")]
    if gpu and not _cuda_available():
        for item in gpu:
            item.add_marker(pytest.mark.skip(reason="no CUDA GPU"))


def _watch(item: pytest.Item):
    global _spawned
    _spawned = []
    try:
        result = yield
    finally:
        seen, _spawned = _spawned, None
    if seen and item.get_closest_marker("spawns") is None:
        pytest.fail(f"{item.nodeid} started a process without @pytest.mark.spawns: " + "; ".join(seen[:3]),
                    pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    return (yield from _watch(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    return (yield from _watch(item))
