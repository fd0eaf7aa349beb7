"""dump_kernel_inputs' contract: the request, one pass's summary, and the result."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.common.limits import DEFAULT_PASS_TIMEOUT_S, MAX_TIMEOUT_S
from aoti_debug.kernels.index_oob_model import OobExplanation
from aoti_debug.kernels.printer_log import IndexAssert, Launch, TensorRecord
from aoti_debug.kernels.suspects import SavedTensor, Suspect

PRINTER, FILTER, BLOCKING = ("AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT",
                             "CUDA_LAUNCH_BLOCKING")
Status = Literal["ok", "no_failing_kernel", "printer_silent", "flags_not_applied", "failed", "timeout", "cancelled",
                 "spawn_failed"]


class DumpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    argv: list[str] = Field(min_length=1, description="The repro as an argv list; it must export and compile "
                            "(the printer is generated code), e.g. ['python', 'repro.py']")
    cwd: str | None = Field(None, description="Working directory inside the allowed roots")
    kernels: list[str] = Field(default_factory=list, description="Print these kernels (skips the level-3 pass)")
    level: Literal[1, 2, 3] = Field(2, description="3: only find the failing kernel; 2: then print its inputs' "
                                    "stats; 1: then save every tensor to .pt files (unfiltered) and list them")
    timeout_s: float = Field(DEFAULT_PASS_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, description="Limit per pass")


class PassSummary(BaseModel):
    """One rerun of the repro with the printer compiled in."""

    level: int
    run_id: str
    status: str
    flags: dict[str, str]
    exit_code: int | None = None
    signal: str | None = None
    duration_s: float = 0.0
    compiled: bool | None = Field(None, description="The run generated code (so the printer flags acted)")
    log_path: str | None = None
    lines: int = 0
    bytes: int = 0
    records: int = 0
    unparsed_lines: int = 0
    pattern: str | None = Field(None, description="classify_error's pattern for the run's output")


class DumpResult(BaseModel):
    """The failing kernel, what went into it, and the suspects, from two printer passes."""

    status: Status = Field(description="ok; no_failing_kernel (every launch finished: pass 2 printed every kernel); "
                           "printer_silent (nothing printed: MultiKernel, or the model never ran); flags_not_applied "
                           "(the repro compiled nothing); failed (a pass could not run); timeout; cancelled")
    failing_kernel: str | None = Field(None, description="Last kernel launched without finishing")
    failing_kernel_from: str | None = Field(None, description="level3, level2 or cpu_exception")
    last_kernels: list[str] = Field(default_factory=list, description="The kernels launched last (level 3)")
    printed_kernels: list[str] = Field(default_factory=list, description="Pass 2's filter (empty: every kernel)")
    model_inputs: list[TensorRecord] = Field(default_factory=list)
    launches: list[Launch] = Field(default_factory=list, description="The failing kernel's, its producers' and the "
                                   "NaN producer's launches, with each argument before and after")
    suspects: list[Suspect] = Field(default_factory=list)
    index_assert: IndexAssert | None = None
    explanation: OobExplanation | None = Field(None, description="explain_index_oob on the rebuilt sources")
    saved_tensors: list[SavedTensor] = Field(default_factory=list, description="Level 1: the .pt files")
    passes: list[PassSummary] = Field(default_factory=list)
    unparsed_lines: int = 0
    summary: str = ""
    next_step: str = ""
    warnings: list[str] = Field(default_factory=list)
