"""How an agent reaches the server: a local command, over SSH, through a scheduler's launcher, or an HTTP URL.

`server_entry` turns install's options into one ServerEntry; register.py writes it in each agent's format.
Over SSH every path (roots, scripts, packages) is a path on the remote host, so roots are kept as given.
"""

from __future__ import annotations

import ipaddress
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from aoti_debug.common.errors import BadInput

# ssh -T: no terminal (a pty would echo the client's messages back and turn \n into \r\n);
# BatchMode: fail at once instead of prompting for a password no one can type into an agent's pipe;
# keep-alives: a long rerun sends nothing for minutes, and NAT or a firewall may drop an idle link.
SSH_OPTIONS = ("-T", "-o", "ServerAliveInterval=30", "-o", "ServerAliveCountMax=4", "-o", "BatchMode=yes")
# Run by the remote shell as `sh -c REMOTE_CHECK aoti-debug PROGRAM ARGS...`: the program and its arguments
# are positional parameters, so no path or option is ever re-parsed by a shell. A missing program gets one
# line on stderr (which both agents show) and the shell's own "not found" status.
REMOTE_CHECK = ('command -v "$1" >/dev/null 2>&1 || { printf "aoti-debug: %s: not found on %s (PATH=%s); install '
                'aoti-debug there, or pass --remote-python\\n" "$1" "$(uname -n)" "$PATH" >&2; exit 127; }; exec "$@"')
# How long an agent should wait for the server to start: a local start imports no torch, but a cold virtual
# environment can miss Codex's 10 s default; ssh adds a login; a scheduler may queue the job for minutes.
STARTUP_S = {"local": 20, "remote": 60, "launcher": 300}
# A launcher option that gives the server a terminal (srun --pty), which breaks a stdio protocol (echo, \r\n).
PTY_OPTIONS = frozenset({"--pty"})


class ServerEntry(BaseModel):
    """How the agent starts (stdio) or reaches (http) the MCP server."""

    transport: Literal["stdio", "http"] = Field(default="stdio", description="stdio: a command; http: a URL")
    command: str | None = Field(default=None, description="Program the agent runs (stdio)")
    args: list[str] = Field(default_factory=list, description="Its arguments: ... serve --root DIR ...")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for the server")
    url: str | None = Field(default=None, description="The server's streamable HTTP endpoint (http)")
    token_file: str | None = Field(default=None, description="File holding the bearer token (http)")
    roots: list[str] = Field(default_factory=list, description="Allowed roots written as --root (remote paths)")
    remote: str | None = Field(default=None, description="The [user@]host the server runs on, over SSH")
    launcher: list[str] = Field(default_factory=list, description="The scheduler prefix the server runs under")
    startup_s: int = Field(default=STARTUP_S["local"], description="How long the agent should wait for a start")
    timeout_s: int = Field(description="Per-tool-call limit written for the agent, in seconds")

    def shown(self) -> str:
        """One line for people: the command line, or the URL."""
        if self.transport == "http":
            return self.url or ""
        return shlex.join([self.command or "", *self.args])


# Claude Code's headersHelper and Codex's http_headers_helper: both run this command line at each connection and
# send the JSON object it prints as headers, so the token is read from its file, never copied into a config.
_HEADER_SCRIPT = ('import json, sys; token = open(sys.argv[1], encoding="utf-8").read().strip(); '
                  'print(json.dumps({"Authorization": "Bearer " + token}))')


def token_helper(token_file: str) -> list[str]:
    """The command that prints {"Authorization": "Bearer <token>"} from token_file."""
    return [sys.executable, "-c", _HEADER_SCRIPT, token_file]


def default_command() -> list[str]:
    """The aoti-debug console script now running (or next to this Python), else python -m aoti_debug."""
    names = {"aoti-debug", "aoti-debug.exe"}
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    candidates = [argv0] if argv0 is not None and argv0.name in names else []
    candidates += [Path(sys.executable).parent / n for n in sorted(names)]
    for c in candidates:
        if c.is_file():
            return [str(c.absolute())]
    return [sys.executable, "-m", "aoti_debug"]


def serve_argv(program: list[str], roots: list[str]) -> list[str]:
    args = [*program, "serve"]
    for r in roots:
        args += ["--root", r]
    return args


def _split(text: str | list[str] | None, what: str) -> list[str]:
    if text is None:
        return []
    try:
        argv = shlex.split(text) if isinstance(text, str) else list(text)
    except ValueError as exc:
        raise BadInput(f"{what}: {exc}") from exc
    if not argv:
        raise BadInput(f"{what} is empty")
    return argv


def _local_roots(roots: list[str | Path]) -> list[str]:
    resolved = [Path(r).expanduser().resolve() for r in roots]
    for r in resolved:
        if not r.is_dir():
            raise BadInput(f"root {r} is not a directory (the server refuses to start with it)")
    return [str(r) for r in resolved]


