"""Attack 2 of issue 11: streamable HTTP without authentication. A real server on 127.0.0.1, the SDK's streamable
HTTP client with the bearer token, raw requests without it (401), and the refused binds."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

pytestmark = [pytest.mark.spawns, pytest.mark.anyio]

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(tmp_path: Path, *extra: str, home: Path | None = None) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    env = {**os.environ, "AOTI_DEBUG_HOME": str(home or tmp_path / "home")}
    server = subprocess.Popen([sys.executable, "-m", "aoti_debug", "serve", "--transport", "streamable-http",
                               "--port", str(port), "--root", str(tmp_path), *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, port
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise AssertionError(f"server did not start: {server.communicate()[1].decode()[-2000:]}") from None
            time.sleep(0.2)


def _stop(server: subprocess.Popen[bytes]) -> str:
    server.terminate()
    out, err = server.communicate(timeout=10)
    assert out == b"", "the HTTP server must not print on stdout"
    return err.decode()


def _post(port: int, headers: dict[str, str]) -> int:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=json.dumps(INIT).encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


async def _list_tools(port: int, token: str) -> list[str]:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client, streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return [t.name for t in (await session.list_tools()).tools]


async def test_the_first_start_writes_a_private_token_and_only_requests_carrying_it_get_in(tmp_path) -> None:
    server, port = _serve(tmp_path)
    try:
        token_file = tmp_path / "home" / "http_token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        assert len(token) >= 32
        assert _post(port, {}) == 401
        assert _post(port, {"Authorization": "Bearer wrong-token-of-some-length"}) == 401
        assert _post(port, {"Authorization": token}) == 401  # the scheme is part of the header
        assert _post(port, {"Authorization": f"Bearer {token}"}) == 200
        # DNS rebinding: the token does not make a foreign Host acceptable
        assert _post(port, {"Authorization": f"Bearer {token}", "Host": "evil.example:80"}) != 200
        assert "triage" in await _list_tools(port, token)
    finally:
        err = _stop(server)
    assert str(token_file) in err and "Authorization: Bearer" in err and token not in err


async def test_a_given_token_file_is_used_and_a_readable_one_is_refused(tmp_path) -> None:
    given = tmp_path / "tok"
    given.write_text("s3cret-token-for-this-test-0123456789\n")
    given.chmod(0o644)
    refused = subprocess.run([sys.executable, "-m", "aoti_debug", "serve", "--transport", "streamable-http",
                              "--port", str(_free_port()), "--auth-token-file", str(given)],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "chmod 600" in refused.stderr and "Traceback" not in refused.stderr
    given.chmod(0o600)
    server, port = _serve(tmp_path, "--auth-token-file", str(given))
    try:
        assert _post(port, {"Authorization": "Bearer s3cret-token-for-this-test-0123456789"}) == 200
        assert _post(port, {}) == 401
    finally:
        _stop(server)
    assert not (tmp_path / "home" / "http_token").exists()


def test_a_non_loopback_bind_needs_allow_remote_and_no_auth_is_loopback_only(tmp_path) -> None:
    base = [sys.executable, "-m", "aoti_debug", "serve", "--transport", "streamable-http", "--port",
            str(_free_port())]
    env = {**os.environ, "AOTI_DEBUG_HOME": str(tmp_path / "home")}
    for extra, why in ((["--host", "0.0.0.0"], "--allow-remote"),
                       (["--host", "0.0.0.0", "--allow-remote", "--no-auth"], "loopback bind only")):
        r = subprocess.run([*base, *extra], capture_output=True, text=True, timeout=60, env=env)
        assert r.returncode != 0 and why in r.stderr and "Traceback" not in r.stderr
