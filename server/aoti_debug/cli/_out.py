"""Shared CLI output: the pydantic model as JSON, or a short human summary."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel


def emit(model: BaseModel, as_json: bool, human: Callable[[BaseModel], str]) -> None:
    print(model.model_dump_json(indent=2) if as_json else human(model))
