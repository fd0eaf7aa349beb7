"""triage's contract: the request, each step of the evidence chain, the root cause and the report."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aoti_debug.classify.similar import SimilarReport
from aoti_debug.common.limits import DEFAULT_BUDGET_S, DEFAULT_RUN_TIMEOUT_S, MAX_BUDGET_S

StepStatus = Literal["done", "skipped", "failed"]
Level = Literal["culprit", "pattern"]
Stop = Literal["root_cause_named", "steps_exhausted", "budget", "cancelled", "error"]
TriageStatus = Literal["running", "done", "cancelled", "error"]


class TriageRequest(BaseModel):
    """What to triage: a repro command, an existing log, or both; optionally the package."""

    model_config = ConfigDict(extra="forbid")
    argv: list[str] | None = Field(None, description="The repro as an argv list (no shell); omitted: offline "
                                   "triage of log_path (classify, parity, explain_index_oob; no reruns)")
    load_argv: list[str] | None = Field(None, description="Optional faster command that only loads the already "
                                        "built package and runs it (e.g. the script with --load-only); used for "
                                        "run-time-only reruns, while compile-time reruns run argv")
    log_path: str | None = Field(None, description="An existing log of the failure; with argv it replaces the "
                                 "baseline run")
    exit_status: int | None = Field(None, description="The logged run's exit status (139 or -11: SIGSEGV)")
    package_path: str | None = Field(None, description="The .pt2 (else found in the command's output); or the "
                                     "folder it was extracted to, or the build's TORCHINDUCTOR_CACHE_DIR (sources "
                                     "for explain_index_oob only)")
    evidence_logs: dict[str, str] = Field(default_factory=dict, description="Outputs you already have of the "
                                          "steps, by step: backtrace (a gdb/cuda-gdb session), memcheck "
                                          "(compute-sanitizer), dump_kernel_inputs (printer output), sanity, "
                                          "deterministic...; used instead of rerunning")
    cwd: str | None = Field(None, description="Working directory inside the allowed roots")
    budget_s: float = Field(DEFAULT_BUDGET_S, gt=0, le=MAX_BUDGET_S, description="Total time for every step; "
                            "steps that no longer fit are skipped with the reason")
    timeout_s: float = Field(DEFAULT_RUN_TIMEOUT_S, gt=0, le=MAX_BUDGET_S, description="Limit per run")
    probe_runtime: bool = Field(True, description="Compare the package with this machine's torch (check_parity); "
                                "false when the log came from another machine")
    capture_calls: bool = Field(True, description="Run a `python script.py` baseline under the capture runner "
                                "(each package load and call with its tensors: the call a crash died in, the "
                                "inputs check_parity compares); false runs it exactly as given")


class Step(BaseModel):
    """One link of the evidence chain: which tool ran, on what, what it found, and what it cost."""

    index: int
    tool: str = Field(description="classify_error, check_parity, rerun_with_flags, dump_kernel_inputs, "
                      "explain_index_oob")
    preset: str | None = None
    why: str = Field("", description="Why the guide asks for this step")
    status: StepStatus
    ran: list[str] = Field(default_factory=list, description="The command, or the files read")
    flags: dict[str, str] = Field(default_factory=dict, description="Environment flags the run got")
    run_id: str | None = Field(None, description="The rerun's id (get_run, aoti-run://<id>/log)")
    log_path: str | None = None
    cost_s: float = 0.0
    pattern: str | None = Field(None, description="The pattern its output classified as, if it produced output")
    found: list[str] = Field(default_factory=list, description="What it showed, one fact per line")
    evidence: list[str] = Field(default_factory=list, description="The lines that show it, quoted")
    named_root_cause: bool = False
    skipped_because: str | None = None


class RootCause(BaseModel):
    """What the evidence says caused the failure, with the concrete values."""

    named: bool = Field(description="True when a step's evidence names the culprit and nothing gathered argues "
                        "against it; false: the best hypothesis (never true at pattern level)")
    level: Level = Field("pattern", description="culprit: names what to change and its value (input index and dim, "
                         "kernel, op, constant, symbol, source line); pattern: only the failure class is known")
    kind: str = Field(description="dtype, static_dim, dim_below_min, dim_above_max, device_type, "
                      "index_value_out_of_range, empty_dimension, nan_produced, illegal_access, toolchain, "
                      "device, unknown ...")
    summary: str = Field(description="One or two sentences with the values")
    pattern: str
    input_index: int | None = None
    input_name: str | None = None
    dim: int | None = None
    expected: str | None = None
    got: str | None = None
    kernel: str | None = None
    op: str | None = Field(None, description="The operator, for a custom-op failure")
    constant: str | None = Field(None, description="The constant name (FQN) at fault")
    source: str | None = Field(None, description="file:line of the culprit (a compiler error's first line)")
    evidence: list[str] = Field(default_factory=list, description="What supports it")
    against: list[str] = Field(default_factory=list, description="Gathered evidence that argues against it; a cause "
                               "with any is not named")
    fixes: list[str] = Field(default_factory=list, description="Fixes whose condition holds for this evidence")
    step: int | None = Field(None, description="The step that named it")

    @model_validator(mode="before")
    @classmethod
    def _saved_before_levels(cls, data: Any) -> Any:
        # a report saved before causes had a level (the GPU suite's results): its named causes named a culprit
        if isinstance(data, dict) and "level" not in data and data.get("named") is True and "against" not in data:
            return {**data, "level": "culprit"}
        return data

    @model_validator(mode="after")
    def _named_only_at_culprit_level(self) -> RootCause:
        # a restated pattern, or a cause the evidence contradicts, is never "named"
        if self.named and (self.level != "culprit" or self.against):
            self.named = False
        return self


class ExampleCheck(BaseModel):
    """For --example: the manifest's expected diagnosis and whether triage reached it."""

    name: str
    device: str
    expected: dict[str, object] = Field(default_factory=dict)
    got: dict[str, object] = Field(default_factory=dict)
    match: bool
    differences: list[str] = Field(default_factory=list)


class TriageReport(BaseModel):
    """The evidence chain and the crash explanation of one triage."""

    run_id: str
    status: TriageStatus
    mode: Literal["command", "offline"]
    command: list[str] = Field(default_factory=list)
    package: str | None = None
    initial_pattern: str | None = Field(None, description="The baseline's classification")
    pattern: str | None = Field(None, description="The diagnosis after every step (a rerun may make it specific)")
    title: str | None = None
    seen: str = Field("", description="For a log classified unknown, what the first classification saw (its summary)")
    outsider: str | None = Field(None, description=(
        "Whose failure the log is when it is no compiled model's (classify_error's outsider: engine, triton, build, "
        "install)"))
    similar_reports: list[SimilarReport] = Field(default_factory=list, description=(
        "The public reports the first log reads most like (classify_error's similar_reports): threads to read"))
    steps: list[Step] = Field(default_factory=list)
    root_cause: RootCause | None = None
    stopped_because: Stop | None = None
    stopped_detail: str = ""
    tool_calls: int = Field(0, description="Steps that ran (not skipped)")
    elapsed_s: float = 0.0
    budget_s: float = DEFAULT_BUDGET_S
    markdown: str = Field("", description="The crash explanation for a person: what failed, root cause, "
                          "evidence, fix")
    next_step: str = ""
    example: ExampleCheck | None = None
    warnings: list[str] = Field(default_factory=list)

    @property
    def unnamed(self) -> bool:
        """No pattern was diagnosed (none yet, or `unknown`)."""
        return self.pattern in (None, "unknown")
