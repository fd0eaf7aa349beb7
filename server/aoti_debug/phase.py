"""Which phase a log failed in (export, compile, load, run): the last phase marker of data/phases.yaml."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aoti_debug.errors import DataError
from aoti_debug.guides import Pattern
from aoti_debug.yamlio import YAMLError, load_yaml

DATA = Path(__file__).parent / "data" / "phases.yaml"
LogPhase = Literal["export", "compile", "load", "run"]
# A rule's phases (guides' front matter) in the four words the classification reports.
RULE_PHASE: dict[str, LogPhase] = {"export": "export", "lowering": "compile", "compile": "compile",
                                   "load": "load", "runtime": "run", "teardown": "run"}


class Marker(Pattern):
    """A line or frame that only one phase prints."""

    phase: LogPhase


class _Markers(BaseModel):
    model_config = ConfigDict(extra="forbid")
    markers: list[Marker]
    likely: dict[LogPhase, dict[str, float]] = Field(description="phase -> {pattern id: cue weight}")


@cache
def _data() -> _Markers:
    try:
        return _Markers.model_validate(load_yaml(DATA.read_text(encoding="utf-8")))
    except (YAMLError, ValidationError) as exc:
        raise DataError(f"{DATA}: {exc}") from exc


def markers() -> list[Marker]:
    """The phase markers, in file order (on one line, the first listed wins)."""
    return _data().markers


def likely(phase: LogPhase | None) -> dict[str, float]:
    """Patterns a failure in this phase usually is, with the weight of a weak cue."""
    return _data().likely.get(phase, {}) if phase else {}


def decide(seen: list[tuple[int, int]], rule_phases: list[str]) -> tuple[LogPhase | None, Marker | None]:
    """The phase from (line, marker index) hits, else the rule's only phase; with the marker that decided."""
    if seen:
        _line, idx = max(seen, key=lambda s: (s[0], -s[1]))
        return markers()[idx].phase, markers()[idx]
    own = {RULE_PHASE[p] for p in rule_phases}
    return (own.pop() if len(own) == 1 else None), None
