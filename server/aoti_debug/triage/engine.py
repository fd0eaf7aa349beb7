"""triage: run the baseline (or read a log), classify it, then follow the matched guide's next_steps until the
evidence names a root cause, the steps run out or the budget does; every step is recorded with its cost."""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from aoti_debug.classify.engine import Classification, classify_file, classify_text, observed
from aoti_debug.classify.guides import NextStep, load_guides
from aoti_debug.common.errors import AotiDebugError, BadInput
from aoti_debug.common.roots import check_path, confine
from aoti_debug.runs import command, flags, probe, proc, rerun
from aoti_debug.runs import store as runs
from aoti_debug.runs.forensics import parse_faulthandler
from aoti_debug.runs.model import URI, RunProgress
from aoti_debug.runs.rerun import RerunRequest
from aoti_debug.triage.ahead import Ahead, prefetch, request_key
from aoti_debug.triage.context import MIN_RUN_S, TAIL, Ctx, skip
from aoti_debug.triage.markdown import markdown, next_thing, step_label
from aoti_debug.triage.model import Step, TriageReport, TriageRequest
from aoti_debug.triage.record import RunRecord
from aoti_debug.triage.registry import runner
from aoti_debug.triage.rules import in_every_run
from aoti_debug.triage.step_culprit import enrich_cause
from aoti_debug.triage.step_diverge import nodes_file, output_mismatch
from aoti_debug.triage.step_dump import PRINTER_KEYS, planned_dump, run_dump
from aoti_debug.triage.step_rerun import planned_rerun, run

log = logging.getLogger("aoti_debug.runs")

# Steps whose run may start beside an earlier run that builds nothing (triage_ahead).
EARLY = {"rerun_with_flags", "dump_kernel_inputs"}
# Patterns whose reruns never run beside another: two runs at once share the device's memory, and an OOM's
# evidence is the headroom.
SOLO = {"out_of_memory"}
# Next steps that are not evidence: triage itself, polling, classifying (done for every output anyway).
NOT_STEPS = {"triage", "get_run", "classify_error"}
# A package path in a command's output: `package: /abs/x.pt2`, "saved to x.pt2", quoted or bare.
PACKAGE_RX = re.compile(r"""(?:^|[\s'"=(:,])((?:~|\.{0,2}/)?[^\s'"(),:]*\.pt2)(?=$|[\s'"),:.;])""", re.M)
# faulthandler frames of pt2_archive/_package.py that run the model (a crash there is not a load crash).
RUNNING_FRAMES = {"__call__"}
STATUS = {"done": "ok", "running": "running", "cancelled": "cancelled", "error": "error"}
# The triage's one inductor cache (in its run directory): the baseline and every rerun whose flags are all
# cache_safe (guides/debug-flags.md) build there, so generated files, Triton kernels and the ISA probe are reused.
SHARED_CACHE = "inductor_cache"


def package_in_roots(raw: str, cwd: Path | None, roots: list[Path]) -> Path | None:
    """A package path (absolute or relative to cwd) if it is a file inside the roots (the tools read nothing else)."""
    p = Path(raw).expanduser()
    p = p if p.is_absolute() else (cwd or Path.cwd()) / p
    if not p.is_file():
        return None
    try:
        return check_path(p, roots, what="package")
    except BadInput:
        return None


def find_package(text: str, cwd: Path | None, roots: list[Path]) -> Path | None:
    """The last .pt2 the output names that exists inside the roots."""
    return next((q for q in (package_in_roots(raw, cwd, roots) for raw in reversed(PACKAGE_RX.findall(text))) if q),
                None)


@dataclass
class TriagePlan:
    """A validated request with its run directory; ctx while it runs."""

    req: TriageRequest
    run_id: str
    run_dir: Path
    roots: list[Path]
    cwd: Path | None
    ctx: Ctx | None = None
    started: float = field(default_factory=time.monotonic)

    def snapshot(self, entry: runs.Active) -> RunRecord:
        """get_run's answer while the triage runs: the steps so far."""
        elapsed, nbytes, step = entry.progress[0]
        report = self.ctx.report.model_copy(deep=True) if self.ctx else None
        return RunRecord(run_id=self.run_id, status="running", command=self.req.argv or [], argv=self.req.argv or [],
                         cwd=str(self.cwd or ""), log_uri=URI.format(run_id=self.run_id, name="result"),
                         progress=RunProgress(elapsed_s=round(time.monotonic() - self.started, 1),
                                              output_bytes=nbytes, step=step or "starting"),
                         next_step=f"Poll get_run('{self.run_id}') again in a few seconds.", triage=report)


