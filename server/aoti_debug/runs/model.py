"""The rerun tool's contract: the request, the result and its parts (pydantic models with descriptions)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.classify.engine import Classification
from aoti_debug.common.limits import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from aoti_debug.runs.artifacts import Artifacts, CompileCheck
from aoti_debug.runs.calls import CallsReport
from aoti_debug.runs.compare import BaselineComparison
from aoti_debug.runs.flags import FlagUse
from aoti_debug.runs.forensics import Backtrace, Faulthandler
from aoti_debug.runs.memcheck import Memcheck

# Tails in the result: enough for the error, small enough for a client's output cap.
TAIL_CHARS = 4000
# Per log file on disk; beyond it only bytes are counted.
LOG_CAP = 32 * 2**20
CRASH_SIGNALS = {"SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE"}
URI = "aoti-run://{run_id}/{name}"

Status = Literal["running", "ok", "failed", "crashed", "timeout", "cancelled", "spawn_failed",
                 "flags_not_applied", "error"]


class RerunRequest(BaseModel):
    """What to rerun and with which flags."""

    model_config = ConfigDict(extra="forbid")
    argv: list[str] = Field(min_length=1, description="The repro command as an argv list, never a shell string: "
                            "['python', 'repro.py', '--load-only']; the script must lie inside the allowed roots")
    cwd: str | None = Field(None, description="Working directory inside the allowed roots (default: the first root)")
    presets: list[str] = Field(default_factory=list, description="Flag presets from guides/debug-flags.md: sanity, "
                               "deterministic, kernel_names, cpp_stacktraces, logs, trace, faulthandler, minifier, "
                               "backtrace, memcheck")
    flags: dict[str, str] = Field(default_factory=dict, description="More allow-listed flags, NAME: value")
    baseline: bool = Field(False, description="First run once without the requested flags, then compare")
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S,
                             description="Limit per run; then the whole process group is killed")
    fresh_cache: bool = Field(True, description="Give the run a fresh TORCHINDUCTOR_CACHE_DIR, so a command "
                              "that compiles rebuilds and compile-time flags act")
    forensics: bool = Field(True, description="After a silent segfault rerun under gdb/cuda-gdb; after a CUDA "
                            "illegal memory access under compute-sanitizer (when installed)")


class Forensics(BaseModel):
    faulthandler: Faulthandler | None = Field(None, description="Python frames at the crash")
    backtrace: Backtrace | None = Field(None, description="Native frames, attributed to libraries, with a verdict")
    memcheck: Memcheck | None = None
    log_path: str | None = Field(None, description="Log of the forensic run when it was a separate run")
    notes: list[str] = Field(default_factory=list)


class RunProgress(BaseModel):
    elapsed_s: float
    output_bytes: int
    step: str


class RunResult(BaseModel):
    """The outcome of a rerun: exit, signal, output tails, classification, flags and whether they acted."""

    run_id: str
    status: Status = Field(description="flags_not_applied: exit 0 but compile-time flags could not act")
    command: list[str] = Field(description="The command as given")
    argv: list[str] = Field(description="What ran (with a debugger or sanitizer in front for those presets)")
    cwd: str
    flags: list[FlagUse] = Field(default_factory=list, description="Every flag set, its phase and whether it acted")
    not_applied: list[str] = Field(default_factory=list, description="Compile-time flags that had no effect")
    exit_code: int | None = None
    signal: str | None = Field(None, description="SIGSEGV, SIGABRT, SIGBUS, SIGKILL...")
    timed_out: bool = False
    cancelled: bool = False
    duration_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    log_truncated: bool = False
    log_path: str | None = Field(None, description="Both streams in arrival order, on the server's disk")
    log_uri: str = Field(description="MCP resource with the log")
    classification: Classification | None = None
    compile: CompileCheck | None = None
    artifacts: Artifacts | None = None
    forensics: Forensics | None = None
    calls: CallsReport | None = Field(None, description="preset calls: each package load and call with its "
                                      "tensors, and the one the process died inside")
    baseline: BaselineComparison | None = None
    warnings: list[str] = Field(default_factory=list)
    next_step: str = ""
    progress: RunProgress | None = Field(None, description="While running: elapsed time and bytes of output")
