"""Check a repro command before it runs: an argv list whose script (or program) and cwd lie in the roots.

A Python command may put only allow-listed interpreter switches before the script, each value checked: a switch
that runs or imports code of its own (-c, -m, -W with a dotted category, -X presite, -X pycache_prefix outside
the roots ...) would run code the root check never saw. Everything after the script is the script's own.
"""

from __future__ import annotations

import re
from pathlib import Path

from aoti_debug.common import programs
from aoti_debug.common.errors import BadInput
from aoti_debug.common.roots import check_path

MAX_ARGS = 256
MAX_ARG_CHARS = 4096
# Switches without a value; none runs code or reads files of its own. (-i, -x, -c, -m, - are left out.)
PY_FLAGS = set("uBEsSIOqbPvdR")
# -W action[:message[:category[:module[:lineno]]]]: only the category is imported (when it holds a dot).
W_ACTIONS = ("default", "error", "always", "all", "module", "once", "ignore")
W_CATEGORY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# -X options by name: None takes no value, a regex checks the value; pycache_prefix is checked against the roots.
X_OPTIONS: dict[str, re.Pattern[str] | None] = {
    "faulthandler": None, "dev": None, "importtime": re.compile(r"[12]?"), "showrefcount": None,
    "tracemalloc": re.compile(r"\d{0,4}"), "utf8": re.compile(r"[01]?"), "warn_default_encoding": None,
    "no_debug_ranges": None, "int_max_str_digits": re.compile(r"\d{1,9}"), "frozen_modules": re.compile(r"on|off"),
    "perf": None, "cpu_count": re.compile(r"\d{1,6}|default"), "gil": re.compile(r"[01]"),
}
PYCACHE = "pycache_prefix"


def check_cwd(cwd: str | None, roots: list[Path]) -> Path:
    path = check_path(cwd or roots[0], roots, what="cwd")
    if not path.is_dir():
        raise BadInput(f"cwd {cwd!r} is not a directory")
    return path


def _check_w(value: str) -> None:
    parts = value.split(":")
    action, category = parts[0].strip(), (parts[2].strip() if len(parts) > 2 else "")
    if not action or not any(a.startswith(action) for a in W_ACTIONS) or len(parts) > 5:
        raise BadInput(f"python -W {value!r}: expected action[:message[:category[:module[:lineno]]]] with action "
                       f"one of {', '.join(W_ACTIONS)}")
    if category and not W_CATEGORY.fullmatch(category):
        raise BadInput(f"python -W {value!r}: the category must be a built-in warning class (DeprecationWarning, "
                       "UserWarning ...): a dotted name would import that module before the script runs")
    if len(parts) == 5 and parts[4].strip() and not parts[4].strip().isdigit():
        raise BadInput(f"python -W {value!r}: lineno must be a number")


def _check_x(value: str, roots: list[Path], cwd: Path) -> None:
    name, eq, arg = value.partition("=")
    if name == PYCACHE and eq:
        check_path(arg, roots, what="python -X pycache_prefix", base=cwd)  # bytecode is code: only from the roots
        return
    if name not in X_OPTIONS:
        raise BadInput(f"python -X {value!r} is not allowed; allowed: {', '.join(sorted([*X_OPTIONS, PYCACHE]))}")
    rx = X_OPTIONS[name]
    if (rx is None and eq) or (rx is not None and eq and not rx.fullmatch(arg)) or (
            rx is not None and not eq and not rx.fullmatch("")):
        raise BadInput(f"python -X {value!r}: bad value for {name}")


def _script_index(argv: list[str], roots: list[Path], cwd: Path) -> int:
    """Where the script is: after the allow-listed switches (combined like -uB, values attached or separate)."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        if a == "-" or a.startswith("--"):
            raise BadInput(f"python option {a!r} is not allowed before the script (stdin and long options run "
                           "or change code the root check cannot see)")
        i += 1
        for j, ch in enumerate(a[1:], 1):
            if ch in "cm":
                raise BadInput(f"python -{ch} is refused: run a script file inside the allowed roots, so the root "
                               "check covers the code that runs (write the snippet to a .py file)")
            if ch in "WX":
                value = a[j + 1:]
                if not value:
                    if i >= len(argv):
                        raise BadInput(f"python -{ch} needs a value")
                    value, i = argv[i], i + 1
                (_check_w(value) if ch == "W" else _check_x(value, roots, cwd))
                break
            if ch not in PY_FLAGS:
                raise BadInput(f"python option -{ch} (in {a!r}) is not allowed before the script; allowed: "
                               f"{' '.join('-' + f for f in sorted(PY_FLAGS))}, -W and -X with checked values")
    if i >= len(argv):
        raise BadInput("the python command names no script: pass ['python', 'repro.py', ...]")
    return i


def check_command(argv: list[str], roots: list[Path], cwd: Path) -> list[str]:
    """The argv to run (argv[0] made absolute); BadInput if the script or program lies outside the roots."""
    if not argv:
        raise BadInput("argv is empty: pass the command as a list, e.g. ['python', 'repro.py']")
    if len(argv) > MAX_ARGS or any(not isinstance(a, str) or len(a) > MAX_ARG_CHARS or "\0" in a for a in argv):
        raise BadInput(f"argv: at most {MAX_ARGS} arguments of at most {MAX_ARG_CHARS} characters, no NUL bytes")
    if len(argv) == 1 and " " in argv[0] and not Path(argv[0]).exists():
        raise BadInput("argv must be a list of arguments, not a shell string: ['python', 'repro.py', '--flag']")
    program, on_path = programs.locate(argv[0], cwd)
    if programs.is_python(program, on_path):
        if not programs.trusted_location(program, on_path, roots):
            raise BadInput(f"python {argv[0]!r} lies outside the allowed roots and the server's trusted folders "
                           "(its own interpreter and venv, the base Python, PATH)")
        i = _script_index(argv, roots, cwd)
        script = check_path(argv[i], roots, what="script", base=cwd)
        if not script.is_file():
            raise BadInput(f"script {argv[i]!r} " + ("is not a file" if script.exists() else "does not exist"))
    else:
        check_path(program, roots, what="program")
    return [str(program), *argv[1:]]


def python_script_index(argv: list[str], roots: list[Path], cwd: Path, given: str | None = None) -> int | None:
    """Where the script sits in a checked `python [switches] script args` argv (given: argv[0] as the client named
    it, so a PATH wrapper counts as found on PATH); None for another program."""
    if not argv:
        return None
    program, on_path = programs.locate(given or argv[0], cwd)
    return _script_index(argv, roots, cwd) if programs.is_python(program, on_path) else None
