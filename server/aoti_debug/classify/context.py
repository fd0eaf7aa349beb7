"""Whose failure a log shows: lines only another ML runtime or kernel compiler prints, and any sign of PyTorch
(data/engines.yaml). A log with the first and none of the second is that engine's failure, not a compiled model's."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.classify.guides import Pattern
from aoti_debug.common.yamlio import load_model

DATA = Path(__file__).parent.parent / "data" / "engines.yaml"


class _Engines(BaseModel):
    model_config = ConfigDict(extra="forbid")
    engines: list[Pattern]
    pytorch: list[str] = Field(min_length=1)


@cache
def _data() -> _Engines:
    return load_model(DATA, _Engines)


def engines() -> list[Pattern]:
    """Lines only another runtime or kernel compiler prints, one entry per engine."""
    return _data().engines


class Watch:
    """Passes a log's chunks on and notes whether any of them names PyTorch (searched until the first is found)."""

    def __init__(self) -> None:
        self.words = [w.encode() for w in _data().pytorch]
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
