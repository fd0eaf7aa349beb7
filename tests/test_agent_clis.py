"""The real agent CLIs, pinned, read what `aoti-debug install` wrote: servers connected or enabled, skills found.

Claude Code and Codex run through npx in isolated HOMEs (one per scope, installed once per module) with a
clean environment: no API key or token of the developer's reaches them, and none is needed for these
commands. npx keeps its cache in the developer's own npm cache, so only the first run downloads.
Where each agent looks for skills is read from the agent itself: Claude Code's debug log names the skill
folders it loaded and how many skills each held; Codex's `debug prompt-input` prints the model-visible
skills catalog with each skill's SKILL.md path; with an HTTP server it also carries the server's
instructions, which Codex gets only by connecting (a stdio server's are not waited for there).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from aoti_debug.install.register import NAME
from test_remote import ALIAS, sshd, write_ssh_config  # noqa: F401 (sshd is a fixture)

tomllib = pytest.importorskip("tomllib")

# Checked with `npm view <package> version` on 2026-11-23.
CLAUDE_VERSION = "2.1.330"
CODEX_VERSION = "0.169.0"
CLAUDE = ["npx", "-y", "-p", "node@22", "-p", f"@anthropic-ai/claude-code@{CLAUDE_VERSION}", "claude"]
CODEX = ["npx", "-y", "-p", "node@22", "-p", f"@openai/codex@{CODEX_VERSION}", "codex"]
# First use downloads Node 22 and the CLIs from the npm registry; later runs start in seconds.
NPX_TIMEOUT_S = 300
# npx caches under $HOME/.npm: keep the developer's cache while HOME points at a throwaway folder.
NPM_CACHE = os.environ.get("npm_config_cache") or str(Path.home() / ".npm")
# The server's instructions, which Codex puts in the model's prompt once it has connected to the server.
INSTRUCTIONS_START = "aoti-debug triages AOTInductor"

pytestmark = [
    pytest.mark.node,
    pytest.mark.spawns,
    pytest.mark.xdist_group("agent_clis"),  # one worker: each install (module fixture) happens once
    pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed: the agent CLIs "
                                                           "come from the npm registry through npx"),
]


def _env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: only what the CLIs need, so no credential of the developer's is ever used."""
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
            "npm_config_cache": NPM_CACHE, "npm_config_update_notifier": "false", **extra}


