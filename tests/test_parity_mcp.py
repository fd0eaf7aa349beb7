"""check_parity through the in-memory MCP client: the typed report, roots, and bad input as tool errors."""

from __future__ import annotations

import json

import pytest
from aoti_debug.mcp.app import build_server
from mcp import Client
from pt2_fakes import make_pt2, metadata, model_files, wrapper_213

CPU_INPUTS = [{"dtype": "float32", "shape": [4, 8]}, {"dtype": "int64", "shape": [4]}]


@pytest.fixture
def server(tmp_path):
    return build_server([tmp_path])


@pytest.fixture
def cuda_pkg(tmp_path):
    return make_pt2(tmp_path / "cuda.pt2", model_files(wrapper_213(), metadata()))


@pytest.mark.anyio
async def test_check_parity_is_read_only_and_returns_the_report_model(server) -> None:
    async with Client(server, raise_exceptions=True) as client:
        tool = {t.name: t for t in (await client.list_tools()).tools}["check_parity"]
        ann = tool.annotations
        assert (ann.read_only_hint, ann.destructive_hint, ann.idempotent_hint, ann.open_world_hint) == (
            True, False, True, False)
        assert {"ok", "summary", "mismatches", "predicted_check_error", "inputs", "runtime", "package"} <= set(
            tool.output_schema["properties"])
        assert {"package_path", "inputs_path", "inputs", "load_device", "python", "model", "inputs_run"} == set(
            tool.input_schema["properties"])


@pytest.mark.anyio
@pytest.mark.spawns
async def test_cpu_inputs_for_a_cuda_package_are_reported_with_the_check_error_they_will_raise(
        server, cuda_pkg) -> None:
    async with Client(server, raise_exceptions=True) as client:
        result = await client.call_tool("check_parity", {"package_path": cuda_pkg.name, "inputs": CPU_INPUTS})
        report = result.structured_content
        assert not result.is_error and report["ok"] is False
        assert [m["kind"] for m in report["mismatches"] if m["input_index"] is not None] == [
            "device_type", "device_type"]
        assert report["predicted_check_error"] == (
            "input_handles[0]: unmatched device type, expected: 11(cuda), but got: 0")
        assert report["runtime"]["torch_version"] and report["package"]["models"][0]["device_key"] == "cuda"


@pytest.mark.anyio
@pytest.mark.spawns
async def test_an_inputs_json_file_inside_the_roots_is_read(server, cuda_pkg, tmp_path) -> None:
    (tmp_path / "inputs.json").write_text(json.dumps([{**i, "device": "cuda"} for i in CPU_INPUTS]))
    async with Client(server, raise_exceptions=True) as client:
        result = await client.call_tool("check_parity", {"package_path": str(cuda_pkg), "inputs_path": "inputs.json"})
        assert [i["status"] for i in result.structured_content["inputs"]] == ["ok", "ok"]


@pytest.mark.anyio
@pytest.mark.parametrize("args, message", [
    ({"package_path": "/etc/passwd"}, "outside the allowed roots"),
    ({"package_path": "missing.pt2"}, "no such package"),
    ({"package_path": "notzip.pt2"}, "not a readable zip"),
    ({"package_path": "cuda.pt2", "inputs_path": "/etc/hosts"}, "outside the allowed roots"),
    ({"package_path": "cuda.pt2", "model": "other"}, "no model 'other'"),
])
async def test_bad_input_is_a_tool_error_the_model_can_read(server, cuda_pkg, tmp_path, args, message) -> None:
    (tmp_path / "notzip.pt2").write_text("hello")
    async with Client(server) as client:
        result = await client.call_tool("check_parity", args)
        assert result.is_error and message in result.content[0].text
