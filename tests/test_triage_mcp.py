"""triage through an in-memory MCP client: the contract, progress per step, wait=false polled with get_run."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from aoti_debug.mcp.app import build_server
from mcp import Client
from pkgs import build_example

pytestmark = [pytest.mark.anyio]

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "fixtures" / "gpu_capture" / "logs"
TOOLCHAIN = {"log_path": str(LOGS / "toolchain_segfault.base.log"), "exit_status": 139, "probe_runtime": False,
             "evidence_logs": {"backtrace": str(LOGS / "toolchain_segfault.cuda_gdb.log")}}
POLL_S = 0.5


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def server():
    return build_server([ROOT])


async def test_triage_carries_its_annotations_and_output_schema(server) -> None:
    async with Client(server, raise_exceptions=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        a = tools["triage"].annotations
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (False, False, True,
                                                                                                False)
        props = tools["triage"].output_schema["properties"]
        assert {"steps", "root_cause", "stopped_because", "markdown", "run_id", "tool_calls"} <= set(props)
        assert "ctx" not in tools["triage"].input_schema["properties"]


async def test_an_offline_toolchain_triage_reports_progress_per_step_and_ends_at_native_abi(server) -> None:
    seen: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    async with Client(server, raise_exceptions=True) as client:
        r = await client.call_tool("triage", TOOLCHAIN, progress_callback=progress)
    assert not r.is_error
    out = r.structured_content
    assert out["pattern"] == "native_abi" and out["root_cause"]["kind"] == "toolchain"
    assert out["stopped_because"] == "root_cause_named" and "CXX=/usr/bin/g++" in out["markdown"]
    assert [s["tool"] for s in out["steps"]] == ["classify_error", "rerun_with_flags", "check_parity",
                                                 "rerun_with_flags"]
    assert seen == ["step 1: classify_error", "step 2: rerun_with_flags faulthandler", "step 3: check_parity",
                    "step 4: rerun_with_flags backtrace"]


async def test_bad_input_is_a_tool_error_the_model_can_read(server, tmp_path) -> None:
    async with Client(server) as client:
        r = await client.call_tool("triage", {})
        assert r.is_error and "argv" in r.content[0].text
        r = await client.call_tool("triage", {"log_path": str(tmp_path / "nope.log")})
        assert r.is_error and "outside the allowed roots" in r.content[0].text


@pytest.mark.spawns
@pytest.mark.compiles
async def test_wait_false_returns_a_run_id_and_get_run_shows_the_steps_then_the_result(server) -> None:
    pkg = build_example("static_shape_mismatch")
    argv = [sys.executable, "examples/static_shape_mismatch.py", "--package", str(pkg), "--load-only"]
    async with Client(server, raise_exceptions=True) as client:
        started = (await client.call_tool("triage", {"argv": argv, "cwd": str(ROOT), "wait": False}))
        run_id = started.structured_content["run_id"]
        assert started.structured_content["status"] == "running" and "get_run" in started.structured_content[
            "next_step"]
        statuses = []
        with anyio.fail_after(280):
            while True:
                got = (await client.call_tool("get_run", {"run_id": run_id})).structured_content
                statuses.append(got["status"])
                if got["status"] != "running":
                    break
                assert got["progress"]["step"] and got["triage"]["status"] == "running"
                await anyio.sleep(POLL_S)
    assert statuses[0] == "running" and statuses[-1] == "ok"
    tri = got["triage"]
    assert tri["run_id"] == run_id and tri["root_cause"]["kind"] == "static_dim"
    assert tri["root_cause"]["named"] and tri["stopped_because"] == "root_cause_named"
