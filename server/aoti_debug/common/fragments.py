"""Regex fragments several rules share (data/fragments.yaml): a rule's regex writes `(?&name)` where the fragment's
text goes, and the loaders put it in as a non-capturing group before compiling, so one wording (torch's own install
folder, the C files Triton builds, the breaks only torch.compile raises) is written once for every rule that needs it.

`(?&name)` is PCRE's call of a named pattern; Python's re rejects it, so a fragment left unexpanded can never pass as
a literal."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from aoti_debug.common.yamlio import load_model

DATA = Path(__file__).parent.parent / "data" / "fragments.yaml"
CALL = re.compile(r"\(\?&(\w+)\)")  # any name, so that a misspelt one is reported as unknown


class _Fragments(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fragments: dict[str, str] = Field(description="name -> regex text, used as (?&name) in a rule's regex")

    @field_validator("fragments")
    @classmethod
    def _each_compiles_alone(cls, v: dict[str, str]) -> dict[str, str]:
        for name, text in v.items():
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise ValueError(f"fragment name {name!r}: lower case letters, digits and _")
            if CALL.search(text):
                raise ValueError(f"fragment {name!r} calls another fragment: write it out")
            try:
                if re.compile(text).groups:
                    raise ValueError(f"fragment {name!r} has a capturing group: use (?:...)")
            except re.error as exc:
                raise ValueError(f"fragment {name!r} is not a regex on its own: {exc}") from exc
        return v


@cache
def fragments() -> dict[str, str]:
    return load_model(DATA, _Fragments).fragments


def expand(regex: str) -> str:
    """The regex with each (?&name) replaced by its fragment as a non-capturing group; ValueError names an unknown
    fragment."""
    if "(?&" not in regex:
        return regex
    known = fragments()

    def one(m: re.Match[str]) -> str:
        if m.group(1) not in known:
            raise ValueError(f"unknown fragment (?&{m.group(1)}); data/fragments.yaml has {sorted(known)}")
        return f"(?:{known[m.group(1)]})"

    return CALL.sub(one, regex)


def _expand_text(v: object) -> object:
    return expand(v) if isinstance(v, str) else v  # anything else fails the str check that follows


# A regex field of a data model (a rule's pattern, a cleaning rule): its shared fragments, (?&name), are written out
# as the model validates it, before anything compiles it.
Regex = Annotated[str, BeforeValidator(_expand_text)]
