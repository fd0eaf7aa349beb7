"""rerun_with_flags and get_run through an in-memory MCP client: progress, cancellation, polling, refusals."""

from __future__ import annotations

import textwrap
from pathlib import Path

import anyio
import pytest
from aoti_debug.mcp.app import build_server
from mcp import Client
from test_proc import assert_all_gone

pytestmark = [pytest.mark.spawns, pytest.mark.anyio]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    return r


@pytest.fixture
def server(root):
    return build_server([root])


def write(root: Path, code: str) -> None:
    (root / "repro.py").write_text(textwrap.dedent(code))


async def test_the_tools_carry_their_annotations_and_output_schemas(server) -> None:
    async with Client(server, raise_exceptions=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        a = tools["rerun_with_flags"].annotations
        hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
        assert hints == (False, False, True, False)
        g = tools["get_run"].annotations
        assert (g.read_only_hint, g.open_world_hint) == (True, False)
        props = tools["rerun_with_flags"].output_schema["properties"]
        assert {"run_id", "status", "flags", "not_applied", "signal", "classification", "baseline"} <= set(props)
        assert "ctx" not in tools["rerun_with_flags"].input_schema["properties"]


async def test_a_run_reports_progress_then_a_classified_result_and_its_log_resource(server, root) -> None:
    write(root, """
        import sys, time
        for i in range(3):
            print("step", i, "x" * 200, flush=True)
            time.sleep(1)
        print("Error: input_handles[0]: unmatched dim value at 1, expected: 8, but got: 12", file=sys.stderr)
        sys.exit(1)
    """)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen.append((p, total, message))

    async with Client(server, raise_exceptions=True) as client:
        result = await client.call_tool("rerun_with_flags", {"argv": ["python", "repro.py"], "presets": ["sanity"]},
                                        progress_callback=progress)
        assert not result.is_error
        r = result.structured_content
        assert r["status"] == "failed" and r["exit_code"] == 1
        assert r["classification"]["pattern"] == "input_shape_mismatch"
        assert len(seen) >= 2 and [s[0] for s in seen] == sorted(s[0] for s in seen)
        assert "bytes of output" in seen[-1][2] and seen[-1][2].startswith("run:")
        log = await client.read_resource(r["log_uri"])
        assert "unmatched dim value" in log.contents[0].text


async def test_a_call_cancelled_by_the_client_leaves_no_process_behind(server, root) -> None:
    write(root, """
        import os, subprocess, time
        kid = subprocess.Popen(["sleep", "300"])
        open("pids", "w").write(f"{os.getpid()} {kid.pid}")
        time.sleep(300)
    """)
    async with Client(server, raise_exceptions=True) as client:
        with anyio.move_on_after(30) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "rerun_with_flags", {"argv": ["python", "repro.py"], "timeout_s": 120})
                while not (root / "pids").exists():
                    await anyio.sleep(0.1)
                tg.cancel_scope.cancel()
        assert not scope.cancelled_caught
        # the client returns at once; the server kills the tree when the cancellation reaches it
        assert_all_gone([int(p) for p in (root / "pids").read_text().split()], settle_s=10)


async def test_a_client_timeout_cancels_the_run_too(server, root) -> None:
    write(root, "import os, time\nopen('pid', 'w').write(str(os.getpid()))\ntime.sleep(300)\n")
    async with Client(server) as client:
        with pytest.raises(Exception):  # noqa: B017 - the SDK's timeout error type is not part of our contract
            await client.call_tool("rerun_with_flags", {"argv": ["python", "repro.py"]}, read_timeout_seconds=2)
        assert_all_gone([int((root / "pid").read_text())], settle_s=10)


async def test_wait_false_returns_a_run_id_that_get_run_polls_to_the_end(server, root) -> None:
    write(root, "import time\nprint('started', flush=True)\ntime.sleep(1.5)\nprint('finished')\n")
    async with Client(server, raise_exceptions=True) as client:
        first = (await client.call_tool("rerun_with_flags", {"argv": ["python", "repro.py"], "wait": False}))
        r = first.structured_content
        assert r["status"] == "running" and r["run_id"]
        for _ in range(100):
            r = (await client.call_tool("get_run", {"run_id": r["run_id"]})).structured_content
            if r["status"] != "running":
                break
            await anyio.sleep(0.2)
        assert r["status"] == "ok" and "finished" in r["stdout_tail"]


@pytest.mark.parametrize("args, message", [
    ({"argv": ["python", "repro.py"], "flags": {"LD_PRELOAD": "/tmp/x.so"}}, "'LD_PRELOAD' is not an allowed"),
    ({"argv": ["python", "../outside.py"]}, "outside the allowed roots"),
    ({"argv": ["python", "repro.py"], "presets": ["nope"]}, "unknown preset"),
    ({"argv": ["python", "repro.py"], "timeout_s": 99999}, "less than or equal"),
])
async def test_refused_requests_are_tool_errors_the_model_can_read(server, root, args, message) -> None:
    write(root, "print(1)\n")
    (root.parent / "outside.py").write_text("print(1)\n")
    async with Client(server) as client:
        result = await client.call_tool("rerun_with_flags", args)
        assert result.is_error and message in result.content[0].text


async def test_get_run_of_an_unknown_id_is_a_tool_error(server) -> None:
    async with Client(server) as client:
        result = await client.call_tool("get_run", {"run_id": "20990101-000000-abcdef"})
        assert result.is_error and "no run" in result.content[0].text
