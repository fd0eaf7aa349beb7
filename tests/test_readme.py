"""README gives exactly two commands for a fresh machine, and CI runs the test command verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start_commands() -> list[str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_the_quick_start_has_exactly_two_one_line_commands_main_job_then_tests() -> None:
    commands = _quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    main_job, tests = commands
    assert main_job.endswith("aoti-debug triage --example")
    assert tests.endswith("python -m pytest -q -n auto --dist loadgroup")
    assert all("pip install torch==2.13.0" in c for c in commands)


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _quick_start_commands()[1] in ci.splitlines()


def test_every_relative_link_in_the_readme_resolves() -> None:
    links = re.findall(r"\]\(([^)#\s:]+)\)", README)
    assert [link for link in links if not (ROOT / link).exists()] == []
