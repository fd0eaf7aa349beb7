"""Fuzz the MCP interface with random and mutated argv, paths, flags, archives and logs (fixed seed, bounded count;
tests/fuzz_long.py runs the same cases longer). Every call answers in time, a refusal says why, nothing crashes,
and no code runs that the root check did not see."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import anyio
import pytest
from aoti_debug.mcp.app import build_server
from fuzz_cases import case, check, setup
from mcp import Client

pytestmark = [pytest.mark.spawns, pytest.mark.anyio]

SEED = int(os.environ.get("AOTI_DEBUG_FUZZ_SEED", "1311"))
COUNT = int(os.environ.get("AOTI_DEBUG_FUZZ_COUNT", "150"))
BUDGET_S = 30.0  # CI keeps the fuzz short: the count stops early once the budget is spent
CALL_LIMIT_S = 60.0


async def fuzz(root: Path, seed: int, count: int, budget_s: float) -> dict[str, int]:
    """Run count cases (or until budget_s); return how many calls each tool got and how many were refused."""
    rng = random.Random(seed)
    seen: dict[str, int] = {}
    t0 = time.monotonic()
    async with Client(build_server([root])) as client:
        for i in range(count):
            if time.monotonic() - t0 > budget_s:
                break
            name, args = case(rng, root, i)
            with anyio.fail_after(CALL_LIMIT_S):
                result = await client.call_tool(name, args)
            check(name, args, result, root)
            seen[name] = seen.get(name, 0) + 1
            seen["refused"] = seen.get("refused", 0) + bool(result.is_error)
    return seen


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


async def test_random_and_mutated_tool_calls_are_answered_refused_with_a_reason_or_run_inside_the_roots(
        tmp_path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    setup(root, outside)
    seen = await fuzz(root, SEED, COUNT, BUDGET_S)
    assert sum(v for k, v in seen.items() if k != "refused") >= 30, seen
    assert {"rerun_with_flags", "classify_error", "explain_index_oob", "check_parity"} <= set(seen), seen
