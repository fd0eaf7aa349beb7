"""check_parity's data: torch enums, torch-version hints and mismatch consequences, validated on load."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aoti_debug.common.yamlio import load_model

DATA = Path(__file__).resolve().parent.parent / "data"

Severity = Literal["error", "warning", "info"]
OutcomeName = Literal["silent_wrong_result", "cpp_exception", "device_assert", "illegal_memory_access",
                      "segfault", "illegal_instruction", "load_failure", "runs_ok", "undefined"]


class DtypeInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: int = Field(description="c10::ScalarType value, as the dtype check prints it")
    aten: str = Field(description="at::k... name, as the dtype check prints it")
    itemsize: int
    aliases: list[str] = Field(default_factory=list)


class Enums(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dtypes: dict[str, DtypeInfo]
    device_types: dict[str, int]
    cpu_isa_flags: dict[str, list[str]] = Field(description="AOTI_CPU_ISA token -> cpuinfo flags it needs")

    def dtype_name(self, raw: str) -> str | None:
        """Canonical torch dtype name for 'torch.float32', 'float', 'at::kFloat', 'Float'..."""
        s = raw.strip().removeprefix("torch.")
        for name, info in self.dtypes.items():
            if s == name or s in info.aliases or s == info.aten or f"at::k{s}" == info.aten:
                return name
        return None

    def device_name(self, code: int) -> str:
        return next((n for n, c in self.device_types.items() if c == code), f"device type {code}")


class Hint(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    regex: str
    unless: str | None = None
    min: str | None = None
    max: str | None = None
    provenance: str

    @field_validator("regex", "unless")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            re.compile(v)
        return v


class Outcome(BaseModel):
    """What happens at run time without the input checks, in one situation."""

    model_config = ConfigDict(extra="forbid")
    outcome: OutcomeName
    when: str = Field(description="The situation this outcome belongs to")
    provenance: str = Field(description="observed (where), from source, reported (issue), or expected")


class Consequence(BaseModel):
    """One mismatch kind: severity, what AOTI_RUNTIME_CHECK_INPUTS=1 says, what happens without it, the fix."""

    model_config = ConfigDict(extra="forbid")
    severity: Severity
    title: str
    with_check: str | None
    with_check_note: str | None = None
    without_check: list[Outcome]
    fix: str


class _Hints(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hints: list[Hint]


class _Kinds(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kinds: dict[str, Consequence]


def _load(name: str, model: type[BaseModel]) -> BaseModel:
    return load_model(DATA / name, model)


@cache
def enums() -> Enums:
    return _load("torch_enums.yaml", Enums)  # type: ignore[return-value]


@cache
def hints() -> list[Hint]:
    return _load("torch_hints.yaml", _Hints).hints  # type: ignore[attr-defined]


@cache
def consequences() -> dict[str, Consequence]:
    return _load("parity.yaml", _Kinds).kinds  # type: ignore[attr-defined]


def version_tuple(v: str) -> tuple[int, ...]:
    """'2.13.0+cu130' -> (2, 13, 0); unparsable parts stop the tuple."""
    out = []
    for part in re.split(r"[.+]", v):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)
