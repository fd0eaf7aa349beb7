"""Install the skill where Claude Code or Codex reads skills, and register the MCP server in its config.

Where each agent looks (checked against the reference notes, §6.2-6.3, and the clients' docs):

| agent       | scope   | skill folder                          | MCP registration                            |
|-------------|---------|---------------------------------------|---------------------------------------------|
| claude-code | project | <project>/.claude/skills/aoti-debug/  | <project>/.mcp.json, mcpServers             |
| claude-code | user    | ~/.claude/skills/aoti-debug/          | ~/.claude.json, top-level mcpServers        |
| codex       | project | <project>/.agents/skills/aoti-debug/  | <project>/.codex/config.toml (trusted only) |
| codex       | user    | ~/.agents/skills/aoti-debug/          | $CODEX_HOME/config.toml (~/.codex)          |

$CLAUDE_CONFIG_DIR, when set, replaces ~/.claude for skills and holds .claude.json.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from aoti_debug.common.errors import BadInput
from aoti_debug.common.paths import project_root
from aoti_debug.common.yamlio import YAMLError, load_yaml
from aoti_debug.install.agentconfig import merge_json, merge_toml
from aoti_debug.install.launch import ServerEntry, entry_notes, server_entry, token_helper

AGENTS = ("claude-code", "codex")
NAME = "aoti-debug"  # the skill folder, the front matter name and the MCP server name
# One blocking call may run a repro, a baseline and a forensics rerun: minutes, not Codex's default 60 s.
DEFAULT_TOOL_TIMEOUT_S = 300

Agent = Literal["claude-code", "codex"]
Scope = Literal["project", "user"]
Action = Literal["created", "updated", "unchanged", "removed"]


class FileChange(BaseModel):
    """One file the install writes, would write, or leaves as it is."""

    path: str = Field(description="Absolute path")
    kind: Literal["skill", "config"] = Field(description="A file of the skill folder, or an agent config file")
    action: Action = Field(description="created | updated | unchanged | removed (a stale guide)")
    backup: str | None = Field(default=None, description="The .bak copy made of the previous version")


class AgentInstall(BaseModel):
    """What the install does for one agent."""

    agent: Agent
    scope: Scope
    skill_dir: str = Field(description="The installed skill folder")
    config_file: str = Field(description="The file holding the MCP server registration")
    files: list[FileChange]
    notes: list[str] = Field(default_factory=list, description="What the user still has to do or know")


class InstallResult(BaseModel):
    """The plan (dry run) or the outcome of aoti-debug install."""

    dry_run: bool
    server: ServerEntry
    agents: list[AgentInstall]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def changed(self) -> bool:
        return any(f.action != "unchanged" for a in self.agents for f in a.files)


@dataclass
class _Op:
    change: FileChange
    content: bytes | None = None  # None: nothing to write (unchanged, or removed)


def _home() -> Path:
    return Path.home()  # $HOME on POSIX, so tests can point it at a temporary folder


def targets(agent: Agent, scope: Scope, project: Path) -> tuple[Path, Path]:
    """(skill folder, MCP config file) for an agent and scope."""
    if agent == "claude-code":
        if scope == "project":
            return project / ".claude" / "skills" / NAME, project / ".mcp.json"
        cfg = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
        base = Path(cfg).expanduser() if cfg else _home() / ".claude"
        return base / "skills" / NAME, (base / ".claude.json") if cfg else _home() / ".claude.json"
    if scope == "project":
        return project / ".agents" / "skills" / NAME, project / ".codex" / "config.toml"
    codex_home = os.environ.get("CODEX_HOME", "").strip()
    config = (Path(codex_home).expanduser() if codex_home else _home() / ".codex") / "config.toml"
    return _home() / ".agents" / "skills" / NAME, config


def skill_files() -> dict[str, Path]:
    """Installed relative path -> source: SKILL.md, guides/*.md (same layout: SKILL.md links guides/<id>.md and
    the guides link each other), and skill/agents/ (Codex's agents/openai.yaml)."""
    root = project_root()
    files = {"SKILL.md": root / "SKILL.md"}
    for guide in sorted((root / "guides").glob("*.md")):
        if guide.name != "README.md":  # maintainer notes on writing rules, not for agents
            files[f"guides/{guide.name}"] = guide
    agents_dir = root / "skill" / "agents"
    if agents_dir.is_dir():
        for f in sorted(p for p in agents_dir.rglob("*") if p.is_file()):
            files[f"agents/{f.relative_to(agents_dir).as_posix()}"] = f
    return files


def claude_entry(s: ServerEntry) -> dict:
    """The mcpServers value for Claude Code (timeout in milliseconds)."""
    if s.transport == "http":
        # headersHelper: Claude Code runs it at each connection and sends the JSON object it prints as headers,
        # so the token stays in its file (read afresh when it changes) instead of a copy in ~/.claude.json.
        return {"type": "http", "url": s.url, "headersHelper": shlex.join(token_helper(s.token_file or "")),
                "timeout": s.timeout_s * 1000}
    return {"type": "stdio", "command": s.command, "args": s.args, "env": s.env, "timeout": s.timeout_s * 1000}


def codex_table(s: ServerEntry) -> dict:
    """The [mcp_servers.aoti-debug] table for Codex."""
    if s.transport == "http":
        # http_headers_helper: the same helper as Claude Code's (Codex 0.169 runs it at each connection).
        return {"url": s.url, "http_headers_helper": shlex.join(token_helper(s.token_file or "")),
                "startup_timeout_sec": s.startup_s, "tool_timeout_sec": s.timeout_s}
    table: dict = {"command": s.command, "args": s.args, "startup_timeout_sec": s.startup_s,
                   "tool_timeout_sec": s.timeout_s}
    if s.env:
        table["env"] = dict(s.env)
    return table


def _config_op(path: Path, old: str | None, new: str | None) -> _Op:
    if new is None:
        return _Op(FileChange(path=str(path), kind="config", action="unchanged"))
    action: Action = "created" if old is None else "updated"
    backup = str(path) + ".bak" if old is not None else None
    return _Op(FileChange(path=str(path), kind="config", action=action, backup=backup), new.encode())


def plan_config(agent: Agent, path: Path, server: ServerEntry) -> _Op:
    """The agent's config with the aoti-debug entry set; every other entry, key and comment kept."""
    if agent == "claude-code":
        old, new = merge_json(path, NAME, claude_entry(server))
    else:
        old, new = merge_toml(path, NAME, codex_table(server))
    return _config_op(path, old, new)


def plan_skill(skill_dir: Path) -> list[_Op]:
    """Copy the skill files that differ; remove guides this version no longer ships."""
    if skill_dir.is_symlink():
        raise BadInput(f"{skill_dir} is a symbolic link (to {os.readlink(skill_dir)}); remove it, then re-run")
    files = skill_files()
    ops = []
    for rel, src in files.items():
        dst, data = skill_dir / rel, src.read_bytes()
        if dst.is_dir():
            raise BadInput(f"{dst} is a folder where the skill has a file; move it, then re-run")
        same = dst.is_file() and not dst.is_symlink() and dst.read_bytes() == data
        action: Action = "unchanged" if same else ("updated" if dst.exists() or dst.is_symlink() else "created")
        ops.append(_Op(FileChange(path=str(dst), kind="skill", action=action), None if same else data))
    for stale in sorted((skill_dir / "guides").glob("*.md")):
        if f"guides/{stale.name}" not in files:
            ops.append(_Op(FileChange(path=str(stale), kind="skill", action="removed")))
    return ops


def _front_matter_name(path: Path) -> str | None:
    m = re.match(r"\A---\r?\n(.*?)\r?\n---\r?\n", path.read_text(encoding="utf-8"), re.S)
    try:
        meta = load_yaml(m.group(1)) if m else None
    except YAMLError:
        return None
    return meta.get("name") if isinstance(meta, dict) else None


def _notes(agent: Agent, scope: Scope, project: Path, config: Path, server: ServerEntry) -> list[str]:
    notes = []
    if agent == "claude-code" and scope == "project":
        notes.append(f"Claude Code asks you to approve the servers of {config.name} the first time it starts in "
                     f"{project}; `claude mcp list` shows them.")
    if agent == "claude-code" and scope == "user":
        notes.append(f"Claude Code also keeps its own state in {config}; if a running session drops the entry, "
                     "run the install again.")
    if agent == "codex" and scope == "project":
        notes.append(f"Codex reads {config} only when {project} is a trusted project; check with `codex mcp list` "
                     "run there, and use --scope user where it does not show up.")
    return notes


def plan(agents: list[Agent], scope: Scope, project: Path, server: ServerEntry) -> tuple[list[AgentInstall], list[_Op]]:
    """Everything the install would do, computed (and every existing config parsed) before anything is written."""
    installs, all_ops = [], []
    name = _front_matter_name(project_root() / "SKILL.md")
    for agent in dict.fromkeys(agents):
        skill_dir, config = targets(agent, scope, project)
        ops = plan_skill(skill_dir)
        ops.append(plan_config(agent, config, server))
        notes = [*_notes(agent, scope, project, config, server), *entry_notes(server),
                 "Restart the agent to load the skill and the server."]
        if name != NAME:
            notes.insert(0, f"SKILL.md's front matter name is {name!r}, not {NAME!r}: agents may skip the skill.")
        installs.append(AgentInstall(agent=agent, scope=scope, skill_dir=str(skill_dir), config_file=str(config),
                                     files=[o.change for o in ops], notes=notes))
        all_ops += ops
    return installs, all_ops


def _write_atomic(path: Path, data: bytes) -> None:
    if path.is_symlink():  # a config kept in a dotfiles repo: write through the link, keep the link
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if path.is_file():
            shutil.copymode(path, tmp)  # ~/.claude.json is private (0600): keep it so
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def apply(ops: list[_Op]) -> None:
    for op in ops:
        path = Path(op.change.path)
        if op.change.action == "removed":
            path.unlink(missing_ok=True)
        elif op.content is not None:
            if op.change.backup:
                shutil.copy2(path, op.change.backup)
            _write_atomic(path, op.content)


def install(agents: list[Agent], scope: Scope = "project", project_dir: Path | None = None,
            roots: list[Path | str] | None = None, command: list[str] | str | None = None,
            env: dict[str, str] | None = None, timeout_s: int = DEFAULT_TOOL_TIMEOUT_S,
            dry_run: bool = False, remote: str | None = None, remote_python: str | None = None,
            launcher: list[str] | str | None = None, url: str | None = None,
            token_file: Path | str | None = None, ssh_config: Path | str | None = None) -> InstallResult:
    """Install the skill and register the server for each agent; with dry_run, only report what would change.

    The server is this machine's aoti-debug (default), `remote` over SSH, run through `launcher`, or `url`.
    """
    project = Path(project_dir or Path.cwd()).expanduser().resolve()
    if not project.is_dir():
        raise BadInput(f"project directory {project} does not exist")
    # Remote roots are the remote host's folders: no default from this machine (the server then uses its
    # starting directory, the remote home).
    server = server_entry(roots or ([] if remote else [project]), command=command, env=env, timeout_s=timeout_s,
                          remote=remote, remote_python=remote_python, launcher=launcher, url=url,
                          token_file=token_file, ssh_config=ssh_config)
    installs, ops = plan(agents, scope, project, server)
    if not dry_run:
        apply(ops)
    return InstallResult(dry_run=dry_run, server=server, agents=installs)