def _file(path: str, roots: list[Path], what: str, cwd: Path | None, folder_ok: bool = False) -> Path:
    p = check_path(path, roots, what=what, base=cwd)
    if not (p.is_file() or (folder_ok and p.is_dir())):
        raise BadInput(f"{what} {path!r} is not a file" + (" or a folder" if folder_ok else ""))
    return p


def plan(req: TriageRequest, roots: list[Path]) -> TriagePlan:
    """Validate every path and command before anything runs; create the run directory."""
    if not req.argv and not req.log_path:
        raise BadInput("pass the repro command (argv), an existing log (log_path), or both")
    if req.load_argv and not req.argv:
        raise BadInput("load_argv is the fast variant of argv: pass argv too")
    cwd = command.check_cwd(req.cwd, roots) if req.argv else None
    for argv in (req.argv, req.load_argv):
        if argv:
            command.check_command(argv, roots, cwd or roots[0])
    known = set(flags.flag_table().presets) | set(PRINTER_KEYS)
    for key, path in req.evidence_logs.items():
        if key not in known:
            raise BadInput(f"evidence_logs key {key!r}: use a preset name or dump_kernel_inputs ({sorted(known)})")
        _file(path, roots, f"evidence_logs[{key}]", cwd)
    resolved = req.model_copy(update={
        "log_path": str(_file(req.log_path, roots, "log_path", cwd)) if req.log_path else None,
        "package_path": str(_file(req.package_path, roots, "package_path", cwd, folder_ok=True))
        if req.package_path else None,
        "evidence_logs": {k: str(_file(v, roots, k, cwd)) for k, v in req.evidence_logs.items()}})
    run_id = runs.new_run_id()
    entry = runs.reserve(run_id)  # the run slot first: a refused triage creates and prunes nothing
    try:
        runs.create(run_id)
        runs.save(run_id, resolved.model_dump_json(indent=2), "request.json")
    except BaseException:
        runs.release(run_id)
        raise
    log.info("triage %s: argv=%s log=%s package=%s", run_id, req.argv, req.log_path, req.package_path)
    entry.payload = TriagePlan(resolved, run_id, runs.run_path(run_id), roots, cwd)
    return entry.payload


def execute_held(p: TriagePlan, *, cancel: threading.Event | None = None,
                 note: proc.Note | None = None) -> TriageReport:
    """execute() a waited triage, giving its run slot back at the end."""
    try:
        return execute(p, cancel=cancel, note=note)
    finally:
        runs.release(p.run_id)


def _classified(ctx: Ctx, step: Step, c: Classification | None, source: str) -> None:
    """The first classification: the initial diagnosis and its next steps."""
    step.ran = [source]
    if c is None:
        step.found.append("nothing to classify (no output)")
        c = classify_text("(no output)\n")
    step.found.append(f"{c.pattern} ({c.title}), confidence {c.confidence:.2f}" + (
        "; fields: " + ", ".join(f"{k}={v}" for k, v in list(c.fields.items())[:6]) if c.fields else ""))
    ctx.report.initial_pattern = c.pattern
    ctx.report.outsider, ctx.report.similar_reports = c.outsider, c.similar_reports
    if c.pattern == "unknown":
        ctx.report.seen = c.summary
    ctx.adopt(c, step)
    if ctx.report.pattern is None:  # 'unknown' is never adopted over a pattern, but it is a first diagnosis
        ctx.classification, ctx.report.pattern, ctx.report.title = c, c.pattern, c.title
    step.evidence = [e.text for e in c.evidence[:3]]


def _fault_facts(ctx: Ctx) -> None:
    """faulthandler's innermost frame says whether the model was running (__call__) when it died."""
    top = ctx.fault.frames[0] if ctx.fault and ctx.fault.frames else None
    if top and top.function in RUNNING_FRAMES:
        ctx.establish("crashed_running", f'faulthandler: the crash was in {top.function} ({top.file}:{top.line}), '
                                         "running the model, not loading it")


