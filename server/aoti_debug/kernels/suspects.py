"""Name suspects from parsed printer output: the first NaN/Inf producer, out-of-range indices, empty inputs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from aoti_debug.common.intparse import to_int
from aoti_debug.kernels.index_oob_model import OobExplanation
from aoti_debug.kernels.printer_collect import Collector
from aoti_debug.kernels.printer_log import INT_DTYPES, IndexAssert, Launch, PrinterLog, TensorRecord

SuspectKind = Literal["nan_inf_producer", "nan_inf_input", "index_above_bound", "index_negative", "empty_dimension",
                      "index_above_every_dim"]
# Kernel-name ops whose input domain explains a NaN/Inf, and what to look for in the input stats.
DOMAIN = {"log": "values <= 0 (log of a negative is NaN, of 0 is -inf)", "sqrt": "negative values",
          "rsqrt": "values <= 0", "div": "a zero divisor", "reciprocal": "zeros", "acos": "|x| > 1",
          "asin": "|x| > 1", "pow": "negative bases with fractional exponents", "exp": "large values (overflow to inf)"}
SAVED_RX = re.compile(r"(before_launch|after_launch)_(.+)_(cpu|cuda(?::?\d+)?|xpu(?::?\d+)?|mps)\.pt$")


class Suspect(BaseModel):
    """A named, checkable reason the run went wrong, with the numbers that show it."""

    kind: SuspectKind
    kernel: str | None = Field(None, description="The kernel launch it is about")
    arg: str = Field(description="The argument (or model input) that shows it")
    detail: str = Field(description="One sentence with the evidence (stats against the bound, NaN counts...)")
    value: float | None = Field(None, description="The offending statistic (max or min), when there is one")
    bound: int | None = Field(None, description="The index bound it is compared with")
    model_input: str | None = Field(None, description="The model input it comes from, where the names allow")
    input_index: int | None = Field(None, description="That input's position in the flat input list")
    traced_by: str | None = Field(None, description="name (the argument is the model input) or stats (a buffer "
                                  "whose dtype, shape, min, max and mean equal a model input's)")
    line: int | None = Field(None, description="Line of the record in the printer output")


class SavedTensor(BaseModel):
    """A level-1 .pt file (torch.load(path, weights_only=True))."""

    path: str
    prefix: str | None = None
    kernel: str | None = None
    arg: str | None = None
    device: str | None = None
    size_bytes: int | None = None
    relevant: bool = Field(False, description="Saved around a kernel of interest (failing kernel or producer)")


def _trace(r: TensorRecord, inputs: list[TensorRecord], order: dict[str, int]) -> tuple[str | None, int | None,
                                                                                              str | None]:
    if r.arg in order:
        return r.arg, order[r.arg], "name"
    for m in inputs:
        if (m.dtype, m.shape, m.min, m.max, m.mean) == (r.dtype, r.shape, r.min, r.max, r.mean) and m.numel:
            return m.arg, order.get(m.arg), "stats"
    return None, None, None


def _nan(log: PrinterLog, order: dict[str, int]) -> list[Suspect]:
    out = [Suspect(kind="nan_inf_input", arg=r.arg, model_input=r.arg, input_index=order.get(r.arg), line=r.line,
                   traced_by="name", detail=f"model input {r.arg} already holds {'NaN' if r.nan else 'Inf'}")
           for r in log.model_inputs if r.nan or r.inf]
    L = next((x for x in log.launches if x.ordinal == log.nan_producer), None)
    if L is None:
        return out
    ins = [a for a in L.args if a.role in ("input", "inout") and a.before is not None]
    ops = [op for op in DOMAIN if re.search(rf"(?:^|_){op}(?:_|$)", L.kernel)]
    for a in L.args:
        r = a.after
        if a.role not in ("output", "inout") or r is None or not (r.nan or r.inf):
            continue
        stats = ", ".join(f"{i.arg} min {i.before.min} max {i.before.max}" for i in ins[:4]) or "none printed"
        hint = f"; look for {DOMAIN[ops[0]]} in its inputs" if ops else ""
        src = next((i for i in ins if i.arg in order), None)
        out.append(Suspect(kind="nan_inf_producer", kernel=L.kernel, arg=a.arg, line=r.line,
                           model_input=src.arg if src else None, input_index=order.get(src.arg) if src else None,
                           traced_by="name" if src else None,
                           detail=f"{L.kernel} writes {'NaN' if r.nan else 'Inf'} into {a.arg} (launch #{L.ordinal}) "
                                  f"while its inputs hold none ({stats}){hint}"))
    return out


def _index(a: IndexAssert, bound: int | None, args: list[tuple[str, TensorRecord]], log: PrinterLog,
           order: dict[str, int]) -> list[Suspect]:
    out = []
    lower = (to_int(a.lower.strip().rstrip("L")) or 0) if a.lower and re.fullmatch(r"-?\d+L?", a.lower.strip()) else 0
    for kernel, r in args:
        if r.dtype not in INT_DTYPES or r.numel == 0:
            continue
        name, idx, how = _trace(r, log.model_inputs, order)
        where = f" (model input {idx}, {name})" if name and name != r.arg else (f" (model input {idx})" if name
                                                                                 else "")
        if bound is not None and r.max is not None and r.max >= bound:
            out.append(Suspect(kind="index_above_bound", kernel=kernel, arg=r.arg, value=r.max, bound=bound,
                               model_input=name, input_index=idx, traced_by=how, line=r.line,
                               detail=f"{r.arg}{where} into {kernel}: max {r.max:g} >= bound {bound} "
                                      f"(`{a.text}`)"))
        if r.min is not None and r.min < lower:
            out.append(Suspect(kind="index_negative", kernel=kernel, arg=r.arg, value=r.min, bound=bound,
                               model_input=name, input_index=idx, traced_by=how, line=r.line,
                               detail=f"{r.arg}{where} into {kernel}: min {r.min:g} < {lower}; negative indices "
                                      "wrap (index + size), so values below -size fail"))
    return out


def crash_suspects(launches: list[Launch], inputs: list[TensorRecord], order: dict[str, int],
                   tables: list[tuple[str, list[int]]]) -> list[Suspect]:
    """No index assert (a package built with assert_indirect_indexing=False): the launch that never finished crashed.
    An integer argument whose max is at least every dimension of every tensor that launch got and of every tensor
    the package holds (tables: its constants, which the printer does not print) is no valid index into any of them."""
    L = next((x for x in reversed(launches) if not x.finished), None)
    if L is None:
        return []
    dims = [(d, a.arg, a.before.shape) for a in L.args if a.before and a.before.shape
            and a.before.dtype not in INT_DTYPES for d in a.before.shape]
    dims += [(d, name, shape) for name, shape in tables for d in shape]
    if not dims:
        return []
    bound, table, shape = max(dims)
    out = []
    for a in L.args:
        r = a.before
        if r is None or r.dtype not in INT_DTYPES or not r.numel or r.max is None or r.max < bound:
            continue
        name, idx, how = _trace(r, inputs, order)
        where = f" (model input {idx}, {name})" if name and name != r.arg else (f" (model input {idx})" if name
                                                                                 else "")
        out.append(Suspect(kind="index_above_every_dim", kernel=L.kernel, arg=r.arg, value=r.max, bound=bound,
                           model_input=name, input_index=idx, traced_by=how, line=r.line,
                           detail=f"{r.arg}{where} into {L.kernel}, the launch that never finished: max {r.max:g} "
                                  f">= {bound}, the largest dimension of any tensor it gets or the package holds "
                                  f"({table} {list(shape)}), so it is no valid index into any of them"))
    return out


def name_suspects(log: PrinterLog, col: Collector | None, asserts: list[IndexAssert], kernel: str | None,
                  explanation: OobExplanation | None, order: dict[str, int]) -> list[Suspect]:
    """Every suspect the output supports, the most telling first."""
    out = _nan(log, order)
    if not asserts:
        return out
    a = asserts[0]
    b = explanation.bound if explanation else None
    bound = a.bound_value if a.bound_value is not None else (b.runtime_value if b else None)
    failing = next((L for L in reversed(log.launches) if L.kernel == kernel), None) if kernel else None
    args = [(failing.kernel, x.before) for x in failing.args if x.before] if failing else (
        col.integer_args() if col else [])
    empties = [Suspect(kind="empty_dimension", arg=r.arg, model_input=r.arg, input_index=order.get(r.arg),
                       traced_by="name", line=r.line, value=0,
                       detail=f"model input {r.arg} has shape {r.shape}: dimension {r.shape.index(0)} is empty"
                              + (f", and the bound `{a.bound}` is its size" if b and b.input == r.arg else ""))
               for r in log.model_inputs if r.shape and 0 in r.shape]
    idx = _index(a, bound, args, log, order)
    return out + (empties + idx if bound == 0 or (b and b.input and b.runtime_value == 0) else idx + empties)


def launches_of_interest(log: PrinterLog, kernels: list[str]) -> list[Launch]:
    """The last launch of each kernel of interest and the NaN producer, in launch order."""
    keep: dict[int, Launch] = {}
    for k in kernels:
        L = next((x for x in reversed(log.launches) if x.kernel == k), None)
        if L is not None:
            keep[L.ordinal] = L
    if log.nan_producer is not None:
        keep.update({x.ordinal: x for x in log.launches if x.ordinal == log.nan_producer})
    if not keep:
        keep = {x.ordinal: x for x in log.launches[-3:]}
    return [keep[k] for k in sorted(keep)]


def saved_tensors(paths: list[str], cwd: Path, since: float, kernels: list[str], limit: int = 200) -> list[SavedTensor]:
    """Level-1 files: the paths the run printed, plus <cwd>/tmp/aoti_torch*.pt (old: tmp/aoti_torch/*.pt)."""
    found = dict.fromkeys(paths)
    for pattern in ("tmp/aoti_torch*.pt", "tmp/aoti_torch/*.pt"):
        for p in sorted(cwd.glob(pattern)):
            try:
                if p.stat().st_mtime >= since - 1.0:
                    found.setdefault(str(p))
            except OSError:
                continue
    out = []
    for path in found:
        name = Path(path).name.removeprefix("aoti_torch")
        st = SavedTensor(path=path, relevant=False)
        if m := SAVED_RX.search(name):
            st.prefix, rest, st.device = m.group(1), m.group(2), m.group(3)
            k = next((k for k in sorted(kernels, key=len, reverse=True) if rest.startswith(k + "_")), None)
            st.kernel, st.arg = (k, rest[len(k) + 1:]) if k else (rest.rsplit("_", 1) + [None])[:2]
            st.relevant = bool(k)
        try:
            st.size_bytes = Path(path).stat().st_size
        except OSError:
            pass
        out.append(st)
    out.sort(key=lambda s: not s.relevant)
    return out[:limit]
