"""Turn parsed printer passes into dump_kernel_inputs' answer: suspects, the index explanation, summary, next step."""

from __future__ import annotations

from pathlib import Path

from aoti_debug.common.errors import BadInput
from aoti_debug.kernels.index_oob import explain_sources
from aoti_debug.kernels.model import DumpResult
from aoti_debug.kernels.printer_collect import Collector
from aoti_debug.kernels.printer_log import PrinterLog
from aoti_debug.kernels.suspects import launches_of_interest, name_suspects
from aoti_debug.package import wrapper_cpp
from aoti_debug.package.kernel_sources import Sources, locate
from aoti_debug.runs.model import RunResult


def sources_of(r: RunResult | None) -> Sources | None:
    """The generated sources a pass left in its fresh inductor cache."""
    cache = r.compile.cache_dir if r and r.compile else None
    try:
        return locate(cache) if cache and Path(cache).is_dir() else None
    except BadInput:
        return None


def _input_order(src: Sources | None, log: PrinterLog) -> dict[str, int]:
    """Model input name -> index: from inputs_info_ in the wrapper, else the order the printer listed them."""
    if src and src.wrappers:
        c, _ = wrapper_cpp.parse_contract(src.wrappers[0].text, "model")
        if c.inputs:
            return {s.name: s.index for s in c.inputs}
    return {r.arg: i for i, r in enumerate(log.model_inputs)}


def _summary(res: DumpResult) -> str:
    parts = []
    if res.failing_kernel:
        how = {"level3": "the last before_launch without its after_launch", "level2": "its launch never finished",
               "cpu_exception": "named by the CPU exception"}.get(res.failing_kernel_from or "", "")
        parts.append(f"Failing kernel: {res.failing_kernel}" + (f" ({how})." if how else "."))
    elif res.status in ("ok", "no_failing_kernel") and res.passes and res.passes[0].level == 3:
        parts.append("Every kernel launch finished: the failure is not inside a kernel (or happened after the model).")
    if res.index_assert:
        parts.append(f"Assertion: index out of bounds: {res.index_assert.text}.")
    parts += [f"Suspect: {s.detail}." for s in res.suspects[:3]]
    if res.explanation and res.explanation.root_cause != "unknown":
        parts.append(f"Likely root cause: {res.explanation.root_cause_title}.")
    if res.saved_tensors:
        rel = sum(s.relevant for s in res.saved_tensors)
        parts.append(f"{len(res.saved_tensors)} tensors saved ({rel} around the kernels of interest).")
    return " ".join(parts)


def _next(res: DumpResult) -> str:
    if res.next_step:
        return res.next_step
    if res.explanation and res.explanation.fixes:
        return res.explanation.fixes[0]
    kinds = [s.kind for s in res.suspects]
    if "nan_inf_input" in kinds:
        return "A model input already holds NaN/Inf: fix the data before the call."
    if "nan_inf_producer" in kinds:
        s = res.suspects[kinds.index("nan_inf_producer")]
        return (f"Check the inputs of {s.kernel} against the op's domain; with printer level 1 "
                f"(level=1) the tensors are saved to .pt files for torch.load.")
    if res.failing_kernel:
        return f"Read {res.failing_kernel}'s arguments above; explain_index_oob if the log has an index assert."
    return "Nothing points inside the model: look at the code around the call (see the passes' logs)."


def report(res: DumpResult, log: PrinterLog, col: Collector | None, run: RunResult | None,
           log1: PrinterLog | None = None) -> DumpResult:
    """Fill the result from the last pass's parse (log) and the level-3 pass (log1)."""
    asserts = log.index_asserts or (log1.index_asserts if log1 else [])
    res.index_assert = asserts[0] if asserts else None
    res.model_inputs = log.model_inputs
    res.unparsed_lines = sum(p.unparsed_lines for p in res.passes)
    src = sources_of(run)
    if asserts and src is not None:
        res.explanation = explain_sources(src, log if log.index_asserts else log1, kernel=res.failing_kernel)
        if not res.failing_kernel and res.explanation.kernel:
            res.failing_kernel, res.failing_kernel_from = res.explanation.kernel, "level2"
    res.suspects = name_suspects(log, col, asserts, res.failing_kernel, res.explanation, _input_order(src, log))
    res.launches = launches_of_interest(log, res.printed_kernels or ([res.failing_kernel] if res.failing_kernel
                                                                      else []))
    if log.multikernel_silenced:
        res.warnings.append("MultiKernel switched the printer off for every later kernel: rebuild with "
                            "triton.multi_kernel=0 to see them")
    if log.skipped_bytes:
        res.warnings.append(f"{log.skipped_bytes} bytes of printer output were only scanned (no NaN/Inf, no kernel "
                            "of interest there); counts cover the rest")
    if any(p.level == 2 for p in res.passes) and not res.printed_kernels:
        res.warnings.append("pass 2 printed every kernel (no failing kernel to filter on): large output on big models")
    res.summary = _summary(res)
    res.next_step = _next(res)
    return res