def _start(ctx: Ctx, p: TriagePlan) -> None:
    """Step 1 (and 2): the baseline run and its classification, or the given log's classification."""
    req, report = ctx.req, ctx.report
    if req.log_path:
        step = Step(index=1, tool="classify_error", why="The given log of the failure.", status="done")
        ctx.progress("step 1: classify_error")
        t = time.monotonic()
        ctx.log_path = Path(req.log_path)
        text = runs.tail(ctx.log_path, TAIL, confine(p.roots))
        ctx.fault = parse_faulthandler(text)
        _fault_facts(ctx)
        ctx.package = ctx.package or find_package(text, p.cwd, p.roots)
        step.log_path = str(ctx.log_path)
        _classified(ctx, step, classify_file(ctx.log_path, req.exit_status, within=confine(p.roots)),
                    str(ctx.log_path))
        step.cost_s = round(time.monotonic() - t, 2)
        report.steps.append(step)
        return
    step = Step(index=1, tool="rerun_with_flags", why="Baseline: the command as given, with faulthandler, the "
                "triage's own inductor cache (empty at first) and its package loads and calls captured, output "
                "captured unbuffered.", status="done")
    t = time.monotonic()
    r = run(ctx, RerunRequest(argv=req.argv or [], cwd=req.cwd, fresh_cache=True, forensics=False,
                              presets=["calls", *ctx.runner_presets()] if req.capture_calls else [],
                              timeout_s=max(1.0, min(req.timeout_s, ctx.left()))), step)
    step.cost_s = round(time.monotonic() - t, 1)
    step.pattern = None
    ctx.run_s = max(r.duration_s, 1.0)
    ctx.log_path = Path(r.log_path) if r.log_path else None
    ctx.fault = r.forensics.faulthandler if r.forensics else None
    _fault_facts(ctx)
    ctx.cache_dir = Path(r.compile.cache_dir) if r.compile and r.compile.cache_dir else None
    text = runs.tail(ctx.log_path, TAIL) if ctx.log_path else ""
    ctx.package = ctx.package or find_package(text, p.cwd, p.roots)
    ctx.calls, ctx.calls_run = r.calls, r.run_id
    loaded = [c.package for c in (r.calls.records if r.calls else []) if c.kind == "load" and c.package]
    # the package the script loaded, when its output does not name it
    ctx.package = ctx.package or next((q for q in (package_in_roots(x, p.cwd, p.roots) for x in loaded) if q), None)
    if r.calls and r.calls.captured:
        step.found.append(f"{r.calls.loads} package load(s), {r.calls.calls} call(s) captured")
        step.found += [s for s in (r.calls.died_summary,) if s] + r.calls.nonfinite_outputs[:3]
    if r.status == "ok":
        step.found.append("the baseline run passed (exit 0): following the steps for a silent failure")
    report.steps.append(step)
    step2 = Step(index=2, tool="classify_error", why="Route the baseline's output to its pattern guide.",
                 status="done", log_path=r.log_path)
    _classified(ctx, step2, r.classification, f"the baseline's output ({r.log_path})")
    if r.calls and r.calls.nonfinite_outputs and report.pattern in (None, "unknown", "wrong_output"):
        # nothing (or only a user's mismatch) was printed, but the package returned NaN/Inf: that is the failure
        seen = [f"the capture runner saw {n}" for n in r.calls.nonfinite_outputs[:3]]
        ctx.adopt(observed("nan_inf", seen, "run"), step2)
        step2.evidence[:0] = seen
    elif r.calls and r.calls.eager_mismatches and report.unnamed:
        # the repro compared nothing (or said nothing), but the eager hook shows finite wrong values
        seen = [f"the capture runner's eager comparison: {n}" for n in r.calls.eager_mismatches[:3]]
        ctx.adopt(observed("wrong_output", seen, "run"), step2)
        step2.evidence[:0] = seen
    if r.calls:
        step.found += r.calls.eager_mismatches[:3]
    report.steps.append(step2)
    if report.pattern == "wrong_output" and r.calls and r.calls.calls == 1 and ctx.argv_compiles and nodes_file(ctx):
        ctx.establish("printer_compares_eager", "the baseline's one call was captured with the eager model's "
                      "per-node statistics and its command rebuilds the package, so the printer pass compares the "
                      "kernels' outputs with the eager nodes they map to (a NaN or Inf eager does not have is a "
                      "divergence there)")


