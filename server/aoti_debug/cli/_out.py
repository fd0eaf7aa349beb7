"""What the subcommands share: the --root option, progress on stderr, the model as JSON or a human summary."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from aoti_debug.common.errors import BadInput

if TYPE_CHECKING:
    from pydantic import BaseModel


def emit(model: BaseModel, as_json: bool, human: Callable[[BaseModel], str]) -> None:
    print(model.model_dump_json(indent=2) if as_json else human(model))


def pairs(items: list[str], option: str, example: str, *, empty_ok: bool = False) -> dict[str, str]:
    """Repeated `--option KEY=VALUE` arguments as a dict; a malformed one is bad input."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not (value or empty_ok):
            raise BadInput(f"{option} {item!r}: write {example}")
        out[key] = value
    return out


def add_roots(p: argparse.ArgumentParser, help: str = "Allowed root (repeatable; also $AOTI_DEBUG_ROOTS; "
              "default: the current directory)") -> None:
    p.add_argument("--root", action="append", default=[], metavar="DIR", help=help)


def progress_line(elapsed: float, nbytes: int, step: str) -> None:
    """A run's progress, redrawn on one stderr line."""
    print(f"\r  {step}: {elapsed:5.0f} s, {nbytes} bytes of output ", end="", file=sys.stderr, flush=True)
