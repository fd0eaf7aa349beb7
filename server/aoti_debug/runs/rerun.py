"""rerun_with_flags: run a repro again with allow-listed debug flags, classify it, compare it to a baseline."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aoti_debug.classify.engine import Classification, classify_file, classify_text
from aoti_debug.common.errors import BadInput
from aoti_debug.runs import calls, command, flags, proc
from aoti_debug.runs import store as runs
from aoti_debug.runs.artifacts import check_compile, collect_artifacts
from aoti_debug.runs.compare import compare
from aoti_debug.runs.flags import FlagUse
from aoti_debug.runs.forensics import (
    FATAL_SIGNALS,
    Backtrace,
    attribute_backtrace,
    debugger_argv,
    exec_env,
    find_debugger,
    parse_faulthandler,
    parse_gdb,
)
from aoti_debug.runs.memcheck import Memcheck, find_sanitizer, memcheck_argv, parse_memcheck
from aoti_debug.runs.model import (  # noqa: F401 - the contract is importable from here too
    CRASH_SIGNALS,
    DEFAULT_TIMEOUT_S,
    LOG_CAP,
    MAX_TIMEOUT_S,
    TAIL_CHARS,
    URI,
    Forensics,
    RerunRequest,
    RunProgress,
    RunResult,
    Status,
)

log = logging.getLogger("aoti_debug.runs")


@dataclass
class Plan:
    """A validated request, ready to run."""

    req: RerunRequest
    run_id: str
    run_dir: Path
    cwd: Path
    argv: list[str]
    uses: list[FlagUse]
    roots: list[Path]

    def snapshot(self, entry: runs.Active) -> RunResult:
        """get_run's answer while the run goes on: its progress and output tails so far."""
        return _running(self, entry)


def plan(req: RerunRequest, roots: list[Path], *, hold: bool = False, shared_cache: Path | None = None) -> Plan:
    """Validate everything and create the run directory; BadInput before anything runs.

    hold: take a run slot first (runs.reserve; every top-level run does, waited or not); a refused run creates no
    directory. The steps of a triage or dump_kernel_inputs run inside their caller's slot.
    shared_cache: a triage's one inductor cache, used instead of a fresh one where the flags allow it."""
    cwd = command.check_cwd(req.cwd, roots)
    argv = command.check_command(req.argv, roots, cwd)
    if {"backtrace", "memcheck"} <= set(req.presets):
        raise BadInput("the backtrace and memcheck presets cannot be combined: run them one after the other")
    run_id = runs.new_run_id()
    run_dir = runs.run_path(run_id)
    uses = flags.resolve(req.presets, req.flags, roots=roots, cwd=cwd, run_dir=run_dir, fresh_cache=req.fresh_cache,
                         shared_cache=shared_cache)
    entry = runs.reserve(run_id) if hold else None
    try:
        runs.create(run_id)
        runs.save(run_id, req.model_dump_json(indent=2), "request.json")
    except BaseException:
        if hold:
            runs.release(run_id)
        raise
    log.info("run %s: argv=%s cwd=%s flags=%s", run_id, argv, cwd, {u.name: u.value for u in uses})
    p = Plan(req, run_id, run_dir, cwd, argv, uses, roots)
    if entry is not None:
        entry.payload = p  # get_run answers for a waited run too
    return p


def execute_held(p: Plan, *, cancel: threading.Event | None = None, note: proc.Note | None = None) -> RunResult:
    """execute() a plan made with hold=True, giving its slot back at the end."""
    try:
        return execute(p, cancel=cancel, note=note)
    finally:
        runs.release(p.run_id)


def _spec(p: Plan, argv: list[str], env: dict[str, str | None], log_dir: Path) -> proc.ProcSpec:
    return proc.ProcSpec(argv=argv, cwd=p.cwd, env_overrides=env, timeout_s=p.req.timeout_s, log_dir=log_dir,
                         max_log_bytes=LOG_CAP)


def _run(p: Plan, spec: proc.ProcSpec, step: str, cancel: threading.Event | None, note: proc.Note | None,
         t0: float) -> proc.ProcResult:
    def progress(_elapsed: float, nbytes: int) -> None:
        if note:
            note(time.monotonic() - t0, nbytes, step)

    if note:
        note(time.monotonic() - t0, 0, step)
    return proc.run(spec, cancel=cancel, on_progress=progress)


def _classify(log_path: str | None, exit_status: int | str | None) -> Classification | None:
    try:
        return classify_file(log_path, exit_status) if log_path else None
    except BadInput:  # empty output: only the exit status speaks
        return classify_text("(no output)\n", exit_status) if exit_status not in (0, None) else None


