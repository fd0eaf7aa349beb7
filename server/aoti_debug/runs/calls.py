"""The failing call, captured: read what probes/calls_runner.py recorded of a run's package loads and calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from aoti_debug.runs.eager_diff import EagerCompare, summary
from aoti_debug.runs.probe import ActualInput

RUNNER = Path(__file__).resolve().parent.parent / "probes" / "calls_runner.py"
# Runs a script with inductor's ISA probe answers reused from its cache (AOTI_DEBUG_REUSE_ISA_PROBE; the calls runner
# does it too).
SCRIPT_RUNNER = RUNNER.with_name("script_runner.py")
REUSE_PROBE_FLAG = "AOTI_DEBUG_REUSE_ISA_PROBE"
CALLS_DIR = "calls"
# calls.jsonl is bounded by the runner (50 detailed calls); this guards against a hostile or broken file.
MAX_BYTES = 16 * 2**20
MAX_EVENTS = 2000


class TensorInfo(BaseModel):
    """One tensor as the package received or returned it."""

    dtype: str | None = None
    shape: list[int] | None = None
    stride: list[int] | None = None
    device: str | None = None
    storage_offset: int | None = None
    numel: int | None = None
    min: int | float | None = None
    max: int | float | None = None
    min_at: list[int] | None = Field(None, description="Index of the smallest finite value")
    max_at: list[int] | None = Field(None, description="Index of the largest finite value")
    mean: float | None = None
    zeros: int | None = Field(None, description="Elements equal to 0 (a divisor that is zero)")
    negatives: int | None = Field(None, description="Elements below 0 (a log or sqrt argument out of domain)")
    nan: int | None = Field(None, description="NaN elements")
    posinf: int | None = None
    neginf: int | None = None
    true_count: int | None = None
    sample: list | None = Field(None, description="The first few values, flattened")
    stats_error: str | None = Field(None, description="Why the statistics could not be taken (a pending CUDA error)")
    stats_skipped: str | None = None
    type: str | None = Field(None, description="For a non-tensor argument: its Python type")

    def nonfinite(self) -> int:
        return (self.nan or 0) + (self.posinf or 0) + (self.neginf or 0)


class CallRecord(BaseModel):
    """One load, call or load_constants of a package, and how it ended."""

    kind: Literal["load", "call", "load_constants"]
    index: int = Field(description="1-based, per kind, in the order they happened")
    package: str | None = None
    status: Literal["finished", "raised", "died"] = Field(
        description="died: it started and the process ended before it returned")
    inputs: list[TensorInfo] = Field(default_factory=list)
    outputs: list[TensorInfo] = Field(default_factory=list)
    names: list[str] | None = Field(None, description="load_constants: the constant names given")
    inputs_file: str | None = Field(None, description="The inputs saved with torch.save (only when asked)")
    error: str | None = None
    duration_s: float | None = None
    eager: EagerCompare | None = Field(None, description="The call rerun eagerly (the script's aoti_debug_eager hook)")


class CallsReport(BaseModel):
    """What the repro did with its AOTI packages, from the capture runner."""

    captured: bool = Field(description="The runner ran and recorded (false: not a python command, or no file)")
    torch: str | None = None
    loads: int = 0
    calls: int = Field(0, description="Calls of a loaded package, all of them (only the first 50 in detail)")
    records: list[CallRecord] = Field(default_factory=list, description="Loads, calls and load_constants in order")
    died_in: CallRecord | None = Field(None, description="The load or call the process died inside, if any")
    died_summary: str | None = Field(None, description="Where the process died, in words")
    nonfinite_outputs: list[str] = Field(default_factory=list,
                                         description="Calls that returned NaN/Inf (call 2 output 0: 5 NaN)")
    eager_mismatches: list[str] = Field(default_factory=list, description="Outputs that differ from the eager "
                                        "model's on the same inputs (only with the aoti_debug_eager hook)")
    notes: list[str] = Field(default_factory=list)
    path: str | None = None

    def inputs_of(self, call: CallRecord | None = None) -> list[ActualInput] | None:
        """The tensors of a call (default: the one it died in, else the first) as check_parity's inputs."""
        calls = [r for r in self.records if r.kind == "call"]
        chosen = call or (self.died_in if self.died_in and self.died_in.kind == "call" else None) or (
            calls[0] if calls else None)
        if chosen is None:
            return None
        out = []
        for i, t in enumerate(chosen.inputs):
            if t.dtype is None or t.shape is None:
                continue
            out.append(ActualInput(dtype=t.dtype, shape=t.shape, stride=t.stride, device=t.device or "cpu",
                                   path=f"[{i}]", storage_offset=t.storage_offset))
        return out


