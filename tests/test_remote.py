"""install --remote end to end: a real sshd on a loopback port, the registration install wrote, the SDK's stdio client.

The "remote" host is this machine, reached through `sshd -D` started by the test with a throwaway host key and
authorized key, and a Host alias in an isolated HOME's ~/.ssh/config, passed with --ssh-config (ssh reads
~/.ssh from the password database's home, not $HOME). sshd's SetEnv puts this virtual environment's bin/
first on the remote PATH, as on a GPU host where aoti-debug is installed.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import anyio
import pytest
from aoti_debug.cli import main
from aoti_debug.install.register import NAME
from mcp import Client, StdioServerParameters

tomllib = pytest.importorskip("tomllib")

# One worker runs them all, so one sshd serves the module under pytest-xdist's --dist loadgroup.
pytestmark = [pytest.mark.spawns, pytest.mark.xdist_group("sshd")]

# Debian's openssh-server puts it here; .ci/run installs it when it is missing.
SSHD = shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.path.exists(p)), None)
ALIAS = "gpuhost"
START_TIMEOUT_S = 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """sshd on 127.0.0.1:<free port> for the current user; yields what a client needs to reach it."""
    if SSHD is None or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        print("SKIP REASON: sshd/ssh/ssh-keygen not found (apt-get install openssh-server openssh-client)")
        pytest.skip("sshd, ssh or ssh-keygen is not installed (apt-get install openssh-server openssh-client)")
    if os.geteuid() == 0 and not Path("/run/sshd").is_dir():
        # sshd run as root insists on its privilege separation folder, which the package's service unit
        # creates at boot; a container never booted it.
        Path("/run/sshd").mkdir(mode=0o755, parents=True, exist_ok=True)
    d = tmp_path_factory.mktemp("sshd")
    for key in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)], check=True, timeout=30)
    (d / "authorized_keys").write_text((d / "client_key.pub").read_text())
    port = _free_port()
    venv_bin = Path(sys.executable).parent
    (d / "sshd_config").write_text(textwrap.dedent(f"""\
        Port {port}
        ListenAddress 127.0.0.1
        HostKey {d / "host_key"}
        PidFile {d / "sshd.pid"}
        AuthorizedKeysFile {d / "authorized_keys"}
        StrictModes no
        PubkeyAuthentication yes
        PasswordAuthentication no
        KbdInteractiveAuthentication no
        UsePAM no
        PermitRootLogin prohibit-password
        SetEnv PATH={venv_bin}:/usr/local/bin:/usr/bin:/bin
        LogLevel ERROR
    """))
    with open(d / "sshd.log", "wb") as log:
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stdout=subprocess.DEVNULL,
                                stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"sshd did not start: {(d / 'sshd.log').read_text(errors='replace')}")
                time.sleep(0.1)
        yield SimpleNamespace(port=port, key=d / "client_key", log=d / "sshd.log")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def client_home(sshd, tmp_path, monkeypatch) -> SimpleNamespace:
    """An isolated HOME whose ~/.ssh/config names the test sshd as Host gpuhost; a root folder on the "GPU host"."""
    home, project, root = tmp_path / "home", tmp_path / "project", tmp_path / "repros"
    for p in (home / ".ssh", project, root):
        p.mkdir(parents=True)
    write_ssh_config(home, sshd)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return SimpleNamespace(home=home, project=project, root=root, state=tmp_path / "remote-state")


def write_ssh_config(home: Path, sshd: SimpleNamespace) -> Path:
    """~/.ssh/config in an isolated home: Host gpuhost is the test sshd, its host key taken on trust."""
    config = home / ".ssh" / "config"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(textwrap.dedent(f"""\
        Host {ALIAS}
            HostName 127.0.0.1
            Port {sshd.port}
            User {_user()}
            IdentityFile {sshd.key}
            IdentitiesOnly yes
            StrictHostKeyChecking no
            UserKnownHostsFile /dev/null
            LogLevel ERROR
    """))
    config.chmod(0o600)
    return config


def _user() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


def _install(h: SimpleNamespace, capsys, *args: str) -> dict:
    code = main(["install", "--agent", "all", "--project-dir", str(h.project), "--json", "--remote", ALIAS,
                 "--ssh-config", str(h.home / ".ssh" / "config"), *args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def _registrations(h: SimpleNamespace) -> tuple[dict, dict]:
    entry = json.loads((h.project / ".mcp.json").read_text())["mcpServers"][NAME]
    table = tomllib.loads((h.project / ".codex" / "config.toml").read_text())["mcp_servers"][NAME]
    return entry, table


def _client_env(h: SimpleNamespace) -> dict[str, str]:
    # What the agent's environment holds: ssh finds ~/.ssh/config through HOME. Nothing reaches the remote
    # server through it (ssh forwards no variable here), so the server sees only what the registration says.
    return {"HOME": str(h.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@pytest.mark.anyio
async def test_the_registration_install_remote_wrote_lists_tools_classifies_and_reruns_over_ssh(
        client_home, capsys) -> None:
    h = client_home
    (h.root / "repro.py").write_text(
        "import sys\nprint('on the gpu host')\n"
        "print('Error: input_handles[0]: unmatched dim value at 1, expected: 8, but got: 12', file=sys.stderr)\n"
        "sys.exit(1)\n")
    res = _install(h, capsys, "--root", str(h.root), "--env", f"AOTI_DEBUG_HOME={h.state}")
    entry, table = _registrations(h)
    assert entry["command"] == table["command"] == "ssh" == res["server"]["command"]
    assert entry["args"] == table["args"] and entry["env"] == {} and "env" not in table
    assert ALIAS in entry["args"] and "BatchMode=yes" in entry["args"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=_client_env(h))
    async with Client(params, raise_exceptions=True) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"classify_error", "rerun_with_flags", "get_run"} <= names
        got = await client.call_tool("classify_error", {"log_text": "Error: index out of bounds: 0 <= tmp7 < 2L"})
        assert got.structured_content["pattern"] == "triton_index_out_of_bounds"
        run = await client.call_tool("rerun_with_flags", {"argv": [sys.executable, "repro.py"], "presets": ["sanity"],
                                                           "cwd": str(h.root)})
        r = run.structured_content
        assert not run.is_error and r["status"] == "failed" and r["exit_code"] == 1, r
        assert r["classification"]["pattern"] == "input_shape_mismatch"
        log = await client.read_resource(r["log_uri"])
        assert "on the gpu host" in log.contents[0].text
    # The run directory is where --env put it on the remote side: the variable crossed ssh in the command.
    assert (h.state / "runs" / r["run_id"] / "result.json").is_file()


@pytest.mark.anyio
async def test_remote_python_starts_the_server_as_python_m_aoti_debug(client_home, capsys) -> None:
    h = client_home
    _install(h, capsys, "--remote-python", sys.executable, "--root", str(h.root))
    entry, _ = _registrations(h)
    assert entry["args"][-1].endswith(f"{sys.executable} -m aoti_debug serve --root {h.root}")
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=_client_env(h))
    async with Client(params, raise_exceptions=True) as client:
        got = await client.call_tool("classify_error", {"log_text": "Error: index out of bounds: 0 <= tmp7 < 2L"})
        assert got.structured_content["pattern"] == "triton_index_out_of_bounds"


@pytest.mark.parametrize("how", [["--remote-python", "/nonexistent/venv/bin/python"],
                                 ["--command", "aoti-debug-not-installed"]])
def test_a_server_missing_on_the_remote_host_fails_with_one_clear_line(client_home, capsys, how) -> None:
    h = client_home
    _install(h, capsys, *how)
    entry, _ = _registrations(h)
    out = subprocess.run([entry["command"], *entry["args"]], env=_client_env(h), stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 127
    assert out.stdout == ""
    assert out.stderr.startswith(f"aoti-debug: {how[1]}: not found on "), out.stderr
    assert "install aoti-debug there" in out.stderr and out.stderr.count("\n") == 1


@pytest.mark.parametrize("root", ["/data/it's here", "~/repros; rm -rf ~", "$HOME/x `id`"])
def test_a_root_with_shell_characters_reaches_the_remote_server_as_one_literal_argument(
        client_home, capsys, root) -> None:
    h = client_home
    _install(h, capsys, "--root", root, "--launcher", "env AOTI_DEBUG_PROBE=1")
    entry, _ = _registrations(h)
    # The remote shell parses the last argument; a printing "server" shows what argv the real one would get.
    remote = entry["args"][-1].replace('exec "$@"', 'printf %s\\\\n "$@"')
    out = subprocess.run([entry["command"], *entry["args"][:-1], remote], env=_client_env(h),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["aoti-debug", "serve", "--root", root]


@pytest.mark.anyio
async def test_a_terminal_between_client_and_server_breaks_the_session_which_is_why_ssh_runs_with_T(
        client_home, capsys) -> None:
    """The evidence behind -T and the --pty warning: the same registration with a forced terminal (-tt) fails."""
    h = client_home
    _install(h, capsys, "--root", str(h.root))
    entry, _ = _registrations(h)
    assert entry["args"][0] == "-T"
    with_tty = StdioServerParameters(command="ssh", args=["-tt", *entry["args"][1:]], env=_client_env(h))
    with pytest.raises(Exception) as failed:  # noqa: B017 (an exception group: checked below)
        with anyio.fail_after(60):
            async with Client(with_tty, raise_exceptions=True) as client:
                await client.list_tools()
    # The terminal echoes the client's own initialize request back; the client takes it for a request from the
    # server and answers "Method not found".
    assert any("initialize" in repr(e) for e in _leaves(failed.value)), repr(failed.value)


def _leaves(exc: BaseException) -> list[BaseException]:
    inner = getattr(exc, "exceptions", None)
    return [leaf for e in inner for leaf in _leaves(e)] if inner else [exc]
