"""aoti-debug install --agent claude-code|codex|all [--scope project|user] [--root DIR]... [--remote HOST
[--remote-python PY] [--ssh-config F]] [--launcher PREFIX] [--url URL --token-file F] [--dry-run] [--json]"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from aoti_debug.cli._out import add_roots, emit
from aoti_debug.common.errors import BadInput
from aoti_debug.install.register import AGENTS, DEFAULT_TOOL_TIMEOUT_S, InstallResult, install

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="Install the skill and register the MCP server for Claude Code or Codex")
    p.add_argument("--agent", action="append", required=True, choices=[*AGENTS, "all"],
                   help="Agent to install for (repeatable, or all)")
    p.add_argument("--scope", choices=["project", "user"], default="project",
                   help="project: files under --project-dir; user: your home (default: project)")
    p.add_argument("--project-dir", metavar="DIR", help="The project (default: the current directory)")
    add_roots(p, "Allowed root written into the server registration (repeatable; default: the project)")
    p.add_argument("--command", dest="server_command", metavar="CMD",
                   help="How to start the server, e.g. 'uvx --from git+URL aoti-debug' (default: this aoti-debug, "
                   "by absolute path)")
    where = p.add_argument_group("where the server runs (default: here, as this aoti-debug)")
    where.add_argument("--remote", metavar="[USER@]HOST",
                       help="Run the server on HOST over SSH (stdio through `ssh -T ... HOST aoti-debug serve`); "
                            "--root then names folders on HOST")
    where.add_argument("--remote-python", metavar="PY",
                       help="With --remote: start the server as `PY -m aoti_debug` on HOST (e.g. a venv's python)")
    where.add_argument("--ssh-config", metavar="FILE",
                       help="With --remote: ssh's config file (ssh -F FILE) instead of ~/.ssh/config")
    where.add_argument("--launcher", metavar="PREFIX",
                       help="Run the server through a scheduler, e.g. 'srun -p gpu --gres=gpu:1' (shell-split; "
                            "on HOST with --remote)")
    where.add_argument("--url", metavar="URL",
                       help="Register a running `aoti-debug serve --transport streamable-http` at URL (http .../mcp)")
    where.add_argument("--token-file", metavar="F", help="With --url: the file holding the server's bearer token")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="Environment for the server")
    p.add_argument("--timeout", type=int, default=DEFAULT_TOOL_TIMEOUT_S, metavar="SECONDS",
                   help=f"Per-call tool timeout written for the agent (default: {DEFAULT_TOOL_TIMEOUT_S})")
    p.add_argument("--dry-run", action="store_true", help="Print what would change; write nothing")
    p.add_argument("--json", action="store_true", help="Print the InstallResult model as JSON")
    return p


def _env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not _ENV_NAME.match(key):
            raise BadInput(f"--env wants KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def human(r: InstallResult) -> str:  # type: ignore[override]
    lines = ["dry run: nothing was written; without --dry-run:"] if r.dry_run else []
    lines.append(f"server: {r.server.shown()}  (tool timeout {r.server.timeout_s} s)")
    for a in r.agents:
        lines.append(f"{a.agent} ({a.scope} scope)")
        skill = [f for f in a.files if f.kind == "skill"]
        counts = Counter(f.action for f in skill)
        summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items()))
        lines.append(f"  skill   {a.skill_dir}/  ({len(skill)} files: {summary})")
        for f in skill:
            if f.action == "removed":
                lines.append(f"          removed {f.path}")
        for f in a.files:
            if f.kind == "config":
                backup = f"  (backup: {f.backup})" if f.backup else ""
                lines.append(f"  config  {f.action:9} {f.path}{backup}")
        lines += [f"  note:   {n}" for n in a.notes]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    agents = list(AGENTS) if "all" in args.agent else args.agent
    result = install(agents, scope=args.scope, project_dir=args.project_dir, roots=args.root or None,
                     command=args.server_command, env=_env(args.env), timeout_s=args.timeout, dry_run=args.dry_run,
                     remote=args.remote, remote_python=args.remote_python, launcher=args.launcher, url=args.url,
                     token_file=args.token_file, ssh_config=args.ssh_config)
    emit(result, args.json, human)
    return 0
