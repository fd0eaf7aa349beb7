"""Whose failure a log shows (data/engines.yaml): code that fails outside a compiled model, in words that read like
one of our patterns (another ML runtime, a Triton kernel the program launched itself), each known by lines only it
prints; and the words that are a sign of a compiled PyTorch model after all. A log with an outsider's line and none
of its words is that outsider's failure."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.classify.guides import Pattern
from aoti_debug.common.yamlio import load_model

DATA = Path(__file__).parent.parent / "data" / "engines.yaml"


class Outsider(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    says: str = Field(description="The summary of its failure: {line} the line's number, {note} its note")
    ours: list[str] = Field(min_length=1, description="Words that anywhere in the log make it ours after all")
    lines: list[Pattern] = Field(min_length=1, description="Lines only it prints")
    keeps: list[str] = Field(default_factory=list, description=(
        "Patterns that stay the diagnosis in its log: the environment's, whoever runs (a toolchain's set-up)"))


class _Outsiders(BaseModel):
    model_config = ConfigDict(extra="forbid")
    outsiders: list[Outsider] = Field(min_length=1)


@cache
def outsiders() -> list[Outsider]:
    return load_model(DATA, _Outsiders).outsiders


def engines() -> list[Pattern]:
    """Every outsider's lines, in order (a line's index maps back to its outsider through owners())."""
    return [p for o in outsiders() for p in o.lines]


def owners() -> list[Outsider]:
    """The outsider of each line of engines(), by index."""
    return [o for o in outsiders() for _ in o.lines]


class Watch:
    """Passes a log's chunks on and notes whether any of them holds one of the words (searched until the first is
    found)."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = [w.encode() for w in words]
        self.seen = False

    def __call__(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        keep = max(map(len, self.words)) - 1
        tail = b""
        for chunk in chunks:
            if not self.seen:
                window = tail + chunk[:keep] if tail else b""  # a word cut by the chunk boundary
                self.seen = any(w in chunk or w in window for w in self.words)
                tail = (tail + chunk[-keep:])[-keep:]  # not tail + chunk: that copies every chunk
            yield chunk
