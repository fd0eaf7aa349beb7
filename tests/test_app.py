"""The MCP server through real clients: in memory, over stdio, and with the server process checked for torch."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys

import pytest
from aoti_debug.classify.guides import PATTERN_IDS, load_guides
from aoti_debug.common.paths import guides_digest, guides_dir, project_root, skill_file
from aoti_debug.mcp import startcache
from aoti_debug.mcp.app import build_server
from mcp import Client, StdioServerParameters

CPU_OOB = "Error: index out of bounds: 0 <= tmp7 < 2L"


@pytest.fixture
def server(tmp_path):
    return build_server([tmp_path])


@pytest.mark.anyio
async def test_classify_error_returns_the_typed_model_with_all_annotations_set(server) -> None:
    async with Client(server, raise_exceptions=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        tool = tools["classify_error"]
        ann = tool.annotations
        assert (ann.read_only_hint, ann.destructive_hint, ann.idempotent_hint, ann.open_world_hint) == (
            True, False, True, False)
        assert {"pattern", "confidence", "alternatives", "evidence", "fields", "guide", "next_steps"} <= set(
            tool.output_schema["properties"])
        result = await client.call_tool("classify_error", {"log_text": CPU_OOB})
        assert not result.is_error
        assert result.structured_content["pattern"] == "triton_index_out_of_bounds"
        assert result.structured_content["guide"]["uri"] == "aoti-guide://triton_index_out_of_bounds"


@pytest.mark.anyio
@pytest.mark.parametrize("args, message", [
    ({}, "exactly one of log_text or log_path"),
    ({"log_text": "  "}, "empty"),
    ({"log_path": "/etc/passwd"}, "outside the allowed roots"),
    ({"log_path": "missing.log"}, "no such log file"),
])
async def test_bad_input_is_a_tool_error_the_model_can_read(server, args, message) -> None:
    async with Client(server) as client:
        result = await client.call_tool("classify_error", args)
        assert result.is_error
        assert message in result.content[0].text


@pytest.mark.anyio
async def test_a_log_file_inside_the_roots_is_classified(server, tmp_path) -> None:
    (tmp_path / "run.log").write_text(f"starting\n{CPU_OOB}\n")
    async with Client(server, raise_exceptions=True) as client:
        result = await client.call_tool("classify_error", {"log_path": "run.log"})
        assert result.structured_content["evidence"][0]["line"] == 2


@pytest.mark.anyio
async def test_a_symlink_escaping_the_roots_is_refused(server, tmp_path) -> None:
    (tmp_path / "link.log").symlink_to("/etc/hostname")
    async with Client(server) as client:
        result = await client.call_tool("classify_error", {"log_path": "link.log"})
        assert result.is_error and "outside the allowed roots" in result.content[0].text


@pytest.mark.anyio
async def test_every_guide_and_the_skill_are_markdown_resources(server) -> None:
    async with Client(server, raise_exceptions=True) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        for pid in PATTERN_IDS:
            assert f"aoti-guide://{pid}" in listed
        assert "aoti-skill://SKILL.md" in listed
        guide = await client.read_resource("aoti-guide://triton_index_out_of_bounds")
        content = guide.contents[0]
        assert content.mime_type == "text/markdown"
        assert content.text == load_guides()["triton_index_out_of_bounds"].text


@pytest.mark.anyio
async def test_the_triage_prompt_carries_the_log_and_the_flow(server) -> None:
    async with Client(server, raise_exceptions=True) as client:
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert "triage_crash" in prompts
        got = await client.get_prompt("triage_crash", {"error_log": CPU_OOB, "repro_command": "python r.py"})
        text = got.messages[0].content.text
        assert CPU_OOB in text and "classify_error" in text and "check_parity" in text


@pytest.mark.anyio
async def test_the_published_tools_and_resources_are_the_ones_generated_without_the_start_cache(tmp_path) -> None:
    async with Client(build_server([tmp_path]), raise_exceptions=True) as cached, \
            Client(build_server([tmp_path], cached=False), raise_exceptions=True) as fresh:
        published = [t.model_dump() for t in (await cached.list_tools()).tools]
        generated = [t.model_dump() for t in (await fresh.list_tools()).tools]
        assert published == generated, "stale server/aoti_debug/data/start_cache.json: aoti-debug guide --write-skill"
        assert all(t["output_schema"] for t in published)
        resources = [[r.model_dump() for r in (await c.list_resources()).resources] for c in (cached, fresh)]
        assert resources[0] == resources[1] and len(resources[0]) == len(load_guides()) + 1
        assert startcache.load()["guides_digest"] == guides_digest(guides_dir())
        # the return model is imported on the first call, and the result is validated against it
        result = await cached.call_tool("classify_error", {"log_text": CPU_OOB})
        assert result.structured_content["pattern"] == "triton_index_out_of_bounds"


@pytest.mark.anyio
async def test_guides_edited_after_the_cache_was_written_are_parsed_afresh(tmp_path, monkeypatch) -> None:
    root = tmp_path / "data"
    shutil.copytree(guides_dir(), root / "guides")
    shutil.copy(skill_file(), root / "SKILL.md")
    guide = root / "guides" / "nan_inf.md"
    guide.write_text(re.sub(r"(?m)^title: .*$", "title: NaN or Inf, edited", guide.read_text(), count=1))
    monkeypatch.setenv("AOTI_DEBUG_DATA_ROOT", str(root))
    project_root.cache_clear()
    load_guides.cache_clear()  # both remember this process's earlier answers
    try:
        async with Client(build_server([tmp_path]), raise_exceptions=True) as client:
            listed = {str(r.uri): r for r in (await client.list_resources()).resources}
            assert listed["aoti-guide://nan_inf"].title == "NaN or Inf, edited"
            text = (await client.read_resource("aoti-guide://nan_inf")).contents[0].text
            assert "NaN or Inf, edited" in text
    finally:
        monkeypatch.undo()
        project_root.cache_clear()
        load_guides.cache_clear()


@pytest.mark.spawns
def test_a_server_start_imports_no_engine_yaml_or_torch() -> None:
    probe = ("import sys, aoti_debug.mcp.app as a; a.build_server(); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('aoti_debug', 'yaml', 'torch')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    loaded = set(ast.literal_eval(out.stdout.strip()))
    assert loaded == {"aoti_debug", "aoti_debug.version", "aoti_debug.common", "aoti_debug.common.errors",
                      "aoti_debug.common.limits", "aoti_debug.common.paths", "aoti_debug.common.roots",
                      "aoti_debug.mcp", "aoti_debug.mcp.app", "aoti_debug.mcp.startcache",
                      "aoti_debug.runs", "aoti_debug.runs.probe"}, out.stderr


@pytest.mark.anyio
@pytest.mark.spawns
async def test_the_stdio_server_answers_a_real_client_and_never_imports_torch(tmp_path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "aoti_debug", "serve", "--root", str(tmp_path)])
    async with Client(params, raise_exceptions=True) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "classify_error" in names
        result = await client.call_tool("classify_error", {"log_text": CPU_OOB})
        assert result.structured_content["pattern"] == "triton_index_out_of_bounds"
    probe = ("import sys, aoti_debug.mcp.app as a, aoti_debug.cli as c; s = a.build_server(); "
             "c.build_parser(); assert 'torch' not in sys.modules, 'torch imported'; print('ok')")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_a_tool_whose_annotation_and_published_model_differ_is_refused_at_registration() -> None:
    from mcp.server import MCPServer

    def classify_error(log_text: str) -> Classification:  # noqa: F821 (a string under postponed annotations)
        return log_text

    with pytest.raises(TypeError, match="annotated -> Classification but publishes aoti_debug.runs.model:RunResult"):
        startcache.cached_tool(MCPServer("t"), {}, "aoti_debug.runs.model:RunResult")(classify_error)
