"""SKILL.md and the guides agree with the code: front matter, routing table, links, flags, presets, tools, commands."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from aoti_debug.classify.guides import load_guides
from aoti_debug.classify.skilldoc import blocks, current, current_table, routing_table
from aoti_debug.cli import COMMANDS
from aoti_debug.common.paths import guides_dir, skill_file

ROOT = Path(__file__).resolve().parent.parent
SKILL = skill_file().read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
ENV = re.compile(r"\b(?:AOTI|AOT_INDUCTOR|TORCHINDUCTOR|TORCH|PYTORCH|CUDA|PYTHON)_[A-Z_]+\b|\bPYTHONFAULTHANDLER\b")
# Variables SKILL.md may name that are not rerun flags: the server's own settings.
NOT_FLAGS = {"AOTI_DEBUG_ROOTS", "AOTI_DEBUG_HOME"}


def _front() -> dict:
    return yaml.safe_load(re.match(r"\A---\n(.*?)\n---\n", SKILL, re.S).group(1))


def test_the_skill_front_matter_follows_the_agent_skills_spec() -> None:
    front = _front()
    assert front["name"] == "aoti-debug"
    assert 0 < len(front["description"]) < 1024
    assert len(SKILL.splitlines()) < 500


def test_the_routing_table_in_skill_md_is_generated_from_the_current_rules() -> None:
    assert current_table() == routing_table(), "run: aoti-debug guide --write-skill"


def test_every_generated_table_matches_the_data_it_comes_from() -> None:
    stale = [f"{path.name}: {start.strip()}" for path, start, end, render in blocks()
             if current(path, start, end) != render()]
    assert stale == [], "run: aoti-debug guide --write-skill"


def test_every_relative_link_in_the_skill_and_the_guides_resolves_one_level_deep() -> None:
    broken = []
    for path in [skill_file(), *sorted(guides_dir().glob("*.md"))]:
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (path.parent / target).resolve().exists():
                broken.append(f"{path.name} -> {target}")
            if path == skill_file() and target.count("/") > 1:
                broken.append(f"SKILL.md links deeper than one level: {target}")
    assert broken == []


def test_every_env_flag_skill_md_names_is_in_the_flag_allow_list() -> None:
    flags = {f["name"] for f in load_guides()["debug-flags"].meta["flags"]}
    assert set(ENV.findall(SKILL)) - flags - NOT_FLAGS == set()


def test_every_preset_skill_md_names_exists() -> None:
    presets = set(load_guides()["debug-flags"].meta["presets"])
    section = SKILL.split("## Debug flags done right")[1].split("\n## ")[0]
    named = set(re.findall(r"`([a-z_]+)`", section))
    assert named - presets - {"not_applied", "rerun_with_flags"} == set()


def test_every_cli_command_skill_md_shows_exists() -> None:
    shown = set(re.findall(r"^aoti-debug ([a-z-]+)", SKILL, re.M)) | set(
        re.findall(r"`aoti-debug ([a-z-]+)", SKILL))
    assert shown - set(COMMANDS) == set()


@pytest.mark.anyio
async def test_every_tool_skill_md_lists_is_served(tmp_path) -> None:
    from aoti_debug.mcp.app import build_server
    from mcp import Client

    table = SKILL.split("## The tools")[1].split("##")[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", table, re.M))
    async with Client(build_server([tmp_path]), raise_exceptions=True) as client:
        served = {t.name for t in (await client.list_tools()).tools}
    assert listed - served == set()
    assert served - listed == set()


@pytest.mark.spawns
def test_the_staged_skill_passes_agentskills_validate(tmp_path) -> None:
    exe = shutil.which("agentskills") or str(Path(sys.executable).parent / "agentskills")
    stage = tmp_path / "aoti-debug"
    stage.mkdir()
    shutil.copy(skill_file(), stage / "SKILL.md")
    shutil.copytree(guides_dir(), stage / "guides")
    out = subprocess.run([exe, "validate", str(stage)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_priority_table_in_the_triage_guide_matches_the_rules() -> None:
    text = (guides_dir() / "triage.md").read_text(encoding="utf-8")
    rows = dict((pid, int(prio)) for prio, pid in re.findall(r"^\| (\d+) \| \[(\w+)\]", text, re.M))
    rules = {g.id: g.rule.priority for g in load_guides().values() if g.rule}
    assert rows == {pid: prio for pid, prio in rules.items() if pid in rows}
    assert set(rules) - set(rows) <= {"unknown"}