def _inferior(bt: Backtrace) -> tuple[int | None, str | None]:
    """Exit code and signal of the program a debugger ran."""
    if bt.signal and bt.signal.startswith("SIG"):
        return None, bt.signal
    if bt.exit and "exited normally" in bt.exit:
        return 0, None
    if bt.exit and (code := bt.exit.rsplit(" ", 1)[-1]).isdigit():
        return int(code, 8), None  # gdb prints the code in octal: "exited with code 01"
    return None, None


def _status(r: RunResult, spawn_error: str | None = None) -> Status:
    if spawn_error:
        return "spawn_failed"
    if r.cancelled:
        return "cancelled"
    if r.timed_out:
        return "timeout"
    if r.signal in CRASH_SIGNALS or r.exit_code in (134, 135, 136, 139):
        return "crashed"
    if r.exit_code or r.signal or r.exit_code is None:
        return "failed"
    return "flags_not_applied" if r.not_applied else "ok"


def _result(p: Plan, pr: proc.ProcResult, argv: list[str], uses: list[FlagUse]) -> RunResult:
    return RunResult(
        run_id=p.run_id, status="running", command=p.req.argv, argv=argv, cwd=str(p.cwd), flags=uses,
        exit_code=pr.returncode if pr.returncode is None or pr.returncode >= 0 else None, signal=pr.signal,
        timed_out=pr.timed_out, cancelled=pr.cancelled, duration_s=pr.duration_s,
        stdout_tail=pr.stdout_tail[-TAIL_CHARS:], stderr_tail=pr.stderr_tail[-TAIL_CHARS:],
        stdout_bytes=pr.stdout_bytes, stderr_bytes=pr.stderr_bytes, log_truncated=pr.log_truncated,
        log_path=pr.combined_log, log_uri=URI.format(run_id=p.run_id, name="log"),
        warnings=[f"could not start the command: {pr.spawn_error}"] if pr.spawn_error else [],
    )


def _baseline(p: Plan, cancel: threading.Event | None, note: proc.Note | None, t0: float) -> RunResult:
    """The command without the requested flags (defaults kept; requested names removed from the environment)."""
    base_dir = p.run_dir / "baseline"
    uses = flags.resolve([], {}, roots=p.roots, cwd=p.cwd, run_dir=base_dir, fresh_cache=p.req.fresh_cache)
    env: dict[str, str | None] = {u.name: None for u in p.uses}
    env.update(flags.env_overrides(uses))
    pr = _run(p, _spec(p, p.argv, env, base_dir), "baseline", cancel, note, t0)
    r = _result(p, pr, p.argv, uses)
    r.classification = _classify(pr.combined_log, None if pr.timed_out or pr.cancelled else pr.returncode)
    r.status = _status(r, pr.spawn_error)
    return r


def _forensic_run(p: Plan, kind: str, cancel: threading.Event | None, note: proc.Note | None,
                  t0: float) -> Forensics:
    """A second run of the command under gdb/cuda-gdb (kind 'backtrace') or compute-sanitizer ('memcheck')."""
    fdir = p.run_dir / "forensics"
    env = flags.env_overrides(p.uses)
    if kind == "backtrace":
        dbg = find_debugger()
        if not dbg:
            return Forensics(notes=["no gdb or cuda-gdb installed: no native backtrace"])
        pr = _run(p, _spec(p, debugger_argv(dbg), {**env, **exec_env(p.argv)}, fdir), "backtrace", cancel, note, t0)
        text = runs.tail(Path(pr.combined_log or ""), LOG_CAP)
        fault = parse_faulthandler(text)
        return Forensics(faulthandler=fault, backtrace=attribute_backtrace(parse_gdb(text, Path(dbg).name), fault),
                         log_path=pr.combined_log)
    san = find_sanitizer()
    if not san:
        return Forensics(notes=["compute-sanitizer is not installed: no memcheck"])
    env.update(flags.flag_table().presets.get("memcheck", flags.Preset(why="")).flags)
    pr = _run(p, _spec(p, memcheck_argv(san, fdir / "memcheck.log") + p.argv, env, fdir), "memcheck", cancel,
              note, t0)
    fault = parse_faulthandler(runs.tail(Path(pr.combined_log or ""), LOG_CAP))
    return Forensics(faulthandler=fault, memcheck=_memcheck(fdir / "memcheck.log"), log_path=pr.combined_log)


