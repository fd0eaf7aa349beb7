"""Attacks 8, 9 and 11 of issue 11 on runs: waited runs past the limit, a refused start that still made a run
directory and pruned, and a double-fork + setsid + scrubbed-environment escapee surviving the kill."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from aoti_debug.mcp.app import build_server
from aoti_debug.runs import store as runs
from aoti_debug.runs.proc import ProcSpec, run
from mcp import Client
from test_proc import assert_all_gone

pytestmark = [pytest.mark.spawns, pytest.mark.anyio]

SLEEPER = "import time, sys\nprint('up', flush=True)\ntime.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 30)\n"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    (r / "sleep.py").write_text(SLEEPER)
    return r


def _dirs(home: Path) -> set[str]:
    folder = home / "runs"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


async def test_waited_and_background_runs_share_one_limit_and_a_refused_start_creates_and_prunes_nothing(
        root, home, monkeypatch) -> None:
    old = [f"20000101-0000{i:02d}-abcdef" for i in range(runs.MAX_KEPT_RUNS)]
    for rid in old:  # finished runs: a start beyond MAX_KEPT_RUNS would prune the oldest
        (home / "runs" / rid).mkdir(parents=True)
    args = {"argv": ["python", "sleep.py", "8"], "cwd": str(root), "timeout_s": 30}
    # the limiter is per process: slots earlier tests on this pytest worker left behind are not this test's
    monkeypatch.setattr(runs, "_active", {})
    async with Client(build_server([root])) as client:
        results: list = []

        async def waited() -> None:
            results.append(await client.call_tool("rerun_with_flags", {**args, "wait": True}))

        async with anyio.create_task_group() as tg:
            for _ in range(runs.MAX_ACTIVE - 1):
                tg.start_soon(waited)
            with anyio.fail_after(60):
                while len(runs._active) < runs.MAX_ACTIVE - 1:
                    await anyio.sleep(0.1)
            bg = await client.call_tool("rerun_with_flags", {**args, "wait": False})
            assert not bg.is_error
            before = _dirs(home)
            for wait in (True, False):
                r = await client.call_tool("rerun_with_flags", {**args, "wait": wait})
                assert r.is_error and "already going" in r.content[0].text
            r = await client.call_tool("triage", {"argv": ["python", "sleep.py"], "cwd": str(root), "wait": False})
            assert r.is_error and "already going" in r.content[0].text
            assert _dirs(home) == before, "a refused start made or pruned a run directory"
            assert len(set(old) & before) == runs.MAX_KEPT_RUNS - runs.MAX_ACTIVE  # only accepted runs pruned
            await client.call_tool("get_run", {"run_id": bg.structured_content["run_id"]})
            runs.wait(bg.structured_content["run_id"], 60)
    assert not any(r.is_error for r in results)


ESCAPE = textwrap.dedent("""
    import os, sys, time
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode())
            os.execve("/bin/sleep", ["sleep", "300"], {})  # no run token, no environment at all
        os._exit(0)
    print("escapee", int(os.read(r, 32)), flush=True)
    time.sleep(300 if sys.argv[1] == "hang" else 0)
""")


def test_a_double_fork_setsid_exec_with_no_environment_is_killed_at_the_timeout(tmp_path) -> None:
    (tmp_path / "escape.py").write_text(ESCAPE)
    r = run(ProcSpec(argv=[sys.executable, str(tmp_path / "escape.py"), "hang"], timeout_s=3.0))
    assert r.timed_out
    pid = int(r.stdout_tail.split("escapee", 1)[1].split()[0])
    assert_all_gone([pid], settle_s=2)


SERVER_LIKE = textwrap.dedent("""
    import json, sys
    from aoti_debug.runs.proc import ProcSpec, run
    from aoti_debug.runs.proctree import adopt_orphans
    adopted = adopt_orphans()  # what aoti-debug serve does at start
    r = run(ProcSpec(argv=[sys.executable, sys.argv[1], "exit"], timeout_s=30))
    print(json.dumps({"adopted": adopted, "out": r.stdout_tail, "leftovers": r.leftovers_killed, "rc": r.returncode}))
""")


def test_an_escapee_left_behind_by_a_leader_that_exits_is_found_by_a_server_that_adopts_orphans(tmp_path) -> None:
    (tmp_path / "escape.py").write_text(ESCAPE)
    (tmp_path / "server_like.py").write_text(SERVER_LIKE)
    out = subprocess.run([sys.executable, str(tmp_path / "server_like.py"), str(tmp_path / "escape.py")],
                         capture_output=True, text=True, timeout=120)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["adopted"] and got["rc"] == 0 and got["leftovers"] >= 1
    assert_all_gone([int(got["out"].split("escapee", 1)[1].split()[0])], settle_s=2)
