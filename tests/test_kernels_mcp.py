"""dump_kernel_inputs and explain_index_oob through an in-memory MCP client: schemas, progress, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from aoti_debug.mcp.app import build_server
from kernel_runs import replay
from mcp import Client
from pkgs import ROOT

pytestmark = pytest.mark.anyio
GPU = ROOT / "tests" / "fixtures" / "gpu_capture"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def server(tmp_path):
    return build_server([ROOT, tmp_path])


async def test_both_tools_are_listed_with_annotations_and_output_schemas(server) -> None:
    async with Client(server, raise_exceptions=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        d, e = tools["dump_kernel_inputs"], tools["explain_index_oob"]
        ad, ae = d.annotations, e.annotations
        assert (ad.read_only_hint, ad.destructive_hint, ad.idempotent_hint, ad.open_world_hint) == (
            False, False, True, False)
        assert (ae.read_only_hint, ae.destructive_hint, ae.idempotent_hint, ae.open_world_hint) == (
            True, False, True, False)
        assert {"failing_kernel", "suspects", "launches", "explanation", "passes"} <= set(d.output_schema["properties"])
        assert {"kernel", "call_site", "bound", "root_cause", "markdown"} <= set(e.output_schema["properties"])
        assert "ctx" not in d.input_schema["properties"]


@pytest.mark.spawns
async def test_dump_kernel_inputs_reports_progress_then_the_suspect(server, tmp_path) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with Client(server, raise_exceptions=True) as client:
        r = await client.call_tool("dump_kernel_inputs", {"argv": replay("index_oob", "--slow"), "cwd": str(tmp_path)},
                                   progress_callback=on_progress)
    assert not r.is_error
    res = r.structured_content
    assert res["failing_kernel"] == "triton_poi_fused_add_addmm_embedding_relu_0"
    top = res["suspects"][0]
    assert (top["arg"], top["input_index"], top["value"], top["bound"]) == ("arg4_1", 1, 500, 100)
    assert seen and any("pass level 3" in (m or "") for _, m in seen)
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)


async def test_explain_index_oob_reads_a_package_and_a_log_inside_the_roots(server) -> None:
    async with Client(server, raise_exceptions=True) as client:
        r = await client.call_tool("explain_index_oob", {
            "package_path": str(GPU / "packages/dynamic_zero_below_min.base.pt2"),
            "log_path": str(GPU / "logs/dynamic_zero_below_min.base.log")})
        res = r.structured_content
        assert res["root_cause"] == "empty_dimension" and res["bound"]["input"] == "arg1_1"
        text = (GPU / "logs/index_oob.base.log").read_text()
        r2 = await client.call_tool("explain_index_oob", {"package_path": str(GPU / "packages/index_oob.base.pt2"),
                                                          "log_text": text})
        assert r2.structured_content["root_cause"] == "index_value_out_of_range"


@pytest.mark.parametrize("args, message", [
    ({"package_path": "x.pt2"}, "exactly one of log_text or log_path"),
    ({"package_path": "/etc", "log_text": "index out of bounds: 0 <= tmp1 < 2"}, "outside the allowed roots"),
    ({"package_path": str(GPU / "packages/index_oob.base.pt2"), "log_path": "missing.log"}, "no such log file"),
])
async def test_bad_input_is_a_tool_error_the_model_can_read(server, args, message) -> None:
    async with Client(server) as client:
        r = await client.call_tool("explain_index_oob", args)
        assert r.is_error and message in r.content[0].text


async def test_a_repro_outside_the_roots_is_refused_before_anything_runs(server, tmp_path) -> None:
    async with Client(server) as client:
        r = await client.call_tool("dump_kernel_inputs", {"argv": ["python", "/etc/hostname"], "cwd": str(tmp_path)})
        assert r.is_error and "outside the allowed roots" in r.content[0].text