def _with_runner(p: Plan, wrap: Callable[[list[str], int], list[str]], why_not: str) -> tuple[list[str], str | None]:
    """The command with a runner put in front of its script by wrap(argv, script index), or unchanged with why_not
    when it is not `python script.py ...`."""
    index = command.python_script_index(p.argv, p.roots, p.cwd, given=p.req.argv[0])
    return (p.argv, why_not) if index is None else (wrap(p.argv, index), None)


def _calls_report(p: Plan, stopped_by_us: bool) -> calls.CallsReport:
    report = calls.read(p.run_dir / calls.CALLS_DIR)
    if stopped_by_us and report.died_summary:  # we ended it: it did not die there on its own
        report.died_summary = report.died_summary.replace("the process died", "the run was stopped", 1)
    return report


def _memcheck(report: Path) -> Memcheck:
    m = parse_memcheck(runs.tail(report, LOG_CAP))
    m.report_path = str(report) if report.is_file() else None
    return m


def execute(p: Plan, *, cancel: threading.Event | None = None, note: proc.Note | None = None) -> RunResult:
    """Run the plan: optional baseline, the flagged run, then classification, compile check, forensics."""
    t0, start_wall = time.monotonic(), time.time()
    base = _baseline(p, cancel, note, t0) if p.req.baseline else None
    if base and cancel and cancel.is_set():  # cancelled during the baseline: the flagged run never starts
        base.warnings.append("cancelled during the baseline run; the flagged run did not start")
        base.status, base.flags, base.next_step = "cancelled", p.uses, "Rerun when ready."
        runs.save(p.run_id, base.model_dump_json(indent=2))
        return base
    presets, env, argv = set(p.req.presets), flags.env_overrides(p.uses), p.argv
    notes: list[str] = []
    why_not = None
    if "calls" in presets:
        argv, why_not = _with_runner(p, lambda a, i: calls.wrap_argv(a, i, p.run_dir / calls.CALLS_DIR),
                                     "calls preset: the command is not `python script.py ...`, so its calls were "
                                     "not captured")
    elif env.get(calls.REUSE_PROBE_FLAG) == "1":
        argv, why_not = _with_runner(p, calls.wrap_script, f"{calls.REUSE_PROBE_FLAG}: the command is not "
                                     "`python script.py ...`, so it ran with torch's own ISA probe")
    notes += [why_not] if why_not else []
    dbg = find_debugger() if "backtrace" in presets else None
    san = find_sanitizer() if "memcheck" in presets else None
    if dbg:
        argv, env = debugger_argv(dbg), {**env, **exec_env(argv)}
    elif san:
        argv = memcheck_argv(san, p.run_dir / "memcheck.log") + argv
    for name, found in (("backtrace", dbg), ("memcheck", san)):
        if name in presets and not found:
            notes.append(f"{name} preset: {'gdb or cuda-gdb' if name == 'backtrace' else 'compute-sanitizer'} is "
                         "not installed, so the command ran without it")
    pr = _run(p, _spec(p, argv, env, p.run_dir), "run", cancel, note, t0)
    r = _result(p, pr, argv, p.uses)
    r.warnings += notes
    text = runs.tail(Path(pr.combined_log or ""), 4 * 2**20)
    fault = parse_faulthandler(text)
    r.forensics = Forensics(faulthandler=fault, notes=notes) if fault or notes else None
    if dbg:
        bt = attribute_backtrace(parse_gdb(text, Path(dbg).name), fault)
        r.exit_code, r.signal = _inferior(bt)
        r.forensics = Forensics(faulthandler=fault, backtrace=bt, notes=notes)
    if san:
        r.forensics = Forensics(faulthandler=fault, memcheck=_memcheck(p.run_dir / "memcheck.log"), notes=notes)
        if fault and not r.signal:  # compute-sanitizer turns the program's signal into an exit code
            r.signal = FATAL_SIGNALS.get(fault.fatal)
    # a signal we sent (time limit, cancellation) says nothing about the program
    ours = r.timed_out or r.cancelled
    r.classification = _classify(pr.combined_log, None if ours else r.signal or r.exit_code)
    r.compile = check_compile(p.uses, p.req.fresh_cache, p.cwd, p.req.argv, start_wall)
    for u in r.flags:
        u.applied = True if u.phase == "runtime" or u.source == "default" else r.compile.compiled
    r.not_applied = [f"{u.name}={u.value}" for u in r.flags if u.applied is False]
    r.artifacts = collect_artifacts(p.run_dir, p.uses, p.cwd, start_wall, text, cancel)
    pattern = r.classification.pattern if r.classification else None
    crashed = not ours and (r.signal in CRASH_SIGNALS or r.exit_code in (134, 135, 136, 139))
    stopped = ours or bool(cancel and cancel.is_set())
    if p.req.forensics and not stopped and not dbg and crashed and pattern == "segfault_no_message":
        extra = _forensic_run(p, "backtrace", cancel, note, t0)
        r.forensics = extra.model_copy(update={"faulthandler": extra.faulthandler or fault})
    elif p.req.forensics and not stopped and not san and pattern == "cuda_illegal_memory_access" and find_sanitizer():
        r.forensics = _forensic_run(p, "memcheck", cancel, note, t0)
    if "calls" in presets:
        r.calls = _calls_report(p, ours)
    r.status = _status(r, pr.spawn_error)
    if base:
        r.baseline = compare(base, r)
    r.warnings += _warnings(r)
    r.next_step = _next_step(r)
    r.duration_s = round(time.monotonic() - t0, 3)
    runs.save(p.run_id, r.model_dump_json(indent=2))
    return r


