"""Which executables outside the roots may run: a Python interpreter or a C++ compiler, judged by what the file is
and where it resolves (never by its name alone).

A program inside the roots runs by design (whoever can write there can write a script too). Outside the roots the
server runs only what its own user configured: its own interpreter and venv, the base Python it was made from,
and programs in the directories of the server's PATH. The file must be a native executable (ELF), except a bare
name found on PATH, which may be a wrapper script such as a pyenv shim: PATH is the user's own configuration.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from aoti_debug.common.errors import BadInput

PYTHON_NAME = re.compile(r"python(\d+(\.\d+)*)?[tdm]?")
CXX_NAME = re.compile(r"(?:[\w.+-]*-)?(?:c\+\+|g\+\+|clang\+\+|icpx|icpc|nvc\+\+)(?:-[\d.]+)?")
ELF_MAGIC = b"\x7fELF"


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path == f or path.is_relative_to(f) for f in folders)


def trusted_dirs() -> list[Path]:
    """Folders whose programs the server's user chose: this interpreter's, its venv's and base Python's, PATH."""
    dirs = [Path(sys.executable).parent, Path(sys.prefix) / "bin", Path(sys.base_prefix) / "bin"]
    dirs += [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d and os.path.isabs(d)]
    out: list[Path] = []
    for d in dirs:
        for p in (Path(os.path.abspath(d)), d.resolve()):
            if p not in out:
                out.append(p)
    return out


def is_elf(path: Path) -> bool:
    try:
        with open(path, "rb", buffering=0) as f:  # path is a regular file (checked by the caller)
            return f.read(4) == ELF_MAGIC
    except OSError:
        return False


def locate(name: str, cwd: Path | None = None) -> tuple[Path, bool]:
    """(absolute path, found through PATH) of a program name or path; BadInput if it is no executable file."""
    if "\0" in name or not name:
        raise BadInput("the program name is empty or holds a NUL byte")
    on_path = "/" not in name
    found = shutil.which(name) if on_path else str((cwd or Path.cwd()) / Path(name).expanduser())
    if not found or (on_path and not os.path.isabs(found)):
        raise BadInput(f"program {name!r} not found on PATH")
    path = Path(os.path.abspath(found))
    if not path.exists():
        raise BadInput(f"program {name!r} not found")
    if not path.is_file() or not os.access(path, os.X_OK):
        raise BadInput(f"program {name!r} is not an executable file")
    return path, on_path


def is_server_python(path: Path) -> bool:
    me = {Path(sys.executable).resolve(), Path(getattr(sys, "_base_executable", sys.executable)).resolve()}
    return path.resolve() in me


def is_python(path: Path, on_path: bool = False) -> bool:
    """A Python interpreter: the server's own, or a native executable (or a PATH wrapper) named python*."""
    if is_server_python(path):
        return True
    named = bool(PYTHON_NAME.fullmatch(path.name) or PYTHON_NAME.fullmatch(path.resolve().name))
    return named and (on_path or is_elf(path.resolve()))


def trusted_location(path: Path, on_path: bool, roots: list[Path]) -> bool:
    """Found through PATH, or the path (as given or resolved) lies in the roots or a trusted folder."""
    if on_path or is_server_python(path):
        return True
    folders = [*roots, *trusted_dirs()]
    return _inside(path.parent, folders) or _inside(path.resolve().parent, folders)


def check_python(name: str | None, roots: list[Path], cwd: Path | None = None) -> str:
    """A target interpreter the server may run (default: its own); BadInput for anything else."""
    if not name:
        return sys.executable
    path, on_path = locate(name, cwd)
    if not is_python(path, on_path):
        raise BadInput(f"target Python {name!r} is not a Python interpreter (a native executable named python*, "
                       "or a python* wrapper found on PATH)")
    if not trusted_location(path, on_path, roots):
        raise BadInput(f"target Python {name!r} lies outside the allowed roots and outside the server's trusted "
                       "folders (its own interpreter and venv, the base Python, PATH); name it by its bare name "
                       "on PATH, or put it (a venv) inside the roots")
    return str(path)


def check_compiler(name: str, roots: list[Path], cwd: Path | None = None) -> str:
    """A C++ compiler for CXX: named like one, native (or a PATH wrapper), inside the roots or a trusted folder."""
    path, on_path = locate(name, cwd)
    if not (CXX_NAME.fullmatch(path.name) or CXX_NAME.fullmatch(path.resolve().name)):
        raise BadInput(f"CXX={name!r} is not a C++ compiler (g++, c++, clang++, icpx, ... with an optional "
                       "target prefix or version suffix)")
    if not (on_path or is_elf(path.resolve())):
        raise BadInput(f"CXX={name!r} is not a native executable; name a wrapper by its bare name on PATH")
    if not trusted_location(path, on_path, roots):
        raise BadInput(f"CXX={name!r} lies outside the allowed roots and the server's PATH folders")
    return str(path) if on_path else str(path.resolve())
