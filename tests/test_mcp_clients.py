"""Third-party MCP clients against the real server: the Inspector CLI over stdio, the conformance suite over HTTP."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

INSPECTOR = ["npx", "-y", "-p", "node@22", "-p", "@modelcontextprotocol/inspector@2.12.0", "mcp-inspector", "--cli"]
CONFORMANCE = ["npx", "-y", "-p", "node@22", "-p", "@modelcontextprotocol/conformance@0.1.16", "conformance", "server"]
BASELINE = Path(__file__).resolve().parent / "conformance" / "baseline.yml"
# First use downloads Node 22 and the client packages from the npm registry.
NPX_TIMEOUT_S = 300

pytestmark = [
    pytest.mark.node,
    pytest.mark.spawns,
    pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed"),
]


def _inspector(tmp_path: Path, *method: str) -> dict:
    """One Inspector CLI call against `python -m aoti_debug serve` over stdio, in a throwaway HOME."""
    server = [sys.executable, "-m", "aoti_debug", "serve", "--root", str(tmp_path)]
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    out = subprocess.run([*INSPECTOR, *server, "--", *method, "--format", "json"], capture_output=True, text=True,
                         timeout=NPX_TIMEOUT_S, env={**os.environ, "HOME": str(home)}, cwd=tmp_path)
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    answer = json.loads(out.stdout)
    return answer.get("result", answer)


def test_the_inspector_lists_the_tools(tmp_path) -> None:
    listed = _inspector(tmp_path, "--method", "tools/list")
    names = {t["name"] for t in listed["tools"]}
    assert {"classify_error", "check_parity", "rerun_with_flags", "get_run"} <= names


def test_the_inspector_calls_classify_error(tmp_path) -> None:
    got = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "classify_error", "--tool-args-json",
                     json.dumps({"log_text": "Error: index out of bounds: 0 <= tmp7 < 2L"}))
    assert not got.get("isError")
    assert got["structuredContent"]["pattern"] == "triton_index_out_of_bounds"


def test_the_inspector_reads_a_guide_resource(tmp_path) -> None:
    got = _inspector(tmp_path, "--method", "resources/read", "--uri", "aoti-guide://cuda_illegal_memory_access")
    content = got["contents"][0]
    assert content["mimeType"] == "text/markdown" and "## What it means" in content["text"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_generic_conformance_scenarios_pass_over_streamable_http(tmp_path) -> None:
    port = _free_port()
    # The conformance runner sends no Authorization header: the unauthenticated loopback mode serves it.
    server = subprocess.Popen([sys.executable, "-m", "aoti_debug", "serve", "--transport", "streamable-http",
                               "--port", str(port), "--root", str(tmp_path), "--no-auth"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        out = subprocess.run([*CONFORMANCE, "--url", f"http://127.0.0.1:{port}/mcp", "--expected-failures",
                              str(BASELINE), "-o", str(tmp_path / "results")],
                             capture_output=True, text=True, timeout=NPX_TIMEOUT_S, cwd=tmp_path)
        assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
        assert "server-initialize: 1 passed" in out.stdout and "tools-list: 1 passed" in out.stdout
    finally:
        server.terminate()
        stdout, _ = server.communicate(timeout=10)
    assert stdout == b"", "the HTTP server must not print on stdout either"
