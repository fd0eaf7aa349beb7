"""aoti-debug install: run it into temporary homes and projects, then parse what it wrote."""

from __future__ import annotations

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser, from PyPI (a dependency there)
    import tomli as tomllib

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from aoti_debug.cli import main
from aoti_debug.common.paths import project_root
from aoti_debug.install.launch import ServerEntry, serve_argv
from aoti_debug.install.register import (
    DEFAULT_TOOL_TIMEOUT_S,
    NAME,
    claude_entry,
    codex_table,
    skill_files,
)

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.fixture
def env(tmp_path, monkeypatch) -> SimpleNamespace:
    """A temporary HOME, CODEX_HOME and project; no CLAUDE_CONFIG_DIR."""
    home, codex_home, project = tmp_path / "home", tmp_path / "codex-home", tmp_path / "project"
    for d in (home, codex_home, project):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return SimpleNamespace(home=home, codex_home=codex_home, project=project)


def install(env: SimpleNamespace, *args: str) -> int:
    return main(["install", "--project-dir", str(env.project), *args])


def result(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def snapshot(*dirs: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for d in dirs for p in sorted(d.rglob("*")) if p.is_file()}


def test_a_project_install_for_claude_code_writes_the_skill_and_an_mcp_json_entry(env, capsys) -> None:
    assert install(env, "--agent", "claude-code", "--json") == 0
    out = result(capsys)
    skill = env.project / ".claude" / "skills" / NAME
    assert out["agents"][0]["skill_dir"] == str(skill)
    installed = sorted(p.relative_to(skill).as_posix() for p in skill.rglob("*") if p.is_file())
    assert installed == sorted(skill_files())
    entry = json.loads((env.project / ".mcp.json").read_text())["mcpServers"][NAME]
    assert entry["type"] == "stdio"
    assert entry["args"][-3:] == ["serve", "--root", str(env.project.resolve())]
    assert entry["timeout"] == DEFAULT_TOOL_TIMEOUT_S * 1000
    assert {f["action"] for f in out["agents"][0]["files"]} == {"created"}


def test_a_project_install_for_codex_writes_the_skill_and_a_config_toml_table(env, capsys) -> None:
    assert install(env, "--agent", "codex", "--json") == 0
    assert (env.project / ".agents" / "skills" / NAME / "agents" / "openai.yaml").is_file()
    table = tomllib.loads((env.project / ".codex" / "config.toml").read_text())["mcp_servers"][NAME]
    assert table["args"] == ["serve", "--root", str(env.project.resolve())]
    assert table["tool_timeout_sec"] == DEFAULT_TOOL_TIMEOUT_S
    assert "env" not in table
    assert not (env.codex_home / "config.toml").exists(), "a project install leaves the user's config alone"


def test_a_user_install_writes_under_home_and_codex_home(env, capsys) -> None:
    assert install(env, "--agent", "all", "--scope", "user", "--json") == 0
    assert (env.home / ".claude" / "skills" / NAME / "SKILL.md").is_file()
    assert (env.home / ".agents" / "skills" / NAME / "SKILL.md").is_file()
    assert NAME in json.loads((env.home / ".claude.json").read_text())["mcpServers"]
    assert NAME in tomllib.loads((env.codex_home / "config.toml").read_text())["mcp_servers"]
    assert not (env.project / ".mcp.json").exists()


def test_claude_config_dir_moves_the_user_skill_and_claude_json(env, capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert install(env, "--agent", "claude-code", "--scope", "user", "--json") == 0
    assert (tmp_path / "cc" / "skills" / NAME / "SKILL.md").is_file()
    assert NAME in json.loads((tmp_path / "cc" / ".claude.json").read_text())["mcpServers"]
    assert not (env.home / ".claude.json").exists()


def test_roots_command_env_and_timeout_go_into_both_registrations(env, capsys, tmp_path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    assert install(env, "--agent", "all", "--root", str(a), "--root", str(b), "--command", "uvx aoti-debug",
                   "--env", "AOTI_DEBUG_HOME=/tmp/x", "--timeout", "90") == 0
    args = ["aoti-debug", "serve", "--root", str(a), "--root", str(b)]
    entry = json.loads((env.project / ".mcp.json").read_text())["mcpServers"][NAME]
    assert entry == {"type": "stdio", "command": "uvx", "args": args, "env": {"AOTI_DEBUG_HOME": "/tmp/x"},
                     "timeout": 90000}
    table = tomllib.loads((env.project / ".codex" / "config.toml").read_text())["mcp_servers"][NAME]
    assert table == {"command": "uvx", "args": args, "startup_timeout_sec": 20, "tool_timeout_sec": 90,
                     "env": {"AOTI_DEBUG_HOME": "/tmp/x"}}


def test_the_default_command_is_the_console_script_by_absolute_path(env, capsys) -> None:
    assert install(env, "--agent", "claude-code", "--json") == 0
    command = result(capsys)["server"]["command"]
    script = Path(sys.executable).parent / "aoti-debug"
    assert command == (str(script.absolute()) if script.is_file() else sys.executable)


def test_other_servers_and_keys_in_mcp_json_keep_their_bytes(env, capsys) -> None:
    data = {"mcpServers": {"docs": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}, "note": ["é", 1.5]}
    for indent in (2, 4):
        original = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
        (env.project / ".mcp.json").write_text(original)
        assert install(env, "--agent", "claude-code", "--json") == 0
        new = json.loads((env.project / ".mcp.json").read_text())
        assert list(new["mcpServers"]) == ["docs", NAME]
        expected = {**data, "mcpServers": {**data["mcpServers"], NAME: new["mcpServers"][NAME]}}
        assert (env.project / ".mcp.json").read_text() == json.dumps(expected, indent=indent, ensure_ascii=False) + "\n"
        assert (env.project / ".mcp.json.bak").read_text() == original
        capsys.readouterr()


def test_a_one_line_claude_json_stays_one_line_with_every_key(env, capsys) -> None:
    state = {"numStartups": 7, "projects": {"/x": {"mcpServers": {}}}, "mcpServers": {"other": {"command": "o"}}}
    (env.home / ".claude.json").write_text(json.dumps(state))
    (env.home / ".claude.json").chmod(0o600)
    assert install(env, "--agent", "claude-code", "--scope", "user", "--json") == 0
    text = (env.home / ".claude.json").read_text()
    new = json.loads(text)
    assert "\n" not in text
    assert {k: v for k, v in new.items() if k != "mcpServers"} == {k: v for k, v in state.items() if k != "mcpServers"}
    assert new["mcpServers"]["other"] == {"command": "o"}
    assert (env.home / ".claude.json").stat().st_mode & 0o777 == 0o600


CONFIG_HEAD = """\
# my codex settings
model = "gpt-5"   # keep me

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

"""
OLD_TABLE = """\
[mcp_servers.aoti-debug]
command = "old-aoti-debug"
args = ["serve"]

[mcp_servers.aoti-debug.env]
X = "1"
"""
CONFIG_TAIL = """\

# the trust entry below is the user's
[projects."/somewhere"]
trust_level = "trusted"
"""


def test_an_existing_codex_table_is_replaced_in_place_and_the_rest_keeps_its_bytes(env, capsys) -> None:
    config = env.codex_home / "config.toml"
    config.write_text(CONFIG_HEAD + OLD_TABLE + CONFIG_TAIL)
    assert install(env, "--agent", "codex", "--scope", "user", "--json") == 0
    text = config.read_text()
    assert text.startswith(CONFIG_HEAD) and text.endswith(CONFIG_TAIL)
    middle = text[len(CONFIG_HEAD):-len(CONFIG_TAIL)]
    assert list(tomllib.loads(middle)["mcp_servers"]) == [NAME]
    doc = tomllib.loads(text)
    assert doc["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]}
    assert "env" not in doc["mcp_servers"][NAME], "the old sub-table went with the old table"
    assert (env.codex_home / "config.toml.bak").read_text() == CONFIG_HEAD + OLD_TABLE + CONFIG_TAIL
    assert [f["action"] for f in result(capsys)["agents"][0]["files"] if f["kind"] == "config"] == ["updated"]


def test_a_codex_table_is_appended_after_a_file_without_a_final_newline(env, capsys) -> None:
    config = env.codex_home / "config.toml"
    config.write_text('model = "gpt-5"')
    assert install(env, "--agent", "codex", "--scope", "user") == 0
    text = config.read_text()
    assert text.startswith('model = "gpt-5"\n\n[mcp_servers.aoti-debug]\n')
    assert tomllib.loads(text)["model"] == "gpt-5"


def test_a_second_run_changes_nothing(env, capsys) -> None:
    (env.project / ".mcp.json").write_text('{"mcpServers": {"docs": {"command": "d"}}}\n')
    (env.codex_home / "config.toml").write_text(CONFIG_HEAD + CONFIG_TAIL)
    for scope in ("project", "user"):
        assert install(env, "--agent", "all", "--scope", scope) == 0
    capsys.readouterr()
    before = snapshot(env.home, env.codex_home, env.project)
    for scope in ("project", "user"):
        assert install(env, "--agent", "all", "--scope", scope, "--json") == 0
        out = result(capsys)
        assert out["changed"] is False
        assert {f["action"] for a in out["agents"] for f in a["files"]} == {"unchanged"}
    assert snapshot(env.home, env.codex_home, env.project) == before


def test_dry_run_writes_nothing_and_reports_the_plan(env, capsys) -> None:
    (env.project / ".mcp.json").write_text("{}\n")
    before = snapshot(env.home, env.codex_home, env.project)
    assert install(env, "--agent", "all", "--dry-run", "--json") == 0
    out = result(capsys)
    assert out["dry_run"] is True and out["changed"] is True
    configs = {Path(f["path"]).name: f["action"] for a in out["agents"] for f in a["files"] if f["kind"] == "config"}
    assert configs == {".mcp.json": "updated", "config.toml": "created"}
    assert snapshot(env.home, env.codex_home, env.project) == before
    assert install(env, "--agent", "all", "--dry-run") == 0
    assert capsys.readouterr().out.startswith("dry run: nothing was written")
    assert snapshot(env.home, env.codex_home, env.project) == before


@pytest.mark.parametrize(("agent", "name", "content"), [
    ("claude-code", ".mcp.json", '{"mcpServers": {"docs": {"command": "d"},}}'),
    ("claude-code", ".mcp.json", '{"mcpServers": ["not", "an", "object"]}'),
    ("codex", "config.toml", '[mcp_servers.docs]\ncommand = "d\n'),
    ("codex", "config.toml", '[mcp_servers]\naoti-debug = { command = "inline" }\n'),
])
def test_a_config_it_cannot_edit_safely_is_refused_and_left_alone(env, capsys, agent, name, content) -> None:
    path = env.project / (".codex/config.toml" if name == "config.toml" else name)
    path.parent.mkdir(exist_ok=True)
    path.write_text(content)
    assert install(env, "--agent", agent) == 2
    err = capsys.readouterr().err
    assert err.startswith("aoti-debug: error: ") and str(path) in err and err.count("\n") == 1
    assert path.read_text() == content
    assert not Path(str(path) + ".bak").exists()
    assert not (env.project / ".claude").exists() and not (env.project / ".agents").exists(), "nothing half-done"


def test_a_missing_root_and_a_bad_env_pair_are_refused(env, capsys, tmp_path) -> None:
    assert install(env, "--agent", "codex", "--root", str(tmp_path / "nope")) == 2
    assert install(env, "--agent", "codex", "--env", "NOVALUE") == 2
    assert not (env.project / ".codex").exists()


def test_a_guide_no_longer_shipped_is_removed_on_upgrade(env, capsys) -> None:
    assert install(env, "--agent", "claude-code") == 0
    stale = env.project / ".claude" / "skills" / NAME / "guides" / "retired_rule.md"
    stale.write_text("old\n")
    capsys.readouterr()
    assert install(env, "--agent", "claude-code", "--json") == 0
    removed = [f["path"] for f in result(capsys)["agents"][0]["files"] if f["action"] == "removed"]
    assert removed == [str(stale)] and not stale.exists()


def test_a_symlinked_skill_folder_is_refused(env, capsys, tmp_path) -> None:
    (env.project / ".claude" / "skills").mkdir(parents=True)
    (env.project / ".claude" / "skills" / NAME).symlink_to(tmp_path)
    assert install(env, "--agent", "claude-code") == 2
    assert "symbolic link" in capsys.readouterr().err


def test_the_templates_in_skill_match_what_the_installer_writes() -> None:
    args = serve_argv([], ["/path/to/repros"])
    server = ServerEntry(command="aoti-debug", args=args, timeout_s=DEFAULT_TOOL_TIMEOUT_S)
    skill = project_root() / "skill"
    assert json.loads((skill / "claude-code" / "mcp.json").read_text())["mcpServers"][NAME] == claude_entry(server)
    assert tomllib.loads((skill / "codex" / "config.toml").read_text())["mcp_servers"][NAME] == codex_table(server)


def _has_front_matter() -> bool:
    return re.match(r"\A---\n.*?^name: aoti-debug$.*?\n---\n", (project_root() / "SKILL.md").read_text(), re.S | re.M)


@pytest.mark.spawns
def test_the_installed_skill_folder_validates_and_its_links_resolve_inside_it(env, capsys) -> None:
    if not _has_front_matter():
        pytest.skip("SKILL.md has no front matter with name: aoti-debug yet (still a placeholder)")
    assert install(env, "--agent", "all") == 0
    exe = shutil.which("agentskills") or str(Path(sys.executable).parent / "agentskills")
    for folder in (env.project / ".claude" / "skills" / NAME, env.project / ".agents" / "skills" / NAME):
        out = subprocess.run([exe, "validate", str(folder)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        broken = []
        for md in [folder / "SKILL.md", *sorted((folder / "guides").glob("*.md"))]:
            for target in LINK.findall(md.read_text(encoding="utf-8")):
                if "://" in target or target.startswith("mailto:"):
                    continue
                resolved = (md.parent / target).resolve()
                if not (resolved.exists() and resolved.is_relative_to(folder.resolve())):
                    broken.append(f"{md.relative_to(folder)} -> {target}")
        assert broken == []


@pytest.mark.spawns
def test_the_console_script_installs_from_the_current_directory(env) -> None:
    exe = shutil.which("aoti-debug") or str(Path(sys.executable).parent / "aoti-debug")
    child_env = {**os.environ, "HOME": str(env.home), "CODEX_HOME": str(env.codex_home)}
    child_env.pop("CLAUDE_CONFIG_DIR", None)
    cmd = [exe, "install", "--agent", "claude-code", "--agent", "codex", "--json"]
    out = subprocess.run(cmd, cwd=env.project, env=child_env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert [a["agent"] for a in res["agents"]] == ["claude-code", "codex"]
    assert res["server"]["command"] == str(Path(exe).absolute())
    entry = json.loads((env.project / ".mcp.json").read_text())["mcpServers"][NAME]
    table = tomllib.loads((env.project / ".codex" / "config.toml").read_text())["mcp_servers"][NAME]
    assert entry["command"] == table["command"] == res["server"]["command"]
    assert table["args"][-1] == str(env.project.resolve())
    again = subprocess.run(cmd, cwd=env.project, env=child_env, capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout)["changed"] is False


def test_a_config_kept_behind_a_symlink_is_written_through_the_link(env, capsys, tmp_path) -> None:
    real = tmp_path / "dotfiles" / "config.toml"
    real.parent.mkdir()
    real.write_text(CONFIG_HEAD)
    (env.codex_home / "config.toml").symlink_to(real)
    assert install(env, "--agent", "codex", "--scope", "user") == 0
    assert (env.codex_home / "config.toml").is_symlink()
    assert NAME in tomllib.loads(real.read_text())["mcp_servers"]
