"""triage's steps: each runs one tool the guide's next_steps name and returns a Step, updating the diagnosis."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aoti_debug import proc, rerun, runs
from aoti_debug.classify import Classification, classify_file
from aoti_debug.contract import InputContract
from aoti_debug.errors import AotiDebugError
from aoti_debug.explain import step_label
from aoti_debug.explain_oob import explain_index_oob
from aoti_debug.forensics import BT_MARK, Faulthandler, explain, find_debugger, parse_faulthandler, parse_gdb
from aoti_debug.guides import load_guides
from aoti_debug.logclean import file_chunks
from aoti_debug.memcheck import find_sanitizer, parse_memcheck
from aoti_debug.oob_model import OobExplanation
from aoti_debug.parity import check_parity
from aoti_debug.probe import ProbeOutcome
from aoti_debug.rerun import RerunRequest, RunResult
from aoti_debug.triage_causes import from_backtrace, from_classification, from_memcheck, from_oob, from_parity
from aoti_debug.triage_model import RootCause, Step, TriageReport, TriageRequest
from aoti_debug.triage_rules import in_every_run, more_specific, names_cause, needs_compile, preset_flags, rules
from aoti_debug.triage_rules import runtime_flags as runtime_only

# When nothing was measured yet: a CPU compile of a small model.
COMPILE_GUESS_S = 60.0
# Cost of a run under a debugger or compute-sanitizer, relative to a plain run.
SLOWDOWN = {"backtrace": 1.5, "memcheck": 2.0}
# A run shorter than this is not worth starting.
MIN_RUN_S = 10.0
PARITY_S = 15.0
# Added to every rerun of a command that only loads: it skips the CPU ISA probe of aoti_load_package (about 40 s a
# load on torch 2.11), whose result only feeds a warning there; never on a compile (guides/debug-flags.md).
LOAD_PRESET = "load_only"
TAIL = 4 * 2**20


@dataclass
class Ctx:
    """What the steps share: the request, the current diagnosis and what earlier steps learned."""

    req: TriageRequest
    roots: list[Path]
    report: TriageReport
    cwd: str | None = None
    deadline: float = 0.0
    cancel: threading.Event | None = None
    note: proc.Note | None = None
    t0: float = field(default_factory=time.monotonic)
    log_path: Path | None = None  # the failing run's output
    assert_log: Path | None = None  # the latest log holding an index assert
    cache_dir: Path | None = None  # the baseline's inductor cache (sources when there is no package)
    shared_cache: Path | None = None  # the triage's one inductor cache, shared by reruns whose flags allow it
    runtime_probe: Future | None = None  # check_parity's runtime probe, started beside the baseline run
    classification: Classification | None = None
    package: Path | None = None
    contract: InputContract | None = None
    compiler: str | None = None
    fault: Faulthandler | None = None
    oob: OobExplanation | None = None
    root: RootCause | None = None
    argv_compiles: bool | None = None
    run_s: float = COMPILE_GUESS_S  # a plain run of argv (with its compile)
    load_s: float | None = None  # a run of load_argv
    budget_hit: bool = False

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def progress(self, message: str) -> None:
        if self.note:
            self.note(time.monotonic() - self.t0, 0, message)

    def consider(self, cause: RootCause | None) -> None:
        """Keep a named cause over a hypothesis; the first named one ends the chain."""
        if cause is not None and (self.root is None or (cause.named and not self.root.named)):
            self.root = cause

    def adopt(self, c: Classification | None, step: Step) -> bool:
        """A more specific pattern from this step's output becomes the diagnosis; True if it changed."""
        if c is None:
            return False
        step.pattern = c.pattern
        changed = more_specific(c, self.report.pattern)
        if changed:
            if self.report.pattern is not None:
                step.found.append(f"the diagnosis is now {c.pattern} ({c.title})")
            self.classification, self.report.pattern, self.report.title = c, c.pattern, c.title
        if c.pattern == "triton_index_out_of_bounds" and step.log_path:
            self.assert_log = Path(step.log_path)
        if names_cause(c) and (changed or c.pattern == self.report.pattern):
            self.consider(from_classification(c, step.index, self.contract))
            step.named_root_cause = True
        return changed


def _evidence_lines(c: Classification | None, n: int = 3) -> list[str]:
    return [e.text for e in c.evidence[:n]] if c else []


def _gdb_text(text: str) -> str:
    """A plain `bt` session (no aoti-debug markers) read as one: frames start at the first '#0 ' line."""
    if BT_MARK in text:
        return text
    return re.sub(r"^(#0 )", f"{BT_MARK}\n#0 ", text, count=1, flags=re.M)


