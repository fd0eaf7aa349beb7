"""Attacks 1 and 4 of issue 11: code run through interpreter switches, and programs outside the roots named python*
or given as CXX. Each test replays the attack through the server (in-memory MCP client) or the policy itself."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from aoti_debug.common import programs
from aoti_debug.common.errors import BadInput
from aoti_debug.mcp.app import build_server
from aoti_debug.runs import command, flags
from mcp import Client

pytestmark = pytest.mark.anyio

HARMLESS = "print('harmless repro ran')\n"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    (r / "repro.py").write_text(HARMLESS)
    return r


def _refused(argv: list[str], root: Path) -> str:
    with pytest.raises(BadInput) as exc:
        command.check_command(argv, [root], root)
    return str(exc.value)


# The attack as reported: a dotted -W category imports unittest.__main__, whose argument parser then runs
# the "-c" snippet through pdb. Variants: discover runs any file; pycache_prefix loads planted bytecode.
ATTACKS = [
    ["python", "-W", "ignore::unittest.__main__.X", "repro.py", "-c", "!__import__('os').system('id > out')",
     "repro.py", "pdb.main"],
    ["python", "-Wignore::unittest.__main__.X", "repro.py", "discover", "-s", "/tmp", "-p", "x.py"],
    ["python", "-W", "error::os.X", "repro.py"],
    ["python", "-X", "pycache_prefix=/tmp/planted", "repro.py"],
    ["python", "-Xpresite=evil", "repro.py"],
    ["python", "-X", "importtime=9", "repro.py"],
    ["python", "-uc", "print(1)"],
    ["python", "-Bm", "pdb", "repro.py"],
    ["python", "-i", "repro.py"],
    ["python", "--check-hash-based-pycs", "always", "repro.py"],
    ["python", "-", "repro.py"],
    ["python", "-W"],
]


@pytest.mark.parametrize("argv", ATTACKS, ids=lambda a: " ".join(a[1:3]))
def test_interpreter_switches_that_run_or_import_code_are_refused(argv, root) -> None:
    msg = _refused(argv, root)
    assert "python" in msg


@pytest.mark.parametrize("argv", [
    ["python", "-u", "-W", "ignore::DeprecationWarning", "repro.py"],
    ["python", "-uB", "-Wdefault", "-X", "faulthandler", "-Xutf8=1", "repro.py", "-c", "anything", "-m", "x"],
    ["python", "-OO", "-X", "int_max_str_digits=640", "-X", "pycache_prefix=cache", "repro.py"],
])
def test_allow_listed_switches_with_checked_values_pass_and_the_script_keeps_its_own_arguments(argv, root) -> None:
    out = command.check_command(argv, [root], root)
    assert out[1:] == argv[1:]


@pytest.mark.spawns
async def test_the_reported_attack_through_rerun_with_flags_is_a_tool_error_and_runs_nothing(root) -> None:
    argv = ATTACKS[0]
    async with Client(build_server([root])) as client:
        r = await client.call_tool("rerun_with_flags", {"argv": argv, "cwd": str(root)})
        assert r.is_error and "built-in warning class" in r.content[0].text
        r = await client.call_tool("rerun_with_flags", {"argv": ["python", "-W", "ignore::DeprecationWarning",
                                                                 "repro.py"], "cwd": str(root)})
        assert not r.is_error and "harmless repro ran" in r.structured_content["stdout_tail"]
    assert not (root / "out").exists()


def _script(path: Path, body: str = "#!/bin/sh\necho ran > \"$(dirname \"$0\")/ran\"\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_shell_script_named_python_outside_the_roots_is_neither_a_python_nor_an_allowed_program(tmp_path,
                                                                                                   root) -> None:
    fake = _script(tmp_path / "elsewhere" / "python3")
    msg = _refused([str(fake), "repro.py"], root)
    assert "outside the allowed roots" in msg
    with pytest.raises(BadInput, match="not a Python interpreter"):
        programs.check_python(str(fake), [root])


def test_a_real_interpreter_copied_outside_the_roots_and_path_is_refused(tmp_path, root) -> None:
    copy = tmp_path / "planted" / "python3"
    copy.parent.mkdir()
    shutil.copy2(os.path.realpath(sys.executable), copy)
    assert programs.is_python(copy)
    assert "trusted folders" in _refused([str(copy), "repro.py"], root)
    with pytest.raises(BadInput, match="trusted folders"):
        programs.check_python(str(copy), [root])


def test_the_servers_interpreter_a_path_python_and_a_venv_inside_the_roots_are_accepted(root) -> None:
    assert command.check_command([sys.executable, "repro.py"], [root], root)[0] == sys.executable
    if shutil.which("python3"):
        assert command.check_command(["python3", "repro.py"], [root], root)
    venv_python = root / "venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(os.path.realpath(sys.executable))
    assert command.check_command([str(venv_python), "repro.py"], [root], root)[0] == str(venv_python)
    assert "-c is refused" in _refused([str(venv_python), "-c", "print(1)"], root)


async def test_check_parity_refuses_a_planted_python_through_the_server(tmp_path, root) -> None:
    fake = _script(tmp_path / "elsewhere" / "python3")
    async with Client(build_server([root])) as client:
        r = await client.call_tool("check_parity", {"package_path": str(root / "none.pt2"), "python": str(fake)})
    assert r.is_error
    assert not (fake.parent / "ran").exists()


def test_cxx_must_be_a_compiler_native_or_on_path_and_inside_the_roots_or_a_trusted_folder(tmp_path, root) -> None:
    spec = flags.flag_table().by_name["CXX"]
    for bad in (_script(tmp_path / "elsewhere" / "g++"), Path("/bin/sh")):
        with pytest.raises(BadInput, match="CXX"):
            flags._check_value(spec, str(bad), [root], root)
    if gxx := shutil.which("g++"):
        assert flags._check_value(spec, "g++", [root], root) == gxx
        assert flags._check_value(spec, gxx, [root], root) == str(Path(gxx).resolve())
