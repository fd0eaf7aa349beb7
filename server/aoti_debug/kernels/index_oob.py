"""explain_index_oob: map 'index out of bounds: 0 <= tmpN < X' to kernel, call site, input dimension and guard."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from aoti_debug.common.intparse import to_int
from aoti_debug.kernels import kernel_code
from aoti_debug.kernels.index_oob_model import Bound, CallArg, DimGuard, OobExplanation, SourceLine, cause_table, fill
from aoti_debug.kernels.index_oob_text import markdown
from aoti_debug.kernels.kernel_code import Kernel
from aoti_debug.kernels.printer_collect import parse_chunks
from aoti_debug.kernels.printer_log import IndexAssert, PrinterLog
from aoti_debug.package import wrapper_cpp
from aoti_debug.package.contract import InputContract
from aoti_debug.package.kernel_sources import Source, Sources, locate

SYMBOL_RX = re.compile(r"\b[a-z]\d+\b")


def _pick(cands: list[Kernel], a: IndexAssert, log: PrinterLog, hint: str | None, notes: list[str]) -> Kernel:
    names = list(dict.fromkeys(k.name for k in cands))
    for want in (hint, log.raised_kernel, log.failing_kernel, log.unfinished_launch):
        if want and want in names:
            return next(k for k in cands if k.name == want)
    if a.kernel_file and ":" in a.kernel_file:
        path, line = a.kernel_file.rsplit(":", 1)
        base = Path(path).name
        by_file = [k for k in cands if k.kind == "triton" and Path(k.source.path).name == base]
        if by_file:
            return by_file[0]
        # the .py line of the assert equals its line inside the embedded copy, counted from async_compile.triton(
        by_line = [k for k in cands if k.kind == "triton" and k.source.kind == "wrapper"
                   and k.line_of(k.source.text.find(_needle(a), k.start, k.end)) - k.first_line + 1 == to_int(line)]
        if len({k.name for k in by_line}) == 1:
            return by_line[0]
    if len(names) > 1:
        notes.append(f"{len(names)} kernels hold this assertion ({', '.join(names)}); took the first. Name the "
                     "failing one with dump_kernel_inputs (printer level 3), then pass kernel=...")
    return cands[0]


def _needle(a: IndexAssert) -> str:
    return f"index out of bounds: {a.text}"


def _contract(w: Source | None, model: str) -> InputContract | None:
    return wrapper_cpp.parse_contract(w.text, model)[0] if w else None


def _arg(param: str, expr: str, c: InputContract | None, binds: dict[str, tuple[str, int]]) -> CallArg:
    name = kernel_code.arg_name(expr)
    a = CallArg(param=param, expr=expr, name=name)
    by_name = {s.name: s.index for s in c.inputs} if c else {}
    if name in by_name:
        a.model_input, a.input_index = name, by_name[name]
    syms = [s for s in SYMBOL_RX.findall(expr) if s in binds]
    if syms:
        inp, dim = binds[syms[0]]
        a.size_of = f"{inp}.size({dim})"
    return a


def _bindings(w: Source | None, c: InputContract | None) -> dict[str, tuple[str, int]]:
    binds = kernel_code.size_bindings(w.text) if w else {}
    for spec in c.inputs if c else []:
        for d in spec.sizes:
            if d.symbol and d.symbol not in binds:
                binds[d.symbol] = (spec.name, d.dim)
    return binds


def _bound(a: IndexAssert, args: dict[str, CallArg], c: InputContract | None, binds: dict[str, tuple[str, int]],
           log: PrinterLog, kernel: str) -> Bound:
    b = Bound(text=a.bound or "", value=a.bound_value)
    ks = kernel_code.KS_RX.findall(b.text)
    if not ks or ks[0] not in args:
        return b
    arg = args[ks[0]]
    b.param, b.call_expr = ks[0], arg.expr
    syms = [s for s in SYMBOL_RX.findall(arg.expr) if s in binds]
    if not syms:
        return b
    b.input, b.dim = binds[syms[0]]
    spec = next((s for s in c.inputs if s.name == b.input), None) if c else None
    if spec is not None:
        b.input_index = spec.index
        d = spec.sizes[b.dim] if b.dim < len(spec.sizes) else None
        b.guard = DimGuard(input=spec.name, input_index=spec.index, dim=b.dim, min=d.min if d else None,
                           max=d.max if d else None, enforced=c.checks if c else "unknown")
    for r in log.model_inputs:  # the size at run time, when the log is printer output
        if r.arg == b.input and r.shape and b.dim < len(r.shape):
            b.runtime_value = r.shape[b.dim]
    for launch in log.launches:
        if launch.kernel == kernel and syms[0] in launch.scalars and b.runtime_value is None:
            b.runtime_value = launch.scalars[syms[0]]
    return b


def _static_tensor(b: Bound, indexed: list[CallArg], c: InputContract | None) -> None:
    """A static bound is the size of a dimension of the indexed tensor: say which, when a constant has it."""
    consts = {k.name: k for k in c.constants} if c else {}
    for arg in indexed:
        k = consts.get(arg.name) or next((x for x in consts.values() if x.original_fqn == arg.name), None)
        if k and b.value is not None and b.value in k.shape:
            b.tensor, b.dim = arg.name, k.shape.index(b.value)
        elif arg.model_input:
            b.tensor = arg.name


def _root(e: OobExplanation, c: InputContract | None) -> None:
    b, table = e.bound, cause_table()
    vals: dict[str, object] = {"kernel": e.kernel, "bound": b.text if b else None, "lower": e.assertion.lower
                               if e.assertion else None}
    if e.index_from:
        src = e.index_from[0]
        vals["index_input"] = f"input {src.input_index} ({src.name})" if src.model_input else src.name
    if b and b.input is not None:
        vals.update(input=b.input, index=b.input_index, dim=b.dim, min=b.guard.min if b.guard else None)
        small = b.runtime_value is not None and (b.runtime_value == 0 or (
            b.guard is not None and b.guard.min is not None and b.runtime_value < b.guard.min))
        if small or e.clamped or b.runtime_value is None:
            e.root_cause = "empty_dimension"
            if not small and not e.clamped:
                e.notes.append("the size at run time is not in the log: an index value >= the size is the other "
                               "possibility (dump_kernel_inputs shows both)")
        else:
            e.root_cause = "index_value_out_of_range"
        if b.guard is not None and b.guard.min is None:
            e.contributing.append("missing_lower_bound_guard")
        elif b.guard is not None and b.guard.enforced == "runtime_env":
            e.contributing.append("guard_not_enforced")
        if c is not None and c.checks == "absent":
            e.contributing.append("no_input_checks")
    elif b and b.value is not None:
        e.root_cause = "index_value_out_of_range"
    cause = table.causes[e.root_cause]
    e.root_cause_title = cause.title
    e.why = [fill(cause.why, vals)] + [fill(table.contributing[x].why, vals) for x in e.contributing]
    e.fixes = [fill(f, vals) for f in cause.fixes] + [
        fill(f, vals) for x in e.contributing for f in table.contributing[x].fixes]


def explain_sources(src: Sources, log: PrinterLog, *, kernel: str | None = None,
                    model: str = "model") -> OobExplanation:
    """The explanation from located sources and a parsed log (printer output or a plain failing log)."""
    e = OobExplanation(status="no_assert", origin=src.origin, files=[s.path for s in src.all()], notes=list(src.notes))
    if not log.index_asserts:
        e.notes.append("the log has no 'index out of bounds' line: pass the failing run's full output (stderr too)")
        e.markdown = markdown(e)
        return e
    a = e.assertion = log.index_asserts[0]
    if len(log.index_asserts) > 1:
        e.notes.append(f"{len(log.index_asserts)} different assertions in the log; explained the first")
    cands = [k for k in kernel_code.kernels(src) if k.source.text.find(_needle(a), k.start, k.end) >= 0]
    e.candidates = list(dict.fromkeys(k.name for k in cands))
    if not cands:
        e.status = "kernel_not_found"
        e.notes.append(f"no kernel in these sources holds {_needle(a)!r}: are they the failing package's?")
        _root(e, None)
        e.markdown = markdown(e)
        return e
    k = _pick(cands, a, log, kernel, e.notes)
    e.kernel, e.kernel_kind, e.signature = k.name, k.kind, k.params
    at = k.source.text.find(_needle(a), k.start, k.end)
    line = k.line_of(at)
    e.assert_source = SourceLine(file=k.source.path, line=line, text=k.source.text.splitlines()[line - 1].strip())
    chain = kernel_code.trace_index(k, a.tmp_var or "", at) if a.tmp_var else kernel_code.Chain()
    e.index_chain, e.clamped = chain.lines, chain.clamped
    calls = [(w, c) for w in src.wrappers for c in kernel_code.find_calls(w, k.name)]
    w = calls[0][0] if calls else (src.wrappers[0] if src.wrappers else None)
    c = _contract(w, model)
    binds = _bindings(w, c)
    if calls:
        w, call = calls[0]
        e.call_site = SourceLine(file=w.path, line=call.line, text=call.text)
        e.call_args = [_arg(p, x, c, binds) for p, x in zip(k.params, call.args, strict=False)]
        e.source_nodes, e.aten_ops = call.source_nodes, call.aten_ops
        e.ops_from = "comment" if call.source_nodes else None
        if len(calls) > 1:
            e.notes.append(f"{k.name} is launched {len(calls)} times; mapped the first call site")
    else:
        e.notes.append(f"no call site of {k.name} in the wrapper: size arguments cannot be tied to inputs")
    if not e.source_nodes:
        e.source_nodes = [x for x in re.sub(r"^(?:cpp|triton_\w+?)_fused_|_\d+$", "", k.name).split("_") if x]
        e.ops_from = "kernel_name"
    by_param = {x.param: x for x in e.call_args}
    e.index_from = [by_param[p] for p in chain.sources if p in by_param]
    e.indexed = [by_param[p] for p in chain.indexed if p in by_param]
    e.bound = _bound(a, by_param, c, binds, log, k.name)
    if e.bound.value is not None:
        _static_tensor(e.bound, e.indexed, c)
    _root(e, c)
    complete = e.call_site and (e.bound.value is not None or e.bound.input is not None)
    e.status = "explained" if complete else "partial"
    e.markdown = markdown(e)
    return e


def explain_index_oob(path: str | Path, log_chunks: Iterable[bytes], *, kernel: str | None = None,
                      model: str | None = None, within: list[Path] | None = None) -> OobExplanation:
    """Locate the package's sources (.pt2, extracted folder or inductor cache), parse the log, explain.
    within: the folders every file read must lie in (the server passes its roots)."""
    src = locate(path, model, within)
    log, _ = parse_chunks(log_chunks)
    return explain_sources(src, log, kernel=kernel, model=model or "model")
