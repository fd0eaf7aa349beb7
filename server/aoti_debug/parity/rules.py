"""Mismatch records built from the consequence table (data/parity.yaml): severity, check text, outcomes, fix."""

from __future__ import annotations

import string
from typing import Any

from pydantic import BaseModel, Field

from aoti_debug.package.torch_facts import Outcome, Severity, consequences

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


class Mismatch(BaseModel):
    """One way the package, the runtime and the inputs disagree, with what it will do."""

    kind: str = Field(description="Mismatch kind: a key of data/parity.yaml (dtype, static_dim, no_gpu, ...)")
    severity: Severity
    title: str
    message: str = Field(description="What differs, in one sentence")
    input_index: int | None = Field(None, description="Flat input position (input_handles[i]), for input mismatches")
    input_name: str | None = None
    dim: int | None = None
    expected: str | None = None
    got: str | None = None
    with_check: str | None = Field(
        None, description="The exact error AOTI_RUNTIME_CHECK_INPUTS=1 raises for this (if the package has the check)")
    with_check_note: str | None = None
    first_check_failure: bool = Field(
        False, description="This is the error a run with AOTI_RUNTIME_CHECK_INPUTS=1 will show (only the first shows)")
    at_runtime: list[Outcome] = Field(default_factory=list, description="What happens without the checks")
    fix: str


class _Blank(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return "?"


def _fmt(template: str, fields: dict[str, Any]) -> str:
    return string.Formatter().vformat(template, (), _Blank({k: v for k, v in fields.items() if v is not None}))


def make(kind: str, message: str, *, checked: bool = False, **fields: Any) -> Mismatch:
    """A Mismatch of kind; checked=True when the package really contains the check that catches it."""
    c = consequences()[kind]
    return Mismatch(
        kind=kind, severity=c.severity, title=c.title, message=message,
        input_index=fields.get("index"), input_name=fields.get("name"), dim=fields.get("dim"),
        expected=None if fields.get("expected") is None else str(fields["expected"]),
        got=None if fields.get("got") is None else str(fields["got"]),
        with_check=_fmt(c.with_check, fields) if (checked and c.with_check) else None,
        with_check_note=c.with_check_note, at_runtime=c.without_check, fix=_fmt(c.fix, fields),
    )


def ordered(mismatches: list[Mismatch]) -> list[Mismatch]:
    """Errors first, then warnings, then info; input mismatches by input index within a severity."""
    return sorted(mismatches, key=lambda m: (SEVERITY_ORDER[m.severity], m.input_index is None,
                                             m.input_index or 0))
