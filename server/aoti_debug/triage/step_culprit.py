"""triage's culprit steps after a crash site or a failing op is known: a crashed kernel's index input (its launch in
the package and the captured call), a custom op's registration in the target Python and the libraries that carry it."""

from __future__ import annotations

import re
from pathlib import Path

from aoti_debug.runs import op_probe
from aoti_debug.runs.memcheck import Memcheck
from aoti_debug.triage import culprit_kernel, culprits
from aoti_debug.triage.causes import from_memcheck
from aoti_debug.triage.context import Ctx
from aoti_debug.triage.model import RootCause, Step

# The op probe imports torch in the target Python (2-20 s): not started with less budget than this left.
OP_PROBE_S = 30.0
PYTHON_RX = re.compile(r"python(?:\d+(?:\.\d+)?)?")


def memcheck_cause(ctx: Ctx, step: Step, m: Memcheck) -> None:
    """compute-sanitizer's first error; the culprit is the input the kernel read its index from (the package's launch
    of that kernel and the captured call), else, in a generated kernel, what the printer shows."""
    cause = from_memcheck(m, ctx.report.pattern or "cuda_illegal_memory_access", step.index)
    if cause is None:
        return
    e = m.errors[0]
    if e.kernel:
        ctx.kernel = e.kernel
        ctx.establish("kernel_frame", f"compute-sanitizer: the illegal access is in the kernel {e.kernel}")
        kernel_culprit(ctx, step, cause, e.kernel, e.file, e.line)
    ctx.consider(cause)
    step.named_root_cause = step.named_root_cause or cause.named


def kernel_culprit(ctx: Ctx, step: Step, cause: RootCause, kernel: str, file: str | None, line: int | None) -> None:
    """A crashed kernel's indices: a captured input past the end of what it indexes is the culprit; an index whose
    values nobody captured leaves the crash site a hypothesis (the printer, next, shows the values)."""
    v = culprit_kernel.examine(ctx.package, ctx.roots, ctx.contract, ctx.calls, kernel, file, line,
                               ctx.report.pattern or cause.pattern, step.index)
    step.found += v.found
    if v.reads is not None:
        ctx.kernel = v.reads.launch  # the name the printer's kernel filter knows
    if v.cause is not None:
        ctx.consider(v.cause)
        step.named_root_cause = True
        return
    cause.evidence += [x for x in v.in_range[:2] if x not in cause.evidence]
    if v.index_unknown:
        step.found.append("not named yet: " + v.unknown[0])
        cause.summary += f" Not named yet: {v.unknown[0]}."
        cause.named = False


def op_registration(ctx: Ctx, cause: RootCause) -> None:
    """Whether the target Python registers the op by itself (then the failing process is not that Python, or
    loads it differently: evidence against), and the built libraries under cwd that carry it."""
    argv0 = (ctx.req.argv or [""])[0]
    if ctx.cwd and cause.op:
        libs = op_probe.libraries_with(cause.op, Path(ctx.cwd))
        if libs:
            cause.summary += f" Built libraries carrying it: {', '.join(libs[:3])} (torch.ops.load_library)."
            cause.evidence.append(f"{cause.op} is in {', '.join(libs[:3])}")
    if not PYTHON_RX.fullmatch(Path(argv0).name) or ctx.left() < OP_PROBE_S:
        return
    facts = op_probe.probe(argv0, cause.op or "")
    if facts.registered:
        cause.against.append(facts.sentence())
    elif facts.registered is False:
        cause.evidence.append(facts.sentence())


def enrich_cause(ctx: Ctx, cause: RootCause) -> None:
    """A cause named from a log, completed by what the project and the target Python show: where a custom op is
    defined under the working folder, and whether the Python that runs the package registers it."""
    where = culprits.op_definition(cause.op, Path(ctx.cwd)) if cause.op and ctx.cwd else None
    if where:  # the module to import (or library to load) in the process that runs the package
        cause.summary += f" It is registered by {where} (under {ctx.cwd})."
        cause.evidence.append(f"{cause.op} is registered in {where}")
    if cause.op and cause.kind == "custom_op_load":
        op_registration(ctx, cause)
