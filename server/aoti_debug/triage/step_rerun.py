"""The rerun_with_flags step: a guide's preset planned against the budget and the phase, run, and its output,
forensics and faulthandler read into the diagnosis."""

from __future__ import annotations

import re
import time
from pathlib import Path

from aoti_debug.classify.engine import Classification, classify_file
from aoti_debug.common.roots import confine
from aoti_debug.runs import rerun
from aoti_debug.runs import store as runs
from aoti_debug.runs.forensics import (
    BT_MARK,
    Faulthandler,
    attribute_backtrace,
    find_debugger,
    parse_faulthandler,
    parse_gdb,
)
from aoti_debug.runs.memcheck import find_sanitizer, parse_memcheck
from aoti_debug.runs.rerun import RerunRequest, RunResult
from aoti_debug.triage import step_culprit as triage_culprit
from aoti_debug.triage.ahead import request_key
from aoti_debug.triage.causes import from_backtrace
from aoti_debug.triage.context import MIN_RUN_S, TAIL, Ctx, reroute, skip
from aoti_debug.triage.markdown import step_label
from aoti_debug.triage.model import Step
from aoti_debug.triage.rules import in_every_run, needs_compile, preset_flags
from aoti_debug.triage.rules import runtime_flags as runtime_only

# Cost of a run under a debugger or compute-sanitizer, relative to a plain run.
SLOWDOWN = {"backtrace": 1.5, "memcheck": 2.0}
# Added to every rerun of a command that only loads: it skips the CPU ISA probe of aoti_load_package (about 40 s a
# load on torch 2.11), whose result only feeds a warning there; never on a compile (guides/debug-flags.md).
LOAD_PRESET = "load_only"
# check_parity mismatch kinds a crash while loading confirms.
LOAD_DEVICE_KINDS = ("load_device", "no_cuda_build", "no_gpu", "device_type")


def _evidence_lines(c: Classification | None, n: int = 3) -> list[str]:
    return [e.text for e in c.evidence[:n]] if c else []


def _gdb_text(text: str) -> str:
    """A plain `bt` session (no aoti-debug markers) read as one: frames start at the first '#0 ' line."""
    if BT_MARK in text:
        return text
    return re.sub(r"^(#0 )", f"{BT_MARK}\n#0 ", text, count=1, flags=re.M)


def _from_log(ctx: Ctx, step: Step, key: str, path: Path) -> Step:
    """A step answered by a log the caller already has (evidence_logs) instead of a rerun."""
    step.ran, step.log_path = [f"given log {path}"], str(path)
    text = runs.tail(path, TAIL, confine(ctx.roots))
    c = classify_file(path, within=confine(ctx.roots)) if text.strip() else None
    if key == "backtrace":
        fault = parse_faulthandler(text) or ctx.fault
        bt = attribute_backtrace(parse_gdb(_gdb_text(text), "gdb"), fault)
        step.found.append(f"native backtrace: {bt.signal or 'no signal'}, top library {bt.top_library or '?'} "
                          f"({bt.top_kind}); points to {bt.points_to}")
        step.evidence += [f"#{f.index} {f.function}" for f in bt.frames[:3]]
        _backtrace_cause(ctx, step, bt, fault)
    elif key == "memcheck":
        m = parse_memcheck(text)
        step.found.append(m.verdict)
        triage_culprit.memcheck_cause(ctx, step, m)
    if c is not None:
        step.found.append(f"its output classifies as {c.pattern} ({c.confidence:.2f})")
    ctx.adopt(c, step)
    step.evidence += [e for e in _evidence_lines(c) if e not in step.evidence]
    return step


def _backtrace_cause(ctx: Ctx, step: Step, bt, fault: Faulthandler | None) -> None:
    if bt.kernel:
        top = next((f for f in bt.frames if bt.kernel in (f.function or "")), None)
        ctx.kernel = bt.kernel
        ctx.establish("kernel_frame", f"native frame #{top.index if top else '?'} is the generated kernel {bt.kernel}: "
                                      "the model was running kernels, the load had finished")
        step.found.append(f"crashed inside the generated kernel {bt.kernel}: next, its inputs")
    cause = from_backtrace(bt, fault, step.index, ctx.compiler, ctx.report.pattern)
    if bt.kernel:
        file, _, no = (top.source or "" if top else "").rpartition(":")
        triage_culprit.kernel_culprit(ctx, step, cause, bt.kernel, file or None, int(no) if no.isdigit() else None)
        if step.named_root_cause:
            return
    if cause.kind == "toolchain" and ctx.root and not ctx.root.named and ctx.root.kind in (
            "static_libstdcxx", "glibcxx", "compiler_skew"):
        cause.evidence += ctx.root.evidence[:1]  # the package check that suggested it
    ctx.contradict(cause)
    r = ctx.root
    if bt.points_to == "device_mismatch" and not cause.against and r and not r.named and not r.against and (
            r.kind in LOAD_DEVICE_KINDS and r.level == "culprit"):
        # a load crash and check_parity's device values agree: the parity mismatch is the culprit
        r.evidence += [e for e in cause.evidence[:2] if e not in r.evidence]
        r.named, r.pattern, r.step = True, "device_mismatch_load", step.index
        cause = r
    if cause.named:
        reroute(ctx, step, cause.pattern)
    ctx.consider(cause)
    step.named_root_cause = cause.named