def _run(cli: list[str], *args: str, home: Path, cwd: Path, ok: bool = True, **extra: str) -> str:
    out = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=NPX_TIMEOUT_S, cwd=cwd,
                         env=_env(home, **extra), stdin=subprocess.DEVNULL)
    if ok:
        assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def _install(home: Path, project: Path, *args: str) -> dict:
    exe = shutil.which("aoti-debug") or str(Path(sys.executable).parent / "aoti-debug")
    out = subprocess.run([exe, "install", "--agent", "all", "--json", *args], capture_output=True, text=True,
                         cwd=project, env=_env(home), timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _setup(tmp: Path, scope: str, *args: str) -> SimpleNamespace:
    home, project = tmp / "home", tmp / "project"
    home.mkdir()
    project.mkdir()
    res = _install(home, project, "--scope", scope, *args)
    dirs = {a["agent"]: Path(a["skill_dir"]) for a in res["agents"]}
    return SimpleNamespace(home=home, project=project, result=res, skill=dirs)


@pytest.fixture(scope="module")
def user(tmp_path_factory) -> SimpleNamespace:
    """`install --agent all --scope user` into a fresh HOME."""
    return _setup(tmp_path_factory.mktemp("user"), "user")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> SimpleNamespace:
    """`install --agent all --scope project` into a fresh project, marked trusted for Codex as its prompt would."""
    s = _setup(tmp_path_factory.mktemp("project"), "project")
    (s.home / ".codex").mkdir()
    trust = f'[projects.{json.dumps(str(s.project))}]\ntrust_level = "trusted"\n'
    (s.home / ".codex" / "config.toml").write_text(trust)
    return s


def _shown(s: SimpleNamespace) -> str:
    server = s.result["server"]
    return " ".join([server["command"], *server["args"]])


def test_claude_mcp_list_reports_the_user_scope_server_connected(user) -> None:
    out = _run(CLAUDE, "mcp", "list", home=user.home, cwd=user.project)
    assert f"{NAME}: {_shown(user)} - ✔ Connected" in out.splitlines(), out


def test_claude_mcp_get_shows_the_project_entry_and_it_connects_once_approved(project) -> None:
    out = _run(CLAUDE, "mcp", "get", NAME, home=project.home, cwd=project.project)
    lines = [line.strip() for line in out.splitlines()]
    assert "Scope: Project config (shared via .mcp.json)" in lines, out
    assert any(line.startswith("Status:") and "Pending approval" in line for line in lines), out
    assert f"Command: {project.result['server']['command']}" in lines
    assert f"Args: {' '.join(project.result['server']['args'])}" in lines
    # What accepting the trust dialog and approving the server writes to ~/.claude.json.
    state = json.loads((project.home / ".claude.json").read_text())
    state.setdefault("projects", {})[str(project.project)] = {"hasTrustDialogAccepted": True,
                                                              "enabledMcpjsonServers": [NAME]}
    (project.home / ".claude.json").write_text(json.dumps(state))
    listed = _run(CLAUDE, "mcp", "list", home=project.home, cwd=project.project)
    assert f"{NAME}: {_shown(project)} - ✔ Connected" in listed.splitlines(), listed


def _codex_servers(s: SimpleNamespace) -> dict:
    listed = json.loads(_run(CODEX, "mcp", "list", "--json", home=s.home, cwd=s.project))
    return {entry["name"]: entry for entry in listed}


@pytest.mark.parametrize("which", ["user", "project"])
def test_codex_mcp_list_shows_the_server_enabled(which, request) -> None:
    s = request.getfixturevalue(which)
    entry = _codex_servers(s)[NAME]
    assert entry["enabled"] is True
    assert entry["transport"]["command"] == s.result["server"]["command"]
    assert entry["transport"]["args"] == s.result["server"]["args"]
    assert (entry["startup_timeout_sec"], entry["tool_timeout_sec"]) == (20, 300)


def _claude_skill_log(s: SimpleNamespace, tmp_path: Path) -> str:
    """Claude Code's debug log of a start: not logged in, it stops before any request, after loading skills."""
    log = tmp_path / "claude-debug.log"
    _run(CLAUDE, "--debug-file", str(log), "-p", "hi", home=s.home, cwd=s.project, ok=False)
    return log.read_text(errors="replace")


@pytest.mark.parametrize("which", ["user", "project"])
def test_claude_code_loads_the_skill_from_the_folder_install_wrote(which, request, tmp_path) -> None:
    s = request.getfixturevalue(which)
    log = _claude_skill_log(s, tmp_path)
    where = re.search(r"Loading skills from: managed=\S+, user=(?P<user>\S+), project=\[(?P<project>[^\]]*)\]", log)
    counts = re.search(r"Loaded \d+ unique skills \(.*user: (?P<user>\d+), project: (?P<project>\d+),", log)
    assert where and counts, log[-3000:]
    folders = {"user": [where["user"]], "project": [p.strip() for p in where["project"].split(",") if p.strip()]}
    assert str(s.skill["claude-code"].parent) in folders[which]
    assert (int(counts["user"]), int(counts["project"])) == ((1, 0) if which == "user" else (0, 1))


@pytest.mark.parametrize("which", ["user", "project"])
def test_codex_lists_the_skill_from_the_folder_install_wrote(which, request) -> None:
    s = request.getfixturevalue(which)
    prompt = _run(CODEX, "debug", "prompt-input", home=s.home, cwd=s.project)
    text = "\n".join(item["text"] for msg in json.loads(prompt) for item in msg.get("content", [])
                     if isinstance(item, dict) and "text" in item)
    roots = dict(re.findall(r"^- `(r\d+)` = `([^`]+)`$", text, re.M))
    skill = re.search(rf"^- {re.escape(NAME)}: .* \(file: (r\d+)/{re.escape(NAME)}/SKILL\.md\)$", text, re.M)
    assert skill and skill[1] in roots, text[-3000:]
    assert Path(roots[skill[1]]) / NAME == s.skill["codex"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serves_with_auth() -> bool:
    exe = shutil.which("aoti-debug") or str(Path(sys.executable).parent / "aoti-debug")
    out = subprocess.run([exe, "serve", "--help"], capture_output=True, text=True, timeout=60)
    return "--auth-token-file" in out.stdout


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    """`aoti-debug serve --transport streamable-http` with a bearer token; `install --url --token-file` for it."""
    if not _serves_with_auth():
        print("SKIP REASON: aoti-debug serve has no --auth-token-file (the HTTP bearer token is not in this build)")
        pytest.skip("aoti-debug serve has no --auth-token-file yet: HTTP registrations are checked once it has")
    tmp = tmp_path_factory.mktemp("http")
    token = tmp / "http_token"
    token.write_text("t0k3n-" + os.urandom(16).hex() + "\n")
    token.chmod(0o600)
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "aoti_debug", "serve", "--transport", "streamable-http",
                               "--port", str(port), "--root", str(tmp), "--auth-token-file", str(token)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        s = _setup(tmp, "user", "--url", f"http://127.0.0.1:{port}/mcp", "--token-file", str(token))
        s.token = token
        yield s
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_claude_code_connects_to_the_http_server_with_the_token_its_helper_reads(http) -> None:
    out = _run(CLAUDE, "mcp", "list", home=http.home, cwd=http.project)
    assert f"{NAME}: {http.result['server']['url']} (HTTP) - ✔ Connected" in out.splitlines(), out
    token = http.token.read_text()
    assert token.strip() not in (http.home / ".claude.json").read_text(), "the token stays in its file"
    http.token.write_text("not-the-token\n")  # the helper reads the file at each connection
    try:
        refused = _run(CLAUDE, "mcp", "list", home=http.home, cwd=http.project, ok=False)
    finally:
        http.token.write_text(token)
    assert f"{NAME}: {http.result['server']['url']} (HTTP) - ✘ Failed to connect" in refused, refused


def test_codex_connects_to_the_http_server_with_the_token_its_helper_reads(http) -> None:
    entry = _codex_servers(http)[NAME]
    assert entry["enabled"] is True and entry["transport"]["url"] == http.result["server"]["url"]
    assert entry["transport"]["http_headers_helper"] == "<redacted>", "Codex took the helper (and hides it)"
    assert http.token.read_text().strip() not in (http.home / ".codex" / "config.toml").read_text()
    prompt = _run(CODEX, "debug", "prompt-input", home=http.home, cwd=http.project)
    assert INSTRUCTIONS_START in prompt, "Codex did not get the server's instructions: it did not connect"


def test_claude_code_starts_the_server_over_ssh_from_the_registration_install_wrote(sshd, tmp_path) -> None:  # noqa: F811
    """The remote case with the real agent: Claude Code runs `ssh ... gpuhost ... aoti-debug serve` and connects."""
    home, project, root = tmp_path / "home", tmp_path / "project", tmp_path / "repros"
    for d in (home, project, root):
        d.mkdir()
    config = write_ssh_config(home, sshd)
    res = _install(home, project, "--scope", "user", "--remote", ALIAS, "--ssh-config", str(config), "--root",
                   str(root))
    out = _run(CLAUDE, "mcp", "list", home=home, cwd=project)
    connected = [line for line in out.splitlines() if line.startswith(f"{NAME}: ssh ")]
    assert connected and connected[0].endswith("- ✔ Connected"), out
    assert res["server"]["remote"] == ALIAS
