"""explain_index_oob's contract (pydantic models) and its causes and fixes (data/index_oob.yaml)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.common.yamlio import load_model
from aoti_debug.kernels.printer_log import IndexAssert

DATA = Path(__file__).resolve().parent.parent / "data" / "index_oob.yaml"
RootCause = Literal["empty_dimension", "index_value_out_of_range", "unknown"]
Status = Literal["explained", "partial", "no_assert", "kernel_not_found"]


class SourceLine(BaseModel):
    file: str = Field(description="A path, or package.pt2:member")
    line: int
    text: str


class CallArg(BaseModel):
    """One argument at the kernel's call site, mapped to what it is."""

    param: str = Field(description="Kernel parameter: in_ptr0, out_ptr0, in_out_ptr0, ks0, xnumel...")
    expr: str = Field(description="The argument as written at the call site")
    name: str = Field(description="The tensor or symbol it names (arg2_1, buf0, s70, 12)")
    model_input: str | None = Field(None, description="Graph input name when the argument is a model input")
    input_index: int | None = Field(None, description="Its position in the flat input list (input_handles[i])")
    size_of: str | None = Field(None, description="For a size symbol: the input dimension it is read from, "
                                "as 'arg1_1.size(0)' (int64_t s70 = arg1_1_size[0])")


class DimGuard(BaseModel):
    """What check_input_<i> checks on one input dimension."""

    input: str
    input_index: int
    dim: int
    min: int | None = Field(None, description="Lower bound checked ('dim value is too small'); None: no check")
    max: int | None = None
    enforced: str = Field(description="runtime_env: only with AOTI_RUNTIME_CHECK_INPUTS=1; always; absent; unknown")


class Bound(BaseModel):
    """The assertion's bound and where its value comes from."""

    text: str = Field(description="As printed: 100, 100L, ks0, 1 + ks0")
    value: int | None = Field(None, description="Static bound")
    param: str | None = Field(None, description="The size parameter in the bound (ks0)")
    call_expr: str | None = Field(None, description="What the call site passes for it (s70)")
    input: str | None = None
    input_index: int | None = None
    dim: int | None = None
    runtime_value: int | None = Field(None, description="The size at run time when the log shows it (printer level 2)")
    guard: DimGuard | None = None
    tensor: str | None = Field(None, description="Static bound: the indexed tensor whose dimension it is, if known")


class OobExplanation(BaseModel):
    """An index-out-of-bounds assertion mapped to kernel, call site, input dimension, guards and root cause."""

    status: Status = Field(description="explained; partial (some links missing, see notes); no_assert (the log "
                           "has no 'index out of bounds' line); kernel_not_found (no kernel holds that assertion)")
    assertion: IndexAssert | None = None
    kernel: str | None = None
    kernel_kind: str | None = Field(None, description="triton or cpp")
    candidates: list[str] = Field(default_factory=list, description="Every kernel holding the same assertion text")
    assert_source: SourceLine | None = Field(None, description="The device_assert / AOTI_TORCH_CHECK line")
    signature: list[str] = Field(default_factory=list, description="The kernel's parameters (constexpr dropped)")
    call_site: SourceLine | None = None
    call_args: list[CallArg] = Field(default_factory=list)
    bound: Bound | None = None
    index_from: list[CallArg] = Field(default_factory=list, description="Tensors the index value is loaded from")
    indexed: list[CallArg] = Field(default_factory=list, description="The tensor the index addresses")
    index_chain: list[str] = Field(default_factory=list, description="tmpN definitions leading to the assertion")
    clamped: bool = Field(False, description="The index is clamped to the size (min(idx, ks - 1)): only an empty "
                          "dimension can fail")
    source_nodes: list[str] = Field(default_factory=list, description="FX nodes fused into the kernel")
    aten_ops: list[str] = Field(default_factory=list)
    ops_from: str | None = Field(None, description="comment (the call site's Source Nodes line) or kernel_name "
                                 "(CPU kernels carry no comment: the ops are read from the fused name)")
    root_cause: RootCause = "unknown"
    root_cause_title: str = ""
    contributing: list[str] = Field(default_factory=list, description="missing_lower_bound_guard, "
                                    "guard_not_enforced, no_input_checks")
    why: list[str] = Field(default_factory=list)
    fixes: list[str] = Field(default_factory=list)
    markdown: str = ""
    origin: str | None = Field(None, description="package, extracted or cache")
    files: list[str] = Field(default_factory=list, description="Source files read")
    notes: list[str] = Field(default_factory=list)


class Cause(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    why: str
    fixes: list[str]


class CauseTable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    causes: dict[str, Cause]
    contributing: dict[str, Cause]


@cache
def cause_table() -> CauseTable:
    return load_model(DATA, CauseTable)


class _Fill(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def fill(text: str, values: dict[str, object]) -> str:
    return text.format_map(_Fill({k: v for k, v in values.items() if v is not None}))