def _plan_run(ctx: Ctx, step: Step, preset: str) -> tuple[list[str], dict[str, str], list[str], bool] | str:
    """(argv, flags, presets, fresh cache) for this preset, or why it cannot run."""
    compile_needed = needs_compile("rerun_with_flags", preset, ctx.report.pattern)
    if compile_needed and ctx.argv_compiles is False:
        return ("the command loads a prebuilt package, so compile-time flags cannot act: give a command that "
                "rebuilds it (argv), or rebuild it yourself with these flags")
    if preset == "backtrace" and not find_debugger():
        return "no gdb or cuda-gdb installed"
    if preset == "memcheck" and not find_sanitizer():
        return "compute-sanitizer is not installed (it comes with the CUDA toolkit)"
    # a command known to build nothing serves run-time flags as well as a load-only one
    load = ctx.req.load_argv or (ctx.req.argv if ctx.argv_compiles is False else None)
    extra = ctx.runner_presets()
    if compile_needed or not load:
        return ctx.req.argv or [], {}, [preset, *extra], True
    if set(preset_flags(preset)) != set(runtime_only(preset)):
        step.found.append(f"run-time flags only ({', '.join(runtime_only(preset))}), on a command that builds "
                          "nothing: the compile-time ones do not matter for this pattern")
        return load, runtime_only(preset), [LOAD_PRESET, *extra], False
    return load, {}, [preset, LOAD_PRESET, *extra], False


def planned_rerun(ctx: Ctx, step: Step, preset: str) -> tuple[list[str], RerunRequest, float] | str:
    """The rerun this preset makes now: (argv as planned, the request, its estimated cost), or why it cannot run."""
    planned = _plan_run(ctx, step, preset) if ctx.req.argv else (
        "offline: no command to rerun (pass argv, or this step's output in evidence_logs)")
    if isinstance(planned, str):
        return planned
    argv, flags, presets, fresh = planned
    base = (ctx.load_s or MIN_RUN_S) if argv is ctx.req.load_argv else ctx.run_s  # a load-only run: not the build's
    return argv, RerunRequest(argv=argv, cwd=ctx.cwd, presets=presets, flags=flags, fresh_cache=fresh, forensics=False,
                              timeout_s=max(1.0, min(ctx.req.timeout_s, ctx.left()))), base * SLOWDOWN.get(preset, 1)


def rerun_preset(ctx: Ctx, step: Step) -> Step:
    preset = step.preset or ""
    given = ctx.req.evidence_logs.get(preset)
    if given:
        return _from_log(ctx, step, preset, Path(given))
    if in_every_run(preset):
        step.ran = ["the baseline (every run has " + ", ".join(f"{k}={v}" for k, v in preset_flags(preset).items())
                    + ")"]
        if ctx.fault:
            top = ctx.fault.frames[0] if ctx.fault.frames else None
            step.found.append(f"Fatal Python error: {ctx.fault.fatal}" + (
                f" in {top.function} ({top.file}:{top.line})" if top else ""))
            step.evidence += [f'File "{f.file}", line {f.line} in {f.function}' for f in ctx.fault.frames[:3]]
        else:
            step.found.append("no faulthandler report: the process did not die of a signal")
        return step
    planned = planned_rerun(ctx, step, preset)
    if isinstance(planned, str):
        return skip(step, planned)
    argv, req, est = planned
    if ctx.left() < max(MIN_RUN_S, est):
        ctx.budget_hit = True
        return skip(step, f"budget: about {est:.0f} s needed, {ctx.left():.0f} s left")
    build = argv is not ctx.req.load_argv and req.fresh_cache
    r = run(ctx, req, step, build)
    if not build and r.duration_s:
        ctx.load_s = r.duration_s
    f = r.forensics
    if f and f.backtrace:
        step.found.append(f.backtrace.verdict)
        step.evidence += [f"#{x.index} {x.function} from {x.library}" for x in f.backtrace.frames[:3]]
        _backtrace_cause(ctx, step, f.backtrace, f.faulthandler or ctx.fault)
    if f and f.memcheck:
        step.found.append(f.memcheck.verdict)
        triage_culprit.memcheck_cause(ctx, step, f.memcheck)
    ctx.adopt(r.classification, step)
    return step


def run(ctx: Ctx, req: RerunRequest, step: Step, build: bool = True) -> RunResult:
    """One rerun through the rerun tool; its run id, flags, outcome and classification go into the step."""
    label = f"step {step.index}: {step_label(step)}"

    def note(elapsed: float, nbytes: int, what: str) -> None:
        if ctx.note:
            ctx.note(time.monotonic() - ctx.t0, nbytes, f"{label} ({what}, {elapsed:.0f} s)")

    r = ctx.ahead.take((step.tool, step.preset), request_key(req), step.found) if ctx.ahead else None
    r = r or rerun.execute(rerun.plan(req, ctx.roots, shared_cache=ctx.shared_cache), cancel=ctx.cancel, note=note)
    step.ran, step.run_id, step.log_path = r.argv, r.run_id, r.log_path
    step.flags = {u.name: u.value for u in r.flags if u.name != "TORCHINDUCTOR_CACHE_DIR"}
    outcome = r.signal or f"exit {r.exit_code}"
    c = r.classification
    step.found.append(f"{r.status} ({outcome}, {r.duration_s:.0f} s)" + (f": {c.pattern}" if c else "")
                      + (f"; not applied: {', '.join(r.not_applied)}" if r.not_applied else ""))
    step.evidence += _evidence_lines(c)
    if r.status in ("timeout", "spawn_failed", "error"):
        step.status = "failed"
    if build and req.fresh_cache and r.compile and r.compile.compiled is not None:
        ctx.argv_compiles = r.compile.compiled
    return r
