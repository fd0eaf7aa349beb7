"""The aoti-debug command line: one subcommand per tool, mirroring the MCP server, plus serve, install and guide.
A subcommand's module is imported only when it runs; cli/ may import every package (it is the top layer)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback

from aoti_debug.common.errors import AotiDebugError

# Subcommand -> module in this package with register(subparsers) and run(args) -> exit code.
COMMANDS = {
    "classify": "classify",
    "parity": "parity",
    "rerun": "rerun",
    "get-run": "get_run",
    "serve": "serve",
    "guide": "guide",
    "dump-kernels": "dump_kernels",
    "explain-oob": "explain_oob",
    "triage": "triage",
    "install": "install",
}

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70


class _Version(argparse.Action):
    """--version: the package version and the guides' digest, computed only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: object) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0,
                         help="Print the version and the digest of the guides it serves, then exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from aoti_debug.version import describe

        print(describe())
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or one with just the `only` subcommand (its module alone is imported: a fast start)."""
    parser = argparse.ArgumentParser(prog="aoti-debug", description="Triage AOTInductor crashes with evidence.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        if only is not None and name != only:
            continue
        mod = importlib.import_module(f"aoti_debug.cli.{module}")
        p = mod.register(sub, name)
        p.set_defaults(_run=mod.run)
    return parser


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# Commands that run the user's repro (serve adopts orphans itself).
RUNS_REPROS = ("rerun", "triage", "dump-kernels")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Only the named subcommand's module is imported; --version alone needs none of them ("").
    only = argv[0] if argv and argv[0] in COMMANDS else "" if argv[:1] == ["--version"] else None
    args = build_parser(only).parse_args(argv)
    if argv and argv[0] in RUNS_REPROS:  # what a run's dead leader leaves behind becomes ours to kill
        from aoti_debug.runs.proctree import adopt_orphans

        adopt_orphans()
    try:
        return int(args._run(args) or 0)
    except AotiDebugError as exc:
        print(f"aoti-debug: error: {_first_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("aoti-debug: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a raw traceback for the user; one line, and the trace on request
        from pydantic import ValidationError  # loaded already wherever a request model was built

        from aoti_debug.common.errors import from_validation

        if isinstance(exc, ValidationError):  # a request model refused the options: bad input, one line
            print(f"aoti-debug: error: {_first_line(from_validation(exc))}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if os.environ.get("AOTI_DEBUG_TRACEBACK"):
            traceback.print_exc()
        print(f"aoti-debug: internal error: {type(exc).__name__}: {_first_line(exc)}"
              " (set AOTI_DEBUG_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
