"""The explain_index_oob step: the index assert's bound, guard and index source from the package's sources."""

from __future__ import annotations

from aoti_debug.common.errors import AotiDebugError
from aoti_debug.common.logread import file_chunks
from aoti_debug.common.roots import confine
from aoti_debug.kernels.index_oob import explain_index_oob
from aoti_debug.triage.causes import from_oob
from aoti_debug.triage.context import Ctx, skip
from aoti_debug.triage.model import Step


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
