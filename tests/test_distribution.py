"""The distributions as a user gets them: sdist and wheel built from a clean copy of the checkout, the wheel installed
into a fresh venv without torch and used from outside the checkout; the sdist rebuilds the same wheel; one version.

Set AOTI_DEBUG_DIST to a folder holding an sdist and a wheel to test those files instead of building them (the
release workflow tests exactly what it publishes).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import golden
import pytest
from aoti_debug import __version__
from aoti_debug import version as version_module
from aoti_debug.classify.guides import get_guide
from aoti_debug.cli import main
from aoti_debug.cli.triage import list_examples
from aoti_debug.common.paths import guides_digest, guides_dir
from aoti_debug.mcp.app import build_server
from aoti_debug.version import describe, package_version
from distribution import (
    build_dists,
    git_repo,
    make_venv,
    offline_env,
    tracked_copy,
    wheel_contents,
    wheel_from_sdist,
    wheelhouse,
)
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
# Every test of this module shares one build and one venv: keep them on one xdist worker.
pytestmark = pytest.mark.xdist_group("distribution")
LOG = ROOT / "tests" / "fixtures" / "logs" / "triton_index_out_of_bounds__cpu_embedding_id_500.log"
GUIDE = "triton_index_out_of_bounds"


def _pyproject_version() -> str:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_version_has_one_source_pyproject_toml() -> None:
    # An installed wheel reads it from its metadata, generated from pyproject.toml: the wheel tests below.
    skill_meta = re.search(r'^  version: "([^"]+)"$', (ROOT / "SKILL.md").read_text(), re.M)
    assert {"package_version": package_version(), "__version__": __version__,
            "SKILL.md metadata": skill_meta and skill_meta[1],
            } == dict.fromkeys(["package_version", "__version__", "SKILL.md metadata"], _pyproject_version())


@pytest.mark.parametrize("pyproject, found", [
    ('[project]\nname = "aoti-debug"\ndependencies = [\n  "mcp",\n]\nversion = "9.1"\n[tool.x]\nversion = "2"', "9.1"),
    ('[build-system]\nrequires = ["hatchling"]\n\n[project]\nversion = "9.2"\nname = "aoti-debug"\n', "9.2"),
    ('[project]\nname = "other"\nversion = "9.3"\n', None),
    ('[project]\nname = "aoti-debug"\n\n[tool.x]\nversion = "9.4"\n', None),
], ids=["after-a-list", "before-the-name", "another-project", "another-tables-version"])
def test_a_checkouts_version_is_its_project_tables_whatever_the_key_order(tmp_path, monkeypatch, pyproject,
                                                                          found) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject)
    monkeypatch.setattr(version_module, "_PYPROJECT", tmp_path / "pyproject.toml")
    assert version_module._checkout_version() == found


def test_version_prints_the_package_version_and_the_guides_digest(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    digest = guides_digest(guides_dir())
    assert capsys.readouterr().out == f"aoti-debug {_pyproject_version()} (guides sha256 {digest[:12]})\n"


@pytest.mark.anyio
async def test_the_server_reports_the_package_version_in_its_initialize_result(tmp_path) -> None:
    async with Client(build_server([tmp_path]), raise_exceptions=True) as client:
        assert (client.server_info.name, client.server_info.version) == ("aoti-debug", _pyproject_version())


@dataclass
class Installed:
    dists: dict[str, Path]  # sdist, wheel
    venv: Path
    cwd: Path  # outside the checkout

    @property
    def script(self) -> str:
        return str(self.venv / "bin" / "aoti-debug")

    def run(self, *argv: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=self.cwd, env=env)
        assert out.returncode == 0, f"{argv}: exit {out.returncode}\n{out.stderr}"
        return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    tmp = tmp_path_factory.mktemp("dist")
    given = os.environ.get("AOTI_DEBUG_DIST")
    dists = build_dists(ROOT, tmp / "built", Path(given) if given else None)
    venv = make_venv(tmp / "venv", dists["wheel"], wheelhouse(ROOT))
    cwd = tmp / "work"
    cwd.mkdir()
    return Installed(dists, venv, cwd)


@pytest.mark.spawns
def test_the_wheel_installs_into_a_fresh_venv_without_torch_and_runs_from_its_own_files(installed) -> None:
    probe = ("import importlib.util, aoti_debug, aoti_debug.common.paths as p; "
             "print(aoti_debug.__file__); print(p.project_root()); print(importlib.util.find_spec('torch'))")
    out = installed.run(str(installed.venv / "bin" / "python"), "-c", probe).stdout.splitlines()
    site = str(installed.venv.resolve())
    assert out[0].startswith(site) and out[1] == str(Path(out[0]).parent / "_bundled") and out[2] == "None", out


@pytest.mark.spawns
def test_the_installed_version_is_the_checkouts_version_and_guides(installed) -> None:
    assert installed.run(installed.script, "--version").stdout == describe() + "\n"


@pytest.mark.spawns
def test_a_checkout_on_the_path_reports_its_pyproject_version_over_the_installed_metadata(installed, tmp_path) -> None:
    # A checkout on PYTHONPATH (or installed editable, then bumped) is the code that runs: its pyproject.toml
    # says which version that is; the installed wheel's metadata answers only where no checkout surrounds it.
    package = tmp_path / "checkout" / "server" / "aoti_debug"
    package.mkdir(parents=True)
    for name in ("__init__.py", "version.py"):
        shutil.copy(ROOT / "server" / "aoti_debug" / name, package / name)
    (tmp_path / "checkout" / "pyproject.toml").write_text('[project]\nname = "aoti-debug"\nversion = "9.9.9"\n')
    probe = [str(installed.venv / "bin" / "python"), "-c", "import aoti_debug; print(aoti_debug.__version__)"]
    assert installed.run(*probe).stdout == f"{package_version()}\n"
    on_path = subprocess.run(probe, capture_output=True, text=True, timeout=60, cwd=installed.cwd,
                             env={**os.environ, "PYTHONPATH": str(package.parent)})
    assert on_path.stdout == "9.9.9\n", on_path.stderr


@pytest.mark.spawns
def test_the_installed_cli_classifies_a_real_log_as_the_checkout_does(installed) -> None:
    g = golden.load(LOG)
    (installed.cwd / "run.log").write_text(g.log, encoding="utf-8", errors="surrogateescape")
    status = ["--exit-status", g.exit_status] if g.exit_status else []
    argv = [installed.script, "classify", "run.log", "--json", *status]
    got = json.loads(installed.run(*argv).stdout)
    want = golden.classify(g).model_dump(mode="json")
    for result in (got, want):
        result["guide"].pop("path")  # the bundled copy inside the venv vs the checkout's guides/
    assert got["pattern"] == g.pattern and got == want


@pytest.mark.spawns
def test_the_installed_cli_prints_a_guide_and_lists_the_examples(installed) -> None:
    assert installed.run(installed.script, "guide", GUIDE).stdout == get_guide(GUIDE).text
    assert installed.run(installed.script, "triage", "--list-examples").stdout == list_examples() + "\n"


@pytest.mark.anyio
@pytest.mark.spawns
async def test_the_installed_server_lists_the_tools_and_serves_the_guides_over_stdio(installed) -> None:
    params = StdioServerParameters(command=installed.script, args=["serve", "--root", str(installed.cwd)],
                                   cwd=str(installed.cwd))
    async with Client(build_server([installed.cwd]), raise_exceptions=True) as local:
        want_tools = {t.name for t in (await local.list_tools()).tools}
    async with Client(params, raise_exceptions=True) as client:
        assert client.server_info.version == package_version()
        assert {t.name for t in (await client.list_tools()).tools} == want_tools
        read = await client.read_resource(f"aoti-guide://{GUIDE}")
        assert read.contents[0].text == get_guide(GUIDE).text


@pytest.mark.spawns
def test_the_sdist_rebuilds_the_same_wheel(installed, tmp_path) -> None:
    rebuilt = wheel_from_sdist(installed.dists["sdist"], tmp_path)
    first, second = wheel_contents(installed.dists["wheel"]), wheel_contents(rebuilt)
    assert sorted(first) == sorted(second)
    assert [name for name in first if first[name] != second[name]] == []
    assert rebuilt.name == installed.dists["wheel"].name


@dataclass
class FromUrl:
    url: str  # git+file:// of a fresh repository holding the checkout's tracked files
    env: dict[str, str]
    home: Path


@pytest.fixture(scope="module")
def from_url(tmp_path_factory) -> FromUrl:
    tmp = tmp_path_factory.mktemp("url")
    return FromUrl(git_repo(ROOT, tmp / "repo"), offline_env(wheelhouse(ROOT), tmp / "home"), tmp / "home")


def _tool(name: str, env: dict[str, str]) -> str:
    found = shutil.which(name, path=env["PATH"])
    if found is None:
        pytest.skip(f"{name} is not installed (the test extra installs it)")
    return found


@pytest.mark.spawns
@pytest.mark.parametrize("install, bin_dir", [(["pipx", "install"], "pipx-bin"), (["uv", "tool", "install"], "uv-bin")],
                         ids=["pipx", "uv-tool"])
def test_the_repository_url_installs_as_a_tool(from_url, install, bin_dir) -> None:
    argv = [_tool(install[0], from_url.env), *install[1:], from_url.url]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=240, cwd=from_url.home.parent,
                         env=from_url.env)
    assert out.returncode == 0, f"{argv}: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    script = from_url.home / bin_dir / "aoti-debug"
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60,
                             cwd=from_url.home.parent, env=from_url.env)
    assert version.stdout == describe() + "\n", version.stderr


@pytest.mark.anyio
@pytest.mark.spawns
async def test_uvx_installs_the_skill_and_a_uvx_registration_that_starts_the_server(from_url, tmp_path) -> None:
    # The README's no-venv route, verbatim: uvx runs the install, which registers uvx as the server's command.
    uvx = ["uvx", "--from", from_url.url, "aoti-debug"]
    argv = [_tool("uvx", from_url.env), *uvx[1:], "install", "--agent", "claude-code", "--command", shlex.join(uvx)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=240, cwd=tmp_path, env=from_url.env)
    assert out.returncode == 0, f"{argv}: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    assert (tmp_path / ".claude" / "skills" / "aoti-debug" / "SKILL.md").read_text() == (ROOT / "SKILL.md").read_text()
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["aoti-debug"]
    assert [entry["command"], *entry["args"]] == [*uvx, "serve", "--root", str(tmp_path.resolve())]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=from_url.env, cwd=str(tmp_path))
    async with Client(params, raise_exceptions=True) as client:
        assert client.server_info.version == package_version()
        assert "classify_error" in {t.name for t in (await client.list_tools()).tools}


@pytest.mark.node
@pytest.mark.spawns
@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")
def test_npx_skills_adds_the_skill_from_a_local_checkout(tmp_path) -> None:
    # README: `npx skills add ./path/to/aoti-debug --skill aoti-debug ...` (the <owner>/<repo> form needs the public
    # repository). skills needs Node 22, as the Inspector does; the first use downloads both from the npm registry.
    checkout = tracked_copy(ROOT, tmp_path / "aoti-debug")
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    argv = ["npx", "-y", "-p", "node@22", "-p", "skills@1.7.4", "skills", "add", str(checkout), "--skill", "aoti-debug",
            "-a", "claude-code", "-a", "codex", "-y"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=project,
                         env={**os.environ, "HOME": str(home)})
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    for agent_dir in (".agents", ".claude"):  # Codex's folder holds the copy, Claude Code's links to it
        skill = project / agent_dir / "skills" / "aoti-debug"
        assert (skill / "SKILL.md").read_text() == (ROOT / "SKILL.md").read_text()
        assert (skill / "guides" / f"{GUIDE}.md").read_text() == get_guide(GUIDE).text