def remote_command(host: str, program: list[str], roots: list[str], env: dict[str, str],
                   launcher: list[str], ssh_config: str | None = None) -> list[str]:
    """ssh ... HOST 'LAUNCHER... [env K=V...] sh -c CHECK aoti-debug PROGRAM serve --root ...' as one argv.

    ssh hands the remote login shell one string, so the remote argv is joined with shlex quoting once.
    """
    if not host or host.startswith("-") or any(c.isspace() for c in host):
        raise BadInput(f"--remote wants [user@]host (or a Host alias of ~/.ssh/config), got {host!r}")
    inner = ["sh", "-c", REMOTE_CHECK, "aoti-debug", *serve_argv(program, roots)]
    if env:
        inner = ["env", *(f"{k}={v}" for k, v in env.items()), *inner]
    config = ["-F", ssh_config] if ssh_config else []
    return ["ssh", *SSH_OPTIONS, *config, host, shlex.join([*launcher, *inner])]


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(f"--url wants http(s)://host:port/mcp, got {url!r}")
    return url


def _check_token_file(path: str | Path) -> str:
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise BadInput(f"--token-file {p} is not a file (`aoti-debug serve --transport streamable-http` "
                       "writes one; copy it from the server host)")
    if not p.read_text(encoding="utf-8", errors="replace").strip():
        raise BadInput(f"--token-file {p} is empty")
    return str(p)


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def server_entry(roots: list[str | Path], *, command: str | list[str] | None = None, env: dict[str, str] | None = None,
                 timeout_s: int, remote: str | None = None, remote_python: str | None = None,
                 launcher: str | list[str] | None = None, url: str | None = None,
                 token_file: str | Path | None = None, ssh_config: str | Path | None = None) -> ServerEntry:
    """The registration install writes, built from its options (see `aoti-debug install --help`)."""
    env = dict(env or {})
    if timeout_s <= 0:
        raise BadInput("--timeout must be a positive number of seconds")
    if url is not None:
        clash = [n for n, v in (("--remote", remote), ("--launcher", launcher), ("--command", command),
                                ("--remote-python", remote_python), ("--env", env or None)) if v]
        if clash:
            raise BadInput(f"--url registers a server that is already running; it takes no {', '.join(clash)}")
        if token_file is None:
            raise BadInput("--url needs --token-file F (the server's bearer token: ~/.cache/aoti-debug/http_token)")
        return ServerEntry(transport="http", url=_check_url(url), token_file=_check_token_file(token_file),
                           timeout_s=timeout_s)
    if token_file is not None:
        raise BadInput("--token-file goes with --url")
    if remote_python and command:
        raise BadInput("--remote-python and --command both name the server program; pass one")
    if ssh_config and not remote:
        raise BadInput("--ssh-config goes with --remote")
    if remote_python and not remote:
        raise BadInput("--remote-python goes with --remote (locally, use --command 'PY -m aoti_debug')")
    prefix = _split(launcher, "--launcher")
    if remote is not None:
        program = [remote_python, "-m", "aoti_debug"] if remote_python else (_split(command, "--command") or
                                                                              ["aoti-debug"])
        # Remote roots are paths on the remote host: kept as given (the remote server expands ~ and checks them).
        config = None
        if ssh_config:
            config = str(Path(ssh_config).expanduser().resolve())
            if not Path(config).is_file():
                raise BadInput(f"--ssh-config {config} is not a file")
        kept = [str(r) for r in roots]
        argv = remote_command(remote, program, kept, env, prefix, config)
        return ServerEntry(command=argv[0], args=argv[1:], roots=kept, remote=remote, launcher=prefix,
                           timeout_s=timeout_s, startup_s=STARTUP_S["launcher" if prefix else "remote"])
    resolved = _local_roots(roots)
    argv = [*prefix, *serve_argv(_split(command, "--command") or default_command(), resolved)]
    return ServerEntry(command=argv[0], args=argv[1:], env=env, roots=resolved, launcher=prefix, timeout_s=timeout_s,
                       startup_s=STARTUP_S["launcher" if prefix else "local"])


def entry_notes(s: ServerEntry) -> list[str]:
    """What the user should know about how the agent reaches the server."""
    notes = []
    if s.remote:
        notes.append(f"The server runs on {s.remote}: paths in tool calls (scripts, packages, logs) are paths there. "
                     f"ssh runs with BatchMode=yes (no password prompt): check `ssh -o BatchMode=yes {s.remote} true` "
                     "works from where the agent runs.")
    if s.remote and not s.roots:
        notes.append(f"No --root: the server on {s.remote} allows only the folder it starts in (the remote home).")
    if s.launcher:
        notes.append(f"Through {s.launcher[0]}, the server starts when the job does. Codex waits {s.startup_s} s "
                     "(startup_timeout_sec); Claude Code waits MCP_TIMEOUT ms (default 30000): start it with "
                     f"MCP_TIMEOUT={s.startup_s * 1000} claude when the queue is slow.")
    if set(s.launcher) & PTY_OPTIONS:
        notes.append("The launcher asks for a terminal (--pty): a terminal echoes the client's messages back "
                     "and turns \\n into \\r\\n, which breaks MCP over stdio; drop that option.")
    if s.transport == "http":
        if not is_loopback(s.url or "") and urlsplit(s.url or "").scheme == "http":
            notes.append("The URL is plain http to another host: the token crosses the network in clear text; use "
                         "https, or an SSH tunnel to http://127.0.0.1 (docs/clients.md).")
        mode = os.stat(s.token_file).st_mode if s.token_file else 0
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            notes.append(f"{s.token_file} can be read by other users: chmod 600 it.")
    if s.transport == "stdio" and s.command and not (os.path.isabs(s.command) or shutil.which(s.command)):
        notes.append(f"{s.command!r} is not on this PATH: the agent may not be able to start the server.")
    return notes