def skip(step: Step, why: str) -> Step:
    step.status, step.skipped_because = "skipped", why
    return step


# --- check_parity ----------------------------------------------------------------------------------

def parity(ctx: Ctx, step: Step) -> Step:
    if ctx.package is None or not ctx.package.is_file():
        return skip(step, "no package known: pass package_path (the command's output named no existing .pt2)"
                    if ctx.package is None else f"{ctx.package} is a folder of sources, not a .pt2")
    if ctx.left() < PARITY_S:
        ctx.budget_hit = True
        return skip(step, f"budget: {ctx.left():.0f} s left")
    step.ran = [str(ctx.package)]
    runtime = _prefetched(ctx, step)
    rep = check_parity(ctx.package, probe_runtime=ctx.req.probe_runtime, runtime=runtime)
    model = rep.package.model()
    if model is not None:
        ctx.contract = model.contract
        ctx.compiler = model.toolchain.compiler if model.toolchain else None
        step.found.append(f"compiled for {model.device_key or '?'}" + (f" by {ctx.compiler}" if ctx.compiler else "")
                          + (f"; {len(model.contract.inputs)} inputs: " + ", ".join(
                              f"{s.index} {s.name} {s.describe()}" for s in model.contract.inputs[:4])
                              if model.contract else ""))
    step.found.append(rep.summary)
    pattern = ctx.report.pattern or "unknown"
    explains = set(rules().parity_explains.get(pattern, []))
    suggests = set(rules().parity_suggests.get(pattern, []))
    for m in rep.mismatches[:4]:
        step.evidence.append(f"{m.severity}: {m.message}")
        if m.severity == "error" and m.kind in explains and not step.named_root_cause:
            ctx.consider(from_parity(m, pattern, step.index))
            step.named_root_cause = True
        elif m.kind in suggests and ctx.root is None:
            ctx.consider(from_parity(m, pattern, step.index).model_copy(update={"named": False}))
            step.found.append(f"likely cause, to be confirmed: {m.title}")
    if not ctx.req.probe_runtime:
        step.found.append("runtime not probed (probe_runtime=false): package facts only")
    return step


def prefetch(fn: Callable[[], Any]) -> Future:
    """Run fn on a daemon thread now; the step that needs its result waits for it (an exception is re-raised)."""
    fut: Future = Future()

    def work() -> None:
        t = time.monotonic()
        try:
            fut.set_result((fn(), time.monotonic() - t))
        except BaseException as exc:  # handed to the step that waits, which reports it
            fut.set_exception(exc)

    threading.Thread(target=work, daemon=True, name="aoti-debug-prefetch").start()
    return fut


def _prefetched(ctx: Ctx, step: Step) -> ProbeOutcome | None:
    """The runtime probe taken beside the baseline (None: probe now); its own cost goes into the step."""
    if ctx.runtime_probe is None or not ctx.req.probe_runtime:
        return None
    try:
        (runtime, _inputs), cost = ctx.runtime_probe.result()
    except Exception as exc:  # the probe failed to run at all: probe again, in the step
        step.found.append(f"the runtime probe beside the baseline failed ({exc}); probed again")
        return None
    step.found.append(f"runtime probed beside the baseline run ({cost:.0f} s)")
    return runtime


# --- rerun_with_flags ------------------------------------------------------------------------------

def _from_log(ctx: Ctx, step: Step, key: str, path: Path) -> Step:
    """A step answered by a log the caller already has (evidence_logs) instead of a rerun."""
    step.ran, step.log_path = [f"given log {path}"], str(path)
    text = runs.tail(path, TAIL)
    c = classify_file(path) if text.strip() else None
    if key == "backtrace":
        fault = parse_faulthandler(text) or ctx.fault
        bt = explain(parse_gdb(_gdb_text(text), "gdb"), fault)
        step.found.append(f"native backtrace: {bt.signal or 'no signal'}, top library {bt.top_library or '?'} "
                          f"({bt.top_kind}); points to {bt.points_to}")
        step.evidence += [f"#{f.index} {f.function}" for f in bt.frames[:3]]
        _backtrace_cause(ctx, step, bt, fault)
    elif key == "memcheck":
        m = parse_memcheck(text)
        step.found.append(m.verdict)
        ctx.consider(from_memcheck(m, ctx.report.pattern or "cuda_illegal_memory_access", step.index))
        step.named_root_cause = bool(m.errors)
    if c is not None:
        step.found.append(f"its output classifies as {c.pattern} ({c.confidence:.2f})")
    ctx.adopt(c, step)
    step.evidence += [e for e in _evidence_lines(c) if e not in step.evidence]
    return step


