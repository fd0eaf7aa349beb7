"""Check a repro command before it runs: an argv list whose script (or program) and cwd lie in the roots."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from aoti_debug.errors import BadInput
from aoti_debug.roots import check_path

MAX_ARGS = 256
MAX_ARG_CHARS = 4096
PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)*)?$")
# Interpreter switches allowed before the script; none of them runs code of its own.
PY_SWITCHES = {"-u", "-B", "-E", "-s", "-S", "-I", "-O", "-OO", "-q", "-b", "-bb", "-P", "-d", "-v"}
PY_WITH_VALUE = {"-X", "-W"}


def check_cwd(cwd: str | None, roots: list[Path]) -> Path:
    path = check_path(cwd or roots[0], roots, what="cwd")
    if not path.is_dir():
        raise BadInput(f"cwd {cwd!r} is not a directory")
    return path


def _program(arg0: str, cwd: Path) -> Path:
    """argv[0] as an absolute path (PATH lookup for a bare name), not symlink-resolved: a venv's python stays it."""
    found = shutil.which(arg0) if "/" not in arg0 else str(cwd / Path(arg0).expanduser())
    if not found:
        raise BadInput(f"program {arg0!r} not found on PATH")
    path = Path(os.path.abspath(found))
    if not path.is_file() or not os.access(path, os.X_OK):
        raise BadInput(f"program {arg0!r} ({path}) is not an executable file")
    return path


def is_python(program: Path) -> bool:
    return bool(PYTHON_NAME.match(program.name)) or program.resolve() == Path(sys.executable).resolve()


def _script_index(argv: list[str]) -> int:
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        if a in ("-c", "-m", "-") or a.startswith(("-c", "-m")):
            raise BadInput(f"python {a} is refused: run a script file inside the allowed roots, so the root "
                           "check covers the code that runs (write the snippet to a .py file)")
        if a in PY_SWITCHES:
            i += 1
        elif a in PY_WITH_VALUE:
            i += 2
        elif a[:2] in PY_WITH_VALUE:
            i += 1
        else:
            raise BadInput(f"python option {a!r} is not allowed before the script; allowed: "
                           f"{', '.join(sorted(PY_SWITCHES | PY_WITH_VALUE))}")
    if i >= len(argv):
        raise BadInput("the python command names no script: pass ['python', 'repro.py', ...]")
    return i


def check_command(argv: list[str], roots: list[Path], cwd: Path) -> list[str]:
    """The argv to run (argv[0] made absolute); BadInput if the script or program lies outside the roots."""
    if not argv:
        raise BadInput("argv is empty: pass the command as a list, e.g. ['python', 'repro.py']")
    if len(argv) > MAX_ARGS or any(len(a) > MAX_ARG_CHARS or "\0" in a for a in argv):
        raise BadInput(f"argv: at most {MAX_ARGS} arguments of at most {MAX_ARG_CHARS} characters, no NUL bytes")
    if len(argv) == 1 and " " in argv[0] and not Path(argv[0]).exists():
        raise BadInput("argv must be a list of arguments, not a shell string: ['python', 'repro.py', '--flag']")
    program = _program(argv[0], cwd)
    if is_python(program):
        i = _script_index(argv)
        script = check_path(argv[i], roots, what="script", base=cwd)
        if not script.is_file():
            raise BadInput(f"script {argv[i]!r} does not exist (resolved to {script})")
    else:
        check_path(program, roots, what="program")
    return [str(program), *argv[1:]]


def python_script_index(argv: list[str]) -> int | None:
    """Where the script sits in a checked `python [switches] script args` argv; None for another program."""
    if not argv or not is_python(Path(argv[0])):
        return None
    return _script_index(argv)