def _follow(ctx: Ctx) -> None:
    """Run the current pattern's next steps in order; a new, more specific pattern puts its steps first."""
    report = ctx.report
    queue = list(ctx.classification.next_steps) if ctx.classification else []
    seen, done = {report.pattern}, set()
    while queue and not (ctx.root and ctx.root.named):
        if ctx.cancel is not None and ctx.cancel.is_set():
            report.stopped_because = "cancelled"
            return
        ns = queue.pop(0)
        if ns.tool in NOT_STEPS or (ns.tool, ns.preset) in done or (ns.when and ns.when not in ctx.facts):
            continue
        done.add((ns.tool, ns.preset))
        before = report.pattern
        step = Step(index=len(report.steps) + 1, tool=ns.tool, preset=ns.preset, why=ns.why, status="done")
        if _covered(ctx, ns):
            report.steps.append(skip(step, "covered by earlier steps: " + "; ".join(ctx.facts[f] for f in ns.unless)))
            continue
        _look_ahead(ctx, ns, step.index, queue, done)
        ctx.progress(f"step {step.index}: {step_label(step)}")
        t = time.monotonic()
        report.steps.append(step)
        run_step = runner(ns.tool)
        if run_step is None:  # a guide names a tool no step runs: said, not a crash
            skip(step, f"triage runs no step for {ns.tool}: call it yourself")
        else:
            run_step(ctx, step)
        if ctx.ahead:
            ctx.ahead.check(step.index, step.found)
        step.cost_s = round(time.monotonic() - t, 1)
        if report.pattern != before and report.pattern not in seen:
            seen.add(report.pattern)
            rule = load_guides()[report.pattern or "unknown"].rule
            queue = list(rule.next_steps if rule else []) + queue


def _covered(ctx: Ctx, ns: NextStep) -> bool:
    """A step whose question earlier steps already answered (its guide's `unless` facts all established)."""
    return bool(ns.unless) and all(f in ctx.facts for f in ns.unless)


def _rerun_plan(ctx: Ctx, ns: NextStep) -> tuple[list[str], RerunRequest, float] | None:
    """The run a rerun_with_flags step would make now, or None where it runs nothing (a given log, the baseline's
    flags, no command, no plan)."""
    preset = ns.preset or ""
    if preset in ctx.req.evidence_logs or in_every_run(preset):
        return None
    planned = planned_rerun(ctx, Step(index=0, tool=ns.tool, status="done"), preset)  # a scratch step's notes
    return None if isinstance(planned, str) else planned


def _early(ctx: Ctx, ns: NextStep) -> tuple[str, object] | None:
    """(request key, work) of the run a later step would make now, where it fits the budget."""
    if ns.tool == "dump_kernel_inputs":
        dumped = None if any(k in ctx.req.evidence_logs for k in PRINTER_KEYS) else planned_dump(ctx)
        if dumped is None or isinstance(dumped, str) or ctx.left() < ctx.run_s * dumped[2]:
            return None
        req, find_kernel, _ = dumped
        return request_key(req, find_kernel), lambda cancel, note: run_dump(ctx, req, find_kernel, cancel, note)
    planned = _rerun_plan(ctx, ns) if ns.tool == "rerun_with_flags" else None
    if planned is None or ctx.left() < max(MIN_RUN_S, planned[2]):
        return None
    req = planned[1]
    return request_key(req), lambda cancel, note: rerun.execute(
        rerun.plan(req, ctx.roots, shared_cache=ctx.shared_cache), cancel=cancel, note=note)


def _look_ahead(ctx: Ctx, ns: NextStep, index: int, queue: list[NextStep], done: set) -> None:
    """While this step runs the command without a rebuild (a load-only run leaves a core idle), the step right after
    it starts beside it when that one runs the command too. Only the very next step: one in between (parity,
    explain_index_oob) reads the package, which a rebuild started ahead may rewrite."""
    if ctx.ahead is None or not ctx.ahead.free() or ns.tool != "rerun_with_flags" or ctx.report.pattern in SOLO:
        return
    current = _rerun_plan(ctx, ns)
    if current is None or (current[0] is not ctx.req.load_argv and current[1].fresh_cache):
        return
    nxt = next((n for n in queue if n.tool not in NOT_STEPS and (n.tool, n.preset) not in done
                and not (n.when and n.when not in ctx.facts) and not _covered(ctx, n)), None)
    early = _early(ctx, nxt) if nxt is not None and nxt.tool in EARLY else None
    if early:
        ctx.ahead.start((nxt.tool, nxt.preset), early[0], index, early[1], watch=ctx.package)


