"""triage's steps: each runs one tool the guide's next_steps name and returns a Step, updating the diagnosis."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from aoti_debug.classify.engine import Classification, classify_file
from aoti_debug.classify.guides import load_guides
from aoti_debug.common.errors import AotiDebugError
from aoti_debug.common.logread import file_chunks
from aoti_debug.common.roots import confine
from aoti_debug.kernels.index_oob import explain_index_oob
from aoti_debug.kernels.index_oob_model import OobExplanation
from aoti_debug.package.contract import InputContract
from aoti_debug.runs import proc, rerun
from aoti_debug.runs import store as runs
from aoti_debug.runs.calls import CallsReport
from aoti_debug.runs.forensics import (
    BT_MARK,
    Faulthandler,
    attribute_backtrace,
    find_debugger,
    parse_faulthandler,
    parse_gdb,
)
from aoti_debug.runs.memcheck import find_sanitizer, parse_memcheck
from aoti_debug.runs.probe import ProbeOutcome
from aoti_debug.runs.rerun import RerunRequest, RunResult
from aoti_debug.triage import culprits
from aoti_debug.triage import step_culprit as triage_culprit
from aoti_debug.triage.ahead import Ahead, request_key
from aoti_debug.triage.causes import from_backtrace, from_classification, from_oob
from aoti_debug.triage.markdown import step_label
from aoti_debug.triage.model import RootCause, Step, TriageReport, TriageRequest
from aoti_debug.triage.rules import in_every_run, more_specific, names_cause, needs_compile, preset_flags, rules
from aoti_debug.triage.rules import runtime_flags as runtime_only

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
MAX_SOURCE_CHARS = 8 * 2**20
# check_parity mismatch kinds a crash while loading confirms.
LOAD_DEVICE_KINDS = ("load_device", "no_cuda_build", "no_gpu", "device_type")


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
    facts: dict[str, str] = field(default_factory=dict)  # what steps established, by name (triage.yaml contradicted_by)
    kernel: str | None = None  # a generated kernel a native backtrace crashed in
    calls: CallsReport | None = None  # the baseline's package loads and calls (the capture runner)
    calls_run: str | None = None  # the run that captured them
    ahead: Ahead | None = None  # a later step's run started beside the current one (triage_ahead)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def progress(self, message: str) -> None:
        if self.note:
            self.note(time.monotonic() - self.t0, 0, message)

    def contradict(self, cause: RootCause) -> RootCause:
        """List the established facts that argue against this cause; a contradicted cause is not named."""
        for f in rules().contradicted_by.get(cause.kind, []):
            if f in self.facts and self.facts[f] not in cause.against:
                cause.against.append(self.facts[f])
        if cause.against:
            cause.named = False
        return cause

    def establish(self, fact: str, sentence: str) -> None:
        """A fact a step showed; it may overturn the current cause."""
        self.facts[fact] = sentence
        if self.root is not None:
            self.contradict(self.root)

    def consider(self, cause: RootCause | None) -> None:
        """Keep a named cause over a hypothesis, a culprit over a pattern, an uncontradicted cause over a
        contradicted one; the first named one ends the chain."""
        if cause is None:
            return
        self.contradict(cause)
        r = self.root
        if r is None or (cause.named and not r.named) or (not r.named and (
                (cause.level == "culprit" and r.level == "pattern") or (r.against and not cause.against))):
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
            log = runs.tail(Path(step.log_path), TAIL) if c.pattern == "cpp_compile_error" and step.log_path else None
            cause = from_classification(c, step.index, self.contract, self.read_source, log)
            where = culprits.op_definition(cause.op, Path(self.cwd)) if cause.op and self.cwd else None
            if where:  # the module to import (or library to load) in the process that runs the package
                cause.summary += f" It is registered by {where} (under {self.cwd})."
                cause.evidence.append(f"{cause.op} is registered in {where}")
            if cause.op and cause.kind == "custom_op_load":
                triage_culprit.op_registration(self, cause)
            self.consider(cause)
            step.named_root_cause = cause.named
        return changed

    def read_source(self, path: str) -> str | None:
        """A source file a compiler error names, only inside the run's inductor cache or the allowed roots."""
        p = Path(path)
        places = [d for d in (self.cache_dir, *self.roots) if d is not None]
        try:
            rp = p.resolve()
            if not p.is_absolute() or not any(rp.is_relative_to(d.resolve()) for d in places) or not rp.is_file():
                return None
            return rp.read_text(encoding="utf-8", errors="replace")[:MAX_SOURCE_CHARS]
        except OSError:
            return None


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


def prefetched(ctx: Ctx, step: Step) -> ProbeOutcome | None:
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


def reroute(ctx: Ctx, step: Step, pattern: str) -> None:
    """A named cause of another failure class moves the diagnosis to that class's pattern."""
    if pattern != ctx.report.pattern:
        ctx.report.pattern = pattern
        ctx.report.title = load_guides()[pattern].title
        step.found.append(f"the diagnosis is now {pattern}")


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
    if compile_needed or not load:
        return ctx.req.argv or [], {}, [preset], True
    if set(preset_flags(preset)) != set(runtime_only(preset)):
        step.found.append(f"run-time flags only ({', '.join(runtime_only(preset))}), on a command that builds "
                          "nothing: the compile-time ones do not matter for this pattern")
        return load, runtime_only(preset), [LOAD_PRESET], False
    return load, {}, [preset, LOAD_PRESET], False


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


# --- explain_index_oob ----------------------------------------------------------------------------

def oob(ctx: Ctx, step: Step) -> Step:
    log = ctx.assert_log or ctx.log_path
    where = ctx.package or (ctx.cache_dir if ctx.cache_dir and ctx.cache_dir.is_dir() else None)
    if where is None or log is None:
        return skip(step, "needs the package (or the build's inductor cache) and the failing log")
    step.ran = [str(where), str(log)]
    try:
        e = explain_index_oob(where, file_chunks(log, within=confine(ctx.roots)), within=confine(ctx.roots))
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
