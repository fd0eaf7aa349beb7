"""Whose failure a log shows (data/engines.yaml): code that fails outside a compiled model, in words that read like
one of our patterns (another ML runtime, a Triton kernel the program launched itself, a build of its own native code),
each known by lines only it prints; and the words that are a sign of a compiled PyTorch model after all. A log with an
outsider's line and none of its words is that outsider's failure, unless the outsider keeps the diagnosis."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aoti_debug.classify.guides import PATTERN_IDS, Pattern
from aoti_debug.classify.logscan import Hits
from aoti_debug.common.yamlio import load_model

DATA = Path(__file__).parent.parent / "data" / "engines.yaml"
KEEPABLE = tuple(p for p in PATTERN_IDS if p != "unknown")


class Outsider(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    says: str = Field(description="The summary of its failure: {line} the line's number, {note} its note")
    next: str = Field(min_length=1, description="What to do instead of an AOTI fix (triage's fix)")
    ours: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1, description="Words that anywhere in the log make it ours after all")
    lines: list[Pattern] = Field(min_length=1, description="Lines only it prints")
    keeps: list[Literal[KEEPABLE]] = Field(  # type: ignore[valid-type]
        default_factory=list, description=(
            "Patterns that stay the diagnosis in its log: the environment's or the hardware's, whoever runs"))

    @model_validator(mode="after")
    def _says_formats(self) -> Outsider:
        try:  # a stray {field} fails when the data loads, not when a log is classified
            self.says.format(line=1, note="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"says: only {{line}} and {{note}} are filled in ({exc!r})") from None
        return self


class _Outsiders(BaseModel):
    model_config = ConfigDict(extra="forbid")
    outsiders: list[Outsider] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> _Outsiders:
        names = [o.name for o in self.outsiders]
        if len(set(names)) != len(names):
            raise ValueError(f"outsider names repeat: {names}")
        return self


@cache
def outsiders() -> list[Outsider]:
    return load_model(DATA, _Outsiders).outsiders


def engines() -> list[Pattern]:
    """Every outsider's lines, in order (a line's index maps back to its outsider through owners())."""
    return [p for o in outsiders() for p in o.lines]


def named(name: str) -> Outsider | None:
    return next((o for o in outsiders() if o.name == name), None)


def owners() -> list[Outsider]:
    """The outsider of each line of engines(), by index."""
    return [o for o in outsiders() for _ in o.lines]


def watches() -> dict[str, Watch]:
    """A fresh watch of each outsider's words, by its name."""
    return {o.name: Watch(o.ours) for o in outsiders()}


def foreign(lines: Hits, seen: dict[str, Watch], winner: str) -> tuple[Outsider, int, int, str] | None:
    """The outsider whose failure the log is, with its first line (regex index, line number, text): of the outsiders
    that printed a line, whose words the log does not hold and that do not keep the winning pattern, the one whose
    first line comes first; None when there is none."""
    kin = owners()
    found = [(hits[0][0], idx, hits[0][1]) for idx, hits in lines.first.items()  # each regex's first hit
             if hits and not seen[kin[idx].name].seen and winner not in kin[idx].keeps]
    if not found:
        return None
    line, idx, text = min(found)
    return kin[idx], idx, line, text


class Watch:
    """Passes a log's chunks on and notes whether any of them holds one of the words (searched until the first is
    found)."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = [w.encode() for w in words]
        self.seen = False

    def __call__(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        keep = max(map(len, self.words)) - 1  # a word cut by a chunk boundary: its first part is in the last bytes
        tail = b""
        for chunk in chunks:
            if not self.seen:
                window = tail + chunk[:keep] if tail else b""
                self.seen = any(w in chunk or w in window for w in self.words)
                if keep:
                    tail = (tail + chunk[-keep:])[-keep:]  # not tail + chunk: that copies every chunk
            yield chunk