def wrap_argv(argv: list[str], script_index: int, out_dir: Path) -> list[str]:
    """argv of `python [switches] script args` with the runner in front of the script."""
    return [*argv[:script_index], str(RUNNER), str(out_dir), *argv[script_index:]]


def wrap_script(argv: list[str], script_index: int) -> list[str]:
    """argv of `python [switches] script args` with the script runner in front of the script."""
    return [*argv[:script_index], str(SCRIPT_RUNNER), *argv[script_index:]]


def _events(folder: Path) -> tuple[list[dict], list[str]]:
    notes: list[str] = []
    path = folder / "calls.jsonl"
    events: list[dict] = []
    with open(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        notes.append(f"calls.jsonl is larger than {MAX_BYTES} bytes: read up to there")
    for line in data[:MAX_BYTES].splitlines()[:MAX_EVENTS]:
        try:
            ev = json.loads(line)
        except ValueError:  # the process died in the middle of a write
            notes.append("a partial record at the end of calls.jsonl was skipped")
            continue
        if isinstance(ev, dict):
            events.append(ev)
    current = folder / "current.json"
    if current.is_file():
        try:
            ev = json.loads(current.read_text(encoding="utf-8")[:4096])
            if isinstance(ev, dict):
                events.append(ev)
        except ValueError:
            notes.append("current.json was unreadable")
    return events, notes


def read(folder: Path) -> CallsReport:
    """The report of a run's calls folder; captured=false when there is nothing to read."""
    if not (folder / "calls.jsonl").is_file():
        return CallsReport(captured=False, notes=["no calls were recorded (the runner did not run)"])
    events, notes = _events(folder)
    report = CallsReport(captured=True, notes=notes, path=str(folder / "calls.jsonl"))
    open_: dict[tuple[str, int], CallRecord] = {}
    for ev in events:
        kind = ev.get("kind")
        if kind == "runner":
            report.torch = ev.get("torch") or report.torch
            if ev.get("note"):
                report.notes.append(str(ev["note"])[:500])
            continue
        if kind not in ("load", "call", "load_constants") or not isinstance(ev.get("index"), int):
            continue
        key = (kind, ev["index"])
        if ev.get("event") == "start":
            tensors = [TensorInfo.model_validate(x) for x in ev.get("inputs") or [] if isinstance(x, dict)]
            rec = CallRecord(kind=kind, index=ev["index"], package=ev.get("package"), status="died",
                             inputs=tensors, names=ev.get("names"), inputs_file=ev.get("inputs_file"))
            # a call past the detailed ones replaces the previous compact record
            report.records = [r for r in report.records if (r.kind, r.index) != key]
            report.records.append(rec)
            open_[key] = rec
        elif key in open_:
            rec = open_.pop(key)
            rec.status = "finished" if ev.get("event") == "end" else "raised"
            rec.error = ev.get("error")
            rec.duration_s = ev.get("duration_s")
            rec.outputs = [TensorInfo.model_validate(x) for x in ev.get("outputs") or [] if isinstance(x, dict)]
            if isinstance(ev.get("eager"), dict):
                rec.eager = EagerCompare.model_validate(ev["eager"])
    report.loads = max((r.index for r in report.records if r.kind == "load"), default=0)
    report.calls = max((r.index for r in report.records if r.kind == "call"), default=0)
    for rec in report.records:
        for j, t in enumerate(rec.outputs):
            if t.nonfinite():
                report.nonfinite_outputs.append(
                    f"call {rec.index} output {j}: {t.nan or 0} NaN, {(t.posinf or 0) + (t.neginf or 0)} Inf "
                    f"of {t.numel} ({t.dtype} {t.shape})")
        if rec.eager is not None:
            report.eager_mismatches += summary(rec.index, rec.eager)
    died = [r for r in report.records if r.status == "died"]
    if died:
        report.died_in = died[-1]
        report.died_summary = _died_words(died[-1], report)
    return report


def _died_words(rec: CallRecord, report: CallsReport) -> str:
    pkg = f" of {rec.package}" if rec.package else ""
    if rec.kind == "load":
        return f"the process died while loading the package{pkg} (load {rec.index}), before any call ran"
    if rec.kind == "load_constants":
        return f"the process died inside load_constants{pkg}"
    first = "the first call" if rec.index == 1 else f"call {rec.index}"
    earlier = f"; the {rec.index - 1} call(s) before it returned" if rec.index > 1 else ""
    shapes = ", ".join(f"input {i}: {t.dtype}{t.shape} {t.device}" for i, t in enumerate(rec.inputs)
                       if t.dtype) or "inputs not recorded"
    return f"the process died inside {first}{pkg} ({shapes}){earlier}"
