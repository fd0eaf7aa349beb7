"""Which phase a log failed in (export, compile, load, run): the last phase marker of data/phases.yaml."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.classify.guides import Pattern
from aoti_debug.common.yamlio import load_model

DATA = Path(__file__).parent.parent / "data" / "phases.yaml"
LogPhase = Literal["export", "compile", "load", "run"]
# What a reported phase rests on: a line of the log, the winning pattern's only phase, where it usually happens, or a
# tool that saw it happen (a diagnosis observed rather than read in a log).
PhaseBasis = Literal["marker", "pattern", "usual", "observed"]
# A rule's phases (guides' front matter) in the four words the classification reports.
RULE_PHASE: dict[str, LogPhase] = {"export": "export", "lowering": "compile", "compile": "compile",
                                   "load": "load", "runtime": "run", "teardown": "run"}


class Marker(Pattern):
    """A line or frame that only one phase prints; with no phase, one that shows a compiled model but not where it
    failed (the command or code that compiled it)."""

    phase: LogPhase | None
    shows_model: bool = Field(default=True, description=(
        "False for a failure any program on the device prints (a kernel's illegal access or assert): it says the "
        "phase and lets eager-shared lines decide, but is no sign of a compiled model when the classifier weighs "
        "whether the log is an AOTI failure at all"))


class ExceptionCue(Pattern):
    """An exception type (Python, C++ or a library's) and the patterns it usually means: ranks alternatives only."""

    weight: float = Field(default=0.3, gt=0, lt=0.5)
    likely: dict[str, float] = Field(description="pattern id -> cue weight (below 0.5: it never decides)")


class _Markers(BaseModel):
    model_config = ConfigDict(extra="forbid")
    markers: list[Marker]
    likely: dict[LogPhase, dict[str, float]] = Field(description="phase -> {pattern id: cue weight}")
    exceptions: list[ExceptionCue] = Field(default_factory=list)


@cache
def _data() -> _Markers:
    return load_model(DATA, _Markers)


def markers() -> list[Marker]:
    """The phase markers, in file order (on one line, the first listed wins)."""
    return _data().markers


def likely(phase: LogPhase | None) -> dict[str, float]:
    """Patterns a failure in this phase usually is, with the weight of a weak cue."""
    return _data().likely.get(phase, {}) if phase else {}


def exception_cues() -> list[ExceptionCue]:
    """The exception-type cues, in file order."""
    return _data().exceptions


def hints(phase: LogPhase | None, exceptions: list[int], aoti_context: bool = True) -> dict[str, float]:
    """Pattern id -> weak-cue weight from the phase and the exception types seen (indexes), noisy-OR combined;
    a type every Python program raises (aoti_only) counts only in a log that shows a compiled model, and so does
    the phase (what a phase usually means is said of a compiled model's phases)."""
    out = dict(likely(phase)) if aoti_context else {}
    cues = exception_cues()
    for idx in exceptions:
        if cues[idx].aoti_only and not aoti_context:
            continue
        for pid, w in cues[idx].likely.items():
            out[pid] = round(1 - (1 - out.get(pid, 0.0)) * (1 - w), 4)
    return out


def decide(seen: list[tuple[int, int]], rule_phases: list[str],
           usual: str | None = None) -> tuple[LogPhase | None, Marker | None, PhaseBasis | None]:
    """The phase from (line, marker index) hits, else the rule's only phase, else its usual phase; with the marker
    that decided and what the phase rests on. A marker any program prints (aoti_only: a library the loader could not
    load, a compiler's diagnostic) says the phase only when no other marker and no single phase of the rule does: a
    warning about some other library's load does not make an input check a load failure."""
    seen = [s for s in seen if markers()[s[1]].phase]
    strong = [s for s in seen if not markers()[s[1]].aoti_only]
    own = {RULE_PHASE[p] for p in rule_phases}
    if not strong and len(own) == 1:
        return own.pop(), None, "pattern"
    if strong or seen:  # the last marker of the log (on one line, the first listed)
        _line, idx = max(strong or seen, key=lambda s: (s[0], -s[1]))
        return markers()[idx].phase, markers()[idx], "marker"
    if usual:
        return RULE_PHASE[usual], None, "usual"
    return None, None, None
