"""The registered command: install --remote, --remote-python, --launcher, --url/--token-file, and what each refuses."""

from __future__ import annotations

import json
import shlex
import subprocess
from types import SimpleNamespace

import pytest
from aoti_debug.cli import main
from aoti_debug.install.launch import REMOTE_CHECK, SSH_OPTIONS, STARTUP_S, default_command
from aoti_debug.install.register import NAME

tomllib = pytest.importorskip("tomllib")


@pytest.fixture
def env(tmp_path, monkeypatch) -> SimpleNamespace:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(), project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    token = tmp_path / "http_token"
    token.write_text("s3cret-token\n")
    token.chmod(0o600)
    return SimpleNamespace(home=home, project=project, token=token)


def install(env: SimpleNamespace, capsys, *args: str) -> tuple[dict, dict, dict]:
    """(result, Claude Code entry, Codex table) of a project install for both agents."""
    assert main(["install", "--agent", "all", "--project-dir", str(env.project), "--json", *args]) == 0
    res = json.loads(capsys.readouterr().out)
    entry = json.loads((env.project / ".mcp.json").read_text())["mcpServers"][NAME]
    table = tomllib.loads((env.project / ".codex" / "config.toml").read_text())["mcp_servers"][NAME]
    return res, entry, table


def test_remote_registers_ssh_with_keepalives_and_one_quoted_remote_command(env, capsys) -> None:
    res, entry, table = install(env, capsys, "--remote", "me@gpu1", "--root", "/data/repros", "--root", "~/more",
                                "--env", "AOTI_DEBUG_HOME=/scratch/me/aoti")
    assert entry["command"] == table["command"] == "ssh"
    assert entry["args"] == table["args"] == [*SSH_OPTIONS, "me@gpu1", entry["args"][-1]]
    assert shlex.split(entry["args"][-1]) == ["env", "AOTI_DEBUG_HOME=/scratch/me/aoti", "sh", "-c", REMOTE_CHECK,
                                              "aoti-debug", "aoti-debug", "serve", "--root", "/data/repros",
                                              "--root", "~/more"]
    assert entry["env"] == {} and "env" not in table, "the variables are for the remote server, not the local ssh"
    assert table["startup_timeout_sec"] == STARTUP_S["remote"]
    notes = res["agents"][0]["notes"]
    assert any("paths in tool calls" in n and "me@gpu1" in n for n in notes)


def test_remote_python_runs_the_module_and_no_root_is_noted(env, capsys) -> None:
    res, entry, _ = install(env, capsys, "--remote", "gpu1", "--remote-python", "/opt/venvs/aoti/bin/python")
    assert shlex.split(entry["args"][-1])[3:] == ["aoti-debug", "/opt/venvs/aoti/bin/python", "-m", "aoti_debug",
                                                  "serve"]
    assert any(n.startswith("No --root") for n in res["agents"][0]["notes"])


def test_a_launcher_prefixes_the_server_locally_and_on_the_remote_host(env, capsys) -> None:
    res, entry, table = install(env, capsys, "--launcher", "srun -p gpu --gres=gpu:1 --time=60")
    assert entry["command"] == "srun"
    assert entry["args"] == ["-p", "gpu", "--gres=gpu:1", "--time=60", *default_command(), "serve", "--root",
                             str(env.project.resolve())]
    assert table["startup_timeout_sec"] == STARTUP_S["launcher"]
    assert any("MCP_TIMEOUT=300000" in n for n in res["agents"][0]["notes"])
    _, entry, _ = install(env, capsys, "--remote", "login1", "--launcher", "srun --gres=gpu:1", "--root", "/r")
    assert shlex.split(entry["args"][-1])[:4] == ["srun", "--gres=gpu:1", "sh", "-c"]


def test_a_launcher_that_asks_for_a_terminal_is_flagged(env, capsys) -> None:
    res, _, _ = install(env, capsys, "--launcher", "srun -p gpu --gres=gpu:1 --pty")
    assert any("--pty" in n and "breaks MCP over stdio" in n for n in res["agents"][0]["notes"])


@pytest.mark.spawns
def test_url_registers_http_with_a_helper_that_reads_the_token_file(env, capsys) -> None:
    res, entry, table = install(env, capsys, "--url", "https://gpu1.example:3001/mcp", "--token-file", str(env.token))
    assert entry["type"] == "http" and entry["url"] == table["url"] == "https://gpu1.example:3001/mcp"
    assert entry["headersHelper"] == table["http_headers_helper"]
    assert "s3cret" not in json.dumps(entry) + json.dumps(table), "the token stays in its file"
    # The command line both agents run at each connection; they send the JSON object it prints as headers.
    out = subprocess.run(["sh", "-c", entry["headersHelper"]], capture_output=True, text=True, timeout=30)
    assert json.loads(out.stdout) == {"Authorization": "Bearer s3cret-token"}
    assert res["server"]["transport"] == "http" and res["server"]["command"] is None


def test_a_readable_token_file_and_a_clear_text_url_to_another_host_are_flagged(env, capsys) -> None:
    env.token.chmod(0o644)
    res, _, _ = install(env, capsys, "--url", "http://10.1.2.3:3001/mcp", "--token-file", str(env.token))
    notes = " ".join(res["agents"][0]["notes"])
    assert "chmod 600" in notes and "clear text" in notes
    env.token.chmod(0o600)
    res, _, _ = install(env, capsys, "--url", "http://127.0.0.1:3001/mcp", "--token-file", str(env.token))
    notes = " ".join(res["agents"][0]["notes"])
    assert "chmod 600" not in notes and "clear text" not in notes


@pytest.mark.parametrize(("args", "says"), [
    (["--remote", "-oProxyCommand=touch /tmp/x"], "--remote wants [user@]host"),
    (["--remote", "gpu1", "--remote-python", "py", "--command", "aoti-debug"], "pass one"),
    (["--remote-python", "/usr/bin/python3"], "--remote-python goes with --remote"),
    (["--ssh-config", "/etc/hosts"], "--ssh-config goes with --remote"),
    (["--remote", "gpu1", "--ssh-config", "/no/such/config"], "is not a file"),
    (["--launcher", "srun 'unbalanced"], "--launcher: No closing quotation"),
    (["--url", "https://h:1/mcp"], "--url needs --token-file"),
    (["--url", "ftp://h/mcp", "--token-file", "TOKEN"], "--url wants http(s)://"),
    (["--url", "https://h:1/mcp", "--token-file", "TOKEN", "--remote", "gpu1"], "takes no --remote"),
    (["--url", "https://h:1/mcp", "--token-file", "/no/such/token"], "is not a file"),
    (["--token-file", "TOKEN"], "--token-file goes with --url"),
])
def test_contradictory_or_bad_options_are_refused_with_one_line_and_nothing_written(env, capsys, args, says) -> None:
    args = [str(env.token) if a == "TOKEN" else a for a in args]
    assert main(["install", "--agent", "all", "--project-dir", str(env.project), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("aoti-debug: error: ") and says in err and err.count("\n") == 1, err
    assert sorted(p.name for p in env.project.iterdir()) == []


def test_an_empty_token_file_is_refused(env, capsys) -> None:
    env.token.write_text("\n")
    assert main(["install", "--agent", "codex", "--project-dir", str(env.project), "--url", "https://h:1/mcp",
                 "--token-file", str(env.token)]) == 2
    assert "is empty" in capsys.readouterr().err
