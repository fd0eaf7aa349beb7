"""Baseline comparison: did the flags change the pattern, the evidence or the exit?"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from aoti_debug.classify.engine import Classification

# Evidence lines listed as new or gone, at most.
MAX_LINES = 5


class Outcome(Protocol):
    exit_code: int | None
    signal: str | None
    timed_out: bool
    status: str
    log_path: str | None
    classification: Classification | None


class BaselineComparison(BaseModel):
    """The run without the requested flags against the run with them."""

    status: str = Field(description="The baseline's status")
    exit_code: int | None = None
    signal: str | None = None
    pattern: str | None = Field(None, description="The baseline's pattern")
    evidence: list[str] = Field(default_factory=list, description="The baseline's evidence lines")
    log_path: str | None = None
    pattern_changed: bool
    exit_changed: bool
    evidence_changed: bool
    new_evidence: list[str] = Field(default_factory=list, description="Evidence only the flagged run has")
    gone_evidence: list[str] = Field(default_factory=list, description="Evidence only the baseline has")
    fields_changed: dict[str, str] = Field(default_factory=dict, description="field -> 'before -> after'")
    summary: str


def _exit(o: Outcome) -> str:
    return "timeout" if o.timed_out else o.signal or f"exit {o.exit_code}"


def _evidence(c: Classification | None) -> list[str]:
    return [e.text for e in c.evidence] if c else []


def compare(before: Outcome, after: Outcome) -> BaselineComparison:
    pb = before.classification.pattern if before.classification else None
    pa = after.classification.pattern if after.classification else None
    eb, ea = _evidence(before.classification), _evidence(after.classification)
    fb = before.classification.fields if before.classification else {}
    fa = after.classification.fields if after.classification else {}
    fields = {k: f"{fb.get(k)} -> {fa.get(k)}" for k in sorted(fb.keys() | fa.keys()) if fb.get(k) != fa.get(k)}
    new = [e for e in ea if e not in eb][:MAX_LINES]
    gone = [e for e in eb if e not in ea][:MAX_LINES]
    cmp = BaselineComparison(
        status=before.status, exit_code=before.exit_code, signal=before.signal, pattern=pb, evidence=eb,
        log_path=before.log_path, pattern_changed=pb != pa, exit_changed=_exit(before) != _exit(after),
        evidence_changed=set(eb) != set(ea), new_evidence=new, gone_evidence=gone, fields_changed=fields,
        summary="",
    )
    parts = [f"pattern {pb} -> {pa}" if cmp.pattern_changed else f"same pattern ({pa})",
             f"{_exit(before)} -> {_exit(after)}" if cmp.exit_changed else f"same outcome ({_exit(after)})"]
    if new:
        parts.append(f"new evidence: {new[0]!r}")
    elif not cmp.evidence_changed:
        parts.append("same evidence")
    verdict = "the flags changed the diagnosis" if (cmp.pattern_changed or new) else (
        "the flags changed the outcome" if cmp.exit_changed else "the flags changed nothing visible")
    cmp.summary = f"{verdict}: " + "; ".join(parts)
    return cmp
