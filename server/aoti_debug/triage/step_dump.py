"""triage's dump_kernel_inputs step: printer passes on the rebuilt repro, or a printer log the caller already has."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from aoti_debug.kernels.dump import dump_kernel_inputs
from aoti_debug.kernels.model import DumpRequest, DumpResult
from aoti_debug.kernels.printer_collect import parse_file
from aoti_debug.kernels.suspects import Suspect, crash_suspects, name_suspects
from aoti_debug.runs import proc
from aoti_debug.triage.ahead import request_key
from aoti_debug.triage.causes import from_suspect
from aoti_debug.triage.context import Ctx, skip
from aoti_debug.triage.model import Step
from aoti_debug.triage.step_diverge import diverge

# Evidence keys whose log is printer output (level 2 is the one with values).
PRINTER_KEYS = ("dump_kernel_inputs", "kernel_names")
# Patterns whose failure never stops a kernel launch (the model returns; the values are wrong): level 3 finds a
# failing kernel only as an unmatched before_launch, so there it would rebuild for nothing (examples.yaml, nan:
# "Level 3 has no unmatched launch"); level 2 then prints every kernel anyway.
NO_FAILING_LAUNCH = {"nan_inf", "wrong_output"}


def _suspects(ctx: Ctx, step: Step, suspects: list[Suspect]) -> None:
    step.found += [f"suspect: {s.detail}" for s in suspects[:3]]
    if suspects:
        cause = from_suspect(suspects[0], ctx.report.pattern or "unknown", step.index, ctx.oob)
        ctx.consider(cause)
        step.named_root_cause = cause.named
        step.evidence.append(suspects[0].detail)


def _from_log(ctx: Ctx, step: Step, path: Path) -> Step:
    step.ran, step.log_path = [f"given printer log {path}"], str(path)
    kernel = (ctx.oob.kernel if ctx.oob else None) or ctx.kernel
    log, col = parse_file(path, [kernel] if kernel else [])
    order = ({s.name: s.index for s in ctx.contract.inputs} if ctx.contract and ctx.contract.inputs
             else {r.arg: i for i, r in enumerate(log.model_inputs)})
    failing = log.failing_kernel or log.raised_kernel or log.unfinished_launch or kernel
    step.found.append(f"printer levels {log.levels or '-'}, {log.launches_total} launches"
                      + (f"; failing kernel {failing}" if failing else ""))
    _suspects(ctx, step, name_suspects(log, col, log.index_asserts, failing, ctx.oob, order)
              or _crash(ctx, log.launches, log.model_inputs))
    return step


def _crash(ctx: Ctx, launches: list, inputs: list) -> list[Suspect]:
    """A crash inside a kernel with no assert (the launch the printer saw start but not finish): its integer inputs
    against every tensor, constants included. Needs the package's constants, which the printer does not print."""
    if ctx.contract is None:
        return []
    tables = [(k.original_fqn or k.name, k.shape) for k in ctx.contract.constants if k.shape]
    return crash_suspects(launches, inputs, {s.name: s.index for s in ctx.contract.inputs}, tables)


def planned_dump(ctx: Ctx) -> tuple[DumpRequest, bool, int] | str:
    """The printer passes this step makes now: (the request, find_kernel, passes), or why it cannot run."""
    if not ctx.req.argv:
        return "offline: no command to rebuild with the printer (or pass its output in evidence_logs)"
    if ctx.argv_compiles is False:
        return ("the command loads a prebuilt package: the printer is generated code, so it needs a command that "
                "rebuilds the package")
    # A kernel already named (the CPU exception, explain_index_oob) saves the level-3 pass.
    known = (ctx.oob.kernel if ctx.oob and ctx.oob.kernel else None) or (
        ctx.classification.fields.get("kernel_name") if ctx.classification else None) or ctx.kernel
    find_kernel = ctx.report.pattern not in NO_FAILING_LAUNCH
    req = DumpRequest(argv=ctx.req.argv, cwd=ctx.cwd, kernels=[known] if known else [],
                      timeout_s=max(1.0, min(ctx.req.timeout_s, ctx.left())))
    return req, find_kernel, 1 if known or not find_kernel else 2


def run_dump(ctx: Ctx, req: DumpRequest, find_kernel: bool, cancel: threading.Event | None,
             note: proc.Note | None) -> DumpResult:
    return dump_kernel_inputs(req, ctx.roots, cancel=cancel, note=note, hold=False,  # the triage's slot
                              shared_cache=ctx.shared_cache, find_kernel=find_kernel,
                              presets=tuple(ctx.runner_presets()))


def dump(ctx: Ctx, step: Step) -> Step:
    given = next((ctx.req.evidence_logs[k] for k in PRINTER_KEYS if k in ctx.req.evidence_logs), None)
    if given:
        return _from_log(ctx, step, Path(given))
    planned = planned_dump(ctx)
    if isinstance(planned, str):
        return skip(step, planned)
    req, find_kernel, passes = planned
    if ctx.left() < ctx.run_s * passes:
        ctx.budget_hit = True
        return skip(step, f"budget: {passes} rebuild(s) of about {ctx.run_s:.0f} s needed, {ctx.left():.0f} s left")
    label = f"step {step.index}: dump_kernel_inputs"

    def note(elapsed: float, nbytes: int, what: str) -> None:
        if ctx.note:
            ctx.note(time.monotonic() - ctx.t0, nbytes, f"{label} ({what}, {elapsed:.0f} s)")

    res = ctx.ahead.take((step.tool, step.preset), request_key(req, find_kernel), step.found) if ctx.ahead else None
    res = res or run_dump(ctx, req, find_kernel, ctx.cancel, note)
    last = res.passes[-1] if res.passes else None
    step.ran = [f"printer level {p.level}: run {p.run_id}" for p in res.passes]
    step.run_id, step.log_path = (last.run_id, last.log_path) if last else (None, None)
    step.flags = last.flags if last else {}
    step.found.append(f"{res.status}: {res.summary}" if res.summary else res.status)
    if res.status in ("timeout", "failed", "spawn_failed"):
        step.status = "failed"
    if res.explanation and ctx.oob is None:
        ctx.oob = res.explanation
    _suspects(ctx, step, res.suspects or _crash(ctx, res.launches, res.model_inputs))
    if ctx.report.pattern == "wrong_output" and last is not None:
        diverge(ctx, step)
    return step