def _warnings(r: RunResult) -> list[str]:
    out = []
    if r.not_applied:
        out.append(f"NOT APPLIED: compile-time flags {', '.join(r.not_applied)} had no effect: the command "
                   "compiled nothing (it loaded a prebuilt package), so the package still runs the code it was "
                   "built with. Rebuild the package with these flags (run the command that exports and compiles, "
                   "with a fresh TORCHINDUCTOR_CACHE_DIR), then load it.")
    elif any(u.applied is None for u in r.flags):
        out.append("could not tell whether the command compiled (no fresh cache): compile-time flags may not "
                   "have acted")
    if r.log_truncated:
        out.append(f"the output passed the {LOG_CAP // 2**20} MiB log cap; the log on disk stops there")
    return out


def _next_step(r: RunResult) -> str:
    decided = r.classification is not None and r.classification.pattern not in ("unknown", "segfault_no_message")
    if r.not_applied and (r.status == "flags_not_applied" or not decided):
        return "Rebuild the package with the compile-time flags (the command must compile), then rerun."
    if r.timed_out:
        return "The run hit its time limit: raise timeout_s and pass wait=false, then poll get_run."
    if r.forensics and r.forensics.backtrace and r.forensics.backtrace.verdict:
        return r.forensics.backtrace.verdict
    if r.forensics and r.forensics.memcheck and (r.forensics.memcheck.errors or r.forensics.memcheck.tool_errors):
        return r.forensics.memcheck.verdict
    if r.classification and r.classification.next_steps:
        s = r.classification.next_steps[0]
        return f"{s.tool}" + (f" (preset {s.preset})" if s.preset else "") + f": {s.why}"
    return "The run passed." if r.status == "ok" else "Read the log's last lines and classify_error them."


def rerun(req: RerunRequest, roots: list[Path], *, cancel: threading.Event | None = None,
          note: proc.Note | None = None) -> RunResult:
    """Validate and run to the end (or the time limit, or cancellation)."""
    return execute_held(plan(req, roots, hold=True), cancel=cancel, note=note)


def _running(p: Plan, entry: runs.Active) -> RunResult:
    elapsed, nbytes, step = entry.progress[0]
    log_dir = p.run_dir / ("baseline" if step == "baseline" else "forensics" if step in ("backtrace", "memcheck")
                           else "")
    return RunResult(
        run_id=p.run_id, status="running", command=p.req.argv, argv=p.argv, cwd=str(p.cwd), flags=p.uses,
        stdout_tail=runs.tail(log_dir / "stdout.log", TAIL_CHARS),
        stderr_tail=runs.tail(log_dir / "stderr.log", TAIL_CHARS),
        log_path=str(p.run_dir / "combined.log"), log_uri=URI.format(run_id=p.run_id, name="log"),
        progress=RunProgress(elapsed_s=round(time.monotonic() - entry.started, 1), output_bytes=nbytes, step=step),
        next_step=f"Poll get_run('{p.run_id}') again in a few seconds.",
    )


def start(req: RerunRequest, roots: list[Path]) -> RunResult:
    """Validate, start in the background, and return at once with the run id to poll."""
    p = plan(req, roots, hold=True)

    def work(cancel: threading.Event, note: proc.Note) -> None:
        try:
            execute(p, cancel=cancel, note=note)
        except Exception as exc:
            log.exception("run %s failed", p.run_id)
            err = RunResult(run_id=p.run_id, status="error", command=p.req.argv, argv=p.argv, cwd=str(p.cwd),
                            flags=p.uses, log_uri=URI.format(run_id=p.run_id, name="log"),
                            warnings=[f"internal error: {type(exc).__name__}: {exc}"])
            runs.save(p.run_id, err.model_dump_json(indent=2))

    entry = runs.start(p.run_id, work, p)
    return _running(p, entry)