def _backtrace_cause(ctx: Ctx, step: Step, bt, fault: Faulthandler | None) -> None:
    cause = from_backtrace(bt, fault, step.index, ctx.compiler)
    if cause.kind == "toolchain" and ctx.root and not ctx.root.named and ctx.root.kind in (
            "static_libstdcxx", "glibcxx", "compiler_skew"):
        cause.evidence += ctx.root.evidence[:1]  # the package check that suggested it
    if cause.named and cause.pattern != ctx.report.pattern:
        ctx.report.pattern = cause.pattern
        ctx.report.title = load_guides()[cause.pattern].title
        step.found.append(f"the diagnosis is now {cause.pattern}")
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
    if compile_needed or not load:
        return ctx.req.argv or [], {}, [preset], True
    if set(preset_flags(preset)) != set(runtime_only(preset)):
        step.found.append(f"run-time flags only ({', '.join(runtime_only(preset))}), on a command that builds "
                          "nothing: the compile-time ones do not matter for this pattern")
        return load, runtime_only(preset), [LOAD_PRESET], False
    return load, {}, [preset, LOAD_PRESET], False


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
    if not ctx.req.argv:
        return skip(step, "offline: no command to rerun (pass argv, or this step's output in evidence_logs)")
    planned = _plan_run(ctx, step, preset)
    if isinstance(planned, str):
        return skip(step, planned)
    argv, flags, presets, fresh = planned
    if argv is ctx.req.load_argv:  # no rebuild: the baseline's time (mostly compiling) says nothing about it
        base = ctx.load_s or MIN_RUN_S
    else:
        base = ctx.run_s
    est = base * SLOWDOWN.get(preset, 1.0)
    if ctx.left() < max(MIN_RUN_S, est):
        ctx.budget_hit = True
        return skip(step, f"budget: about {est:.0f} s needed, {ctx.left():.0f} s left")
    req = RerunRequest(argv=argv, cwd=ctx.cwd, presets=presets, flags=flags, fresh_cache=fresh, forensics=False,
                       timeout_s=max(1.0, min(ctx.req.timeout_s, ctx.left())))
    build = argv is not ctx.req.load_argv and fresh
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
        ctx.consider(from_memcheck(f.memcheck, ctx.report.pattern or "cuda_illegal_memory_access", step.index))
        step.named_root_cause = step.named_root_cause or bool(f.memcheck.errors)
    ctx.adopt(r.classification, step)
    return step


def run(ctx: Ctx, req: RerunRequest, step: Step, build: bool = True) -> RunResult:
    """One rerun through the rerun tool; its run id, flags, outcome and classification go into the step."""
    plan = rerun.plan(req, ctx.roots, shared_cache=ctx.shared_cache)
    label = f"step {step.index}: {step_label(step)}"

    def note(elapsed: float, nbytes: int, what: str) -> None:
        if ctx.note:
            ctx.note(time.monotonic() - ctx.t0, nbytes, f"{label} ({what}, {elapsed:.0f} s)")

    r = rerun.execute(plan, cancel=ctx.cancel, note=note)
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


# --- explain_index_oob ----------------------------------------------------------------------------

def oob(ctx: Ctx, step: Step) -> Step:
    log = ctx.assert_log or ctx.log_path
    where = ctx.package or (ctx.cache_dir if ctx.cache_dir and ctx.cache_dir.is_dir() else None)
    if where is None or log is None:
        return skip(step, "needs the package (or the build's inductor cache) and the failing log")
    step.ran = [str(where), str(log)]
    try:
        e = explain_index_oob(where, file_chunks(log))
    except AotiDebugError as exc:
        step.status = "failed"
        step.found.append(str(exc))
        return step
    ctx.oob = e
    step.found.append(f"{e.status}: {e.root_cause_title or e.root_cause}" + (f" in {e.kernel}" if e.kernel else ""))
    b = e.bound
    if b is not None:
        tied = (f"input {b.input_index} ({b.input}) dim {b.dim}" if b.input else
                f"{b.tensor} dim {b.dim}" if b.tensor else "a constant")
        step.found.append(f"bound `{b.text}` = size of {tied}" + (
            f"; guard >= {b.guard.min} ({b.guard.enforced})" if b.guard and b.guard.min is not None else ""))
    step.found += [f"index loaded from input {a.input_index} ({a.name})" for a in e.index_from
                   if a.input_index is not None][:2]
    if e.assert_source:
        step.evidence.append(e.assert_source.text)
    cause = from_oob(e, ctx.report.pattern or "triton_index_out_of_bounds", step.index)
    ctx.consider(cause)
    step.named_root_cause = cause.named
    return step
