"""dump_kernel_inputs: rebuild with the printer at level 3 to find the failing kernel, then at level 2 (or 1) on it.

Each pass is a rerun (a fresh TORCHINDUCTOR_CACHE_DIR or triage's shared one, its own run directory, the
flag allow-list); the repro must compile (not --load-only): the printer is generated code. stdout is a pty,
so printf lines survive a crash.
"""

from __future__ import annotations

import secrets
import threading
import time
from pathlib import Path

from aoti_debug.kernels.kernel_code import kernels
from aoti_debug.kernels.kernel_graph import producers
from aoti_debug.kernels.model import BLOCKING, FILTER, PRINTER, DumpRequest, DumpResult, PassSummary
from aoti_debug.kernels.printer_collect import Collector, parse_file
from aoti_debug.kernels.printer_log import PrinterLog
from aoti_debug.kernels.report import report, sources_of
from aoti_debug.kernels.suspects import saved_tensors
from aoti_debug.runs import proc, rerun
from aoti_debug.runs import store as runs
from aoti_debug.runs.rerun import RerunRequest, RunResult


def _pass(req: DumpRequest, roots: list[Path], level: int, extra: dict[str, str], cancel: threading.Event | None,
          note: proc.Note | None, t0: float, focus: list[str],
          shared_cache: Path | None = None,
          presets: tuple[str, ...] = ()) -> tuple[RunResult, PrinterLog, Collector | None]:
    flags = {PRINTER: str(level), BLOCKING: "1", **extra}
    plan = rerun.plan(RerunRequest(argv=req.argv, cwd=req.cwd, flags=flags, timeout_s=req.timeout_s,
                                   presets=list(presets), fresh_cache=True, forensics=False), roots,
                      shared_cache=shared_cache)

    def tagged(elapsed: float, nbytes: int, step: str) -> None:
        if note:
            note(time.monotonic() - t0, nbytes, f"pass level {level}: {step}")

    r = rerun.execute(plan, cancel=cancel, note=tagged)
    log, col = parse_file(r.log_path, focus) if r.log_path and Path(r.log_path).is_file() else (PrinterLog(), None)
    return r, log, col


def _summary(r: RunResult, level: int, log: PrinterLog) -> PassSummary:
    return PassSummary(level=level, run_id=r.run_id, status=r.status, flags={u.name: u.value for u in r.flags},
                       exit_code=r.exit_code, signal=r.signal, duration_s=r.duration_s,
                       compiled=r.compile.compiled if r.compile else None, log_path=r.log_path, lines=log.lines,
                       bytes=log.bytes, records=log.records, unparsed_lines=log.unparsed_lines,
                       pattern=r.classification.pattern if r.classification else None)


def _stop(res: DumpResult, r: RunResult, log: PrinterLog, level: int) -> bool:
    """Set a terminal status when the pass says nothing more can be learned."""
    if r.status in ("timeout", "cancelled", "spawn_failed"):
        res.status, res.next_step = r.status, r.next_step or "Rerun with a larger timeout_s."
    elif r.not_applied or (r.compile and r.compile.compiled is False):
        res.status = "flags_not_applied"
        res.next_step = ("The repro built nothing, so the printer was never compiled in: run the command that "
                         "exports and compiles the package (not --load-only).")
    elif not log.levels and level in (2, 3) and not log.multikernel_silenced:
        res.status = "printer_silent"
        res.next_step = "The printer printed nothing: check that the repro calls the model it compiles."
    elif log.multikernel_silenced:
        res.status = "printer_silent"
        res.next_step = "MultiKernel switched the printer off: rebuild with triton.multi_kernel=0."
    else:
        return False
    return True


def dump_kernel_inputs(req: DumpRequest, roots: list[Path], *, cancel: threading.Event | None = None,
                       note: proc.Note | None = None, hold: bool = True, shared_cache: Path | None = None,
                       find_kernel: bool = True, presets: tuple[str, ...] = ()) -> DumpResult:
    """Both passes, parsed; suspects named; an index assert explained from the rebuilt sources (in one run slot,
    taken before any pass creates its directory; hold=False: inside a caller's slot, as a triage step).

    shared_cache: a triage's inductor cache for both passes (the printer is in its cache keys).
    presets: added to both passes (triage's reuse_isa_probe).
    find_kernel=False: no level-3 pass when no kernel is given (a failure that never stops inside a launch,
    like a NaN, leaves no unmatched before_launch for it to find): level 2 prints every kernel at once."""
    if not hold:
        return _dump(req, roots, cancel, note, shared_cache, find_kernel, presets)
    with runs.slot(f"dump-{secrets.token_hex(3)}"):
        return _dump(req, roots, cancel, note, shared_cache, find_kernel, presets)


def _dump(req: DumpRequest, roots: list[Path], cancel: threading.Event | None, note: proc.Note | None,
          shared_cache: Path | None = None, find_kernel: bool = True, presets: tuple[str, ...] = ()) -> DumpResult:
    t0 = time.monotonic()
    res = DumpResult(status="ok")
    r1 = log1 = None
    focus = list(req.kernels)
    if not focus and find_kernel:
        r1, log1, _ = _pass(req, roots, 3, {}, cancel, note, t0, [], shared_cache, presets)
        res.passes.append(_summary(r1, 3, log1))
        if _stop(res, r1, log1, 3):
            return _finish(res, log1, None)
        res.last_kernels = log1.last_kernels
        res.failing_kernel = log1.failing_kernel or log1.raised_kernel
        res.failing_kernel_from = "level3" if log1.failing_kernel else ("cpu_exception" if log1.raised_kernel else None)
        if res.failing_kernel:
            focus = [res.failing_kernel]
            src = sources_of(r1)
            if src and src.wrappers:
                focus += producers(src.wrappers[0], {k.name: k for k in kernels(src)}, res.failing_kernel)
            elif len(log1.last_kernels) > 1:
                focus.append(log1.last_kernels[-2])  # no sources: the launch right before it
        if req.level == 3:
            return _finish(res, log1, None, r1)
    level = req.level
    extra = {FILTER: ",".join(focus)} if focus and level == 2 else {}
    res.printed_kernels = focus if level == 2 else []
    r2, log2, col2 = _pass(req, roots, level, extra, cancel, note, t0, focus, shared_cache, presets)
    res.passes.append(_summary(r2, level, log2))
    if _stop(res, r2, log2, level):
        return _finish(res, log2, col2)
    if not res.failing_kernel and log2.unfinished_launch and log2.index_asserts:
        res.failing_kernel, res.failing_kernel_from = log2.unfinished_launch, "level2"
    if level == 1:
        kernels_known = [*focus, *(log1.last_kernels if log1 else [])]
        res.saved_tensors = saved_tensors(log2.saved_tensors, Path(r2.cwd), time.time() - r2.duration_s - 5,
                                          kernels_known)
    if res.failing_kernel is None and r1 is not None and log2.nan_producer is None:
        res.status = "no_failing_kernel"
    return _finish(res, log2, col2, r2, log1)


def _finish(res: DumpResult, log: PrinterLog, col: Collector | None, run: RunResult | None = None,
            log1: PrinterLog | None = None) -> DumpResult:
    return report(res, log, col, run or None, log1)