def execute(p: TriagePlan, *, cancel: threading.Event | None = None, note: proc.Note | None = None) -> TriageReport:
    """The whole chain; always returns a report (an internal error ends it with stopped_because='error')."""
    req = p.req
    report = TriageReport(run_id=p.run_id, status="running", mode="command" if req.argv else "offline",
                          command=req.argv or [], budget_s=req.budget_s)
    ctx = p.ctx = Ctx(req=req, roots=p.roots, report=report, cwd=req.cwd, cancel=cancel, note=note,
                      enrich=enrich_cause, deadline=time.monotonic() + req.budget_s,
                      shared_cache=p.run_dir / SHARED_CACHE,
                      package=Path(req.package_path) if req.package_path else None)
    if req.argv and req.probe_runtime:  # parity's runtime probe needs no package: take it while the baseline runs
        ctx.runtime_probe = prefetch(lambda: probe.run_probes(probe.check_python(None), None))
    ctx.ahead = Ahead(cancel, note, ctx.t0)
    try:
        _start(ctx, p)
        _follow(ctx)
    except AotiDebugError as exc:
        report.stopped_because, report.stopped_detail = "error", str(exc)
    except Exception as exc:  # a bug in a step must still leave a report with the steps so far
        log.exception("triage %s failed", p.run_id)
        report.stopped_because, report.stopped_detail = "error", f"internal error: {type(exc).__name__}: {exc}"
    finally:
        ctx.ahead.abandon()  # a run started ahead that no step took: cancelled, not left running
    return finish(ctx, p)


def _domain_values(ctx: Ctx) -> list[str]:
    """For a NaN the model made: the captured call's input elements outside a div/log/sqrt domain (zeros, negatives)."""
    calls = ctx.calls.records if ctx.calls else []
    bad = next((c for c in calls if c.kind == "call" and any(t.nonfinite() for t in c.outputs)), None)
    bad = bad or next((c for c in calls if c.kind == "call"), None)
    out = []
    for i, t in enumerate(bad.inputs if bad else []):
        if ctx.root and ctx.root.input_index not in (None, i):
            continue
        parts = [f"{n} {what}" for n, what in ((t.zeros, "zero(s)"), (t.negatives, "negative value(s)")) if n]
        if parts:
            where = f", min {t.min} at {t.min_at}" if t.min_at is not None else ""
            out.append(f"captured call {bad.index}: input {i} ({t.dtype}{t.shape}) holds {' and '.join(parts)}{where}")
    return out


def finish(ctx: Ctx, p: TriagePlan) -> TriageReport:
    report = ctx.report
    if ctx.root and ctx.root.kind == "nan_produced":
        ctx.root.evidence += [e for e in _domain_values(ctx) if e not in ctx.root.evidence]
    if ctx.root is None and report.pattern == "wrong_output":
        ctx.root = output_mismatch(ctx)
    report.package = str(ctx.package) if ctx.package else None
    report.root_cause = ctx.root
    if report.stopped_because is None:
        report.stopped_because = ("root_cause_named" if ctx.root and ctx.root.named else
                                  "budget" if ctx.budget_hit else "steps_exhausted")
    report.status = {"cancelled": "cancelled", "error": "error"}.get(report.stopped_because, "done")
    report.tool_calls = sum(s.status != "skipped" for s in report.steps)
    report.elapsed_s = round(time.monotonic() - ctx.t0, 1)
    report.markdown = markdown(report)
    report.next_step = next_thing(report)
    save(p, report)
    return report


def save(p: TriagePlan, report: TriageReport) -> None:
    first = report.steps[0] if report.steps else None
    rr = RunRecord(run_id=p.run_id, status=STATUS[report.status], command=p.req.argv or [], argv=p.req.argv or [],
                   cwd=str(p.cwd or ""), duration_s=report.elapsed_s, log_path=first.log_path if first else None,
                   log_uri=URI.format(run_id=p.run_id, name="result"), next_step=report.next_step, triage=report)
    runs.save(p.run_id, rr.model_dump_json(indent=2))


def triage(req: TriageRequest, roots: list[Path], *, cancel: threading.Event | None = None,
           note: proc.Note | None = None) -> TriageReport:
    """Validate and run to the end (root cause, steps exhausted, budget, or cancellation)."""
    return execute_held(plan(req, roots), cancel=cancel, note=note)


def start(req: TriageRequest, roots: list[Path]) -> TriageReport:
    """Validate, start in the background, return at once with the run id; get_run polls it."""
    p = plan(req, roots)
    runs.start(p.run_id, lambda cancel, note: execute(p, cancel=cancel, note=note), p)
    return TriageReport(run_id=p.run_id, status="running", mode="command" if req.argv else "offline",
                        command=req.argv or [], budget_s=req.budget_s,
                        next_step=f"Poll get_run('{p.run_id}') every few seconds; its 'triage' field fills in.")
