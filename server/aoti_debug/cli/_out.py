"""Shared CLI output: the pydantic model as JSON, or a short human summary."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from aoti_debug.common.errors import BadInput


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
