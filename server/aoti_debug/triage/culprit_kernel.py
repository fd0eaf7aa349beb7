"""The culprit of a crash inside a kernel (compute-sanitizer's kernel and line, a native frame in a generated
kernel): the model input whose captured values, loaded as an index, pass the end of the tensor they address."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aoti_debug.common.errors import AotiDebugError
from aoti_debug.kernels.printer_log import INT_DTYPES
from aoti_debug.package.contract import InputContract
from aoti_debug.package.kernel_sources import locate
from aoti_debug.package.wrapper_cpp import parse_contract
from aoti_debug.runs.calls import CallRecord, CallsReport, TensorInfo
from aoti_debug.runs.forensics import GENERATED_KERNEL
from aoti_debug.triage.fixes import select
from aoti_debug.triage.kernel_reads import IndirectRead, KernelReads, LaunchTensor, read
from aoti_debug.triage.model import RootCause


@dataclass
class Verdict:
    """What the package and the captured call say about the crashed kernel's indices."""

    reads: KernelReads | None = None
    cause: RootCause | None = None  # a named culprit: an input's value past the end of what it indexes
    found: list[str] = field(default_factory=list)  # for the step's report
    in_range: list[str] = field(default_factory=list)  # index inputs whose captured values fit: not the culprit
    unknown: list[str] = field(default_factory=list)  # index sources whose values nobody captured

    @property
    def index_unknown(self) -> bool:
        """An index the kernel loads could hold the bad value and no captured value rules it in or out."""
        return bool(self.unknown) and self.cause is None


def the_call(calls: CallsReport | None) -> CallRecord | None:
    """The call the process died or raised in (a CUDA fault surfaces there or later), else the last call."""
    recs = [r for r in (calls.records if calls else []) if r.kind == "call"]
    if calls and calls.died_in and calls.died_in.kind == "call":
        return calls.died_in
    return next((r for r in recs if r.status == "raised"), recs[-1] if recs else None)


def _out_of_range(t: TensorInfo, numel: int, scale: int) -> float | None:
    """The captured value that no index into numel elements, scaled by `scale` in the address, can be (value x scale
    >= numel, or below -numel: negative indices wrap once at most); None when every value fits."""
    if t.max is not None and t.max * scale >= numel:
        return t.max
    if t.min is not None and t.min * scale < -numel:
        return t.min
    return None


def _scale(r: KernelReads, rd: IndirectRead) -> tuple[int, str]:
    """The index's factor in the address as a number, and how to say it ('' for none)."""
    raw = rd.scale or ""
    if raw.rstrip("L").isdigit():
        return max(1, int(raw.rstrip("L"))), f" x {raw.rstrip('L')}"
    arg = r.args.get(raw)
    if arg is not None and arg.arg.rstrip("L").isdigit():
        return max(1, int(arg.arg.rstrip("L"))), f" x {raw} ({arg.arg.rstrip('L')})"
    return 1, ""


def _where(t: LaunchTensor) -> str:
    return f"input {t.input_index} ({t.arg})"


def _sources(package: Path, roots: list[Path] | None, contract: InputContract | None):
    try:
        src = locate(package, within=roots)
    except (AotiDebugError, OSError):
        return None, contract
    if contract is None and src.wrappers:
        contract = parse_contract(src.wrappers[0].text, "model")[0]
    return src, contract


def examine(package: Path | None, roots: list[Path] | None, contract: InputContract | None,
            calls: CallsReport | None, kernel: str, file: str | None, line: int | None, pattern: str,
            step: int) -> Verdict:
    """The kernel's indirect reads from the package, their index sources tied to model inputs, and the captured
    call's values of those inputs against the number of elements of the tensor each one addresses."""
    v = Verdict()
    if package is None or not package.exists():
        v.unknown.append("no package to read the kernel's launch from")
        return v
    src, contract = _sources(package, roots, contract)
    call = the_call(calls)
    actual = {i: t.shape for i, t in enumerate(call.inputs if call else []) if t.shape is not None}
    v.reads = read(src, contract, kernel, file, line, actual) if src else None
    r = v.reads
    if r is None:
        v.found.append(f"the package has no launch of {kernel} to read")
        return v
    at = f" at line {r.line}" if r.line else ""
    if not r.reads:
        v.found.append(f"{kernel}{at} addresses no tensor with loaded values: no index input to blame")
        return v
    for rd in r.reads:
        target = r.args.get(rd.pointer)
        for p in rd.index_from:
            idx = r.args.get(p)
            if idx is None or target is None:
                continue
            _judge(v, r, rd, idx, target, call, pattern, step, file)
    if v.cause is None and not v.unknown and not v.in_range:
        v.unknown.append(f"{kernel} indexes with values it loads, from tensors that are no model input")
    return v


def _judge(v: Verdict, r: KernelReads, rd: IndirectRead, idx: LaunchTensor, target: LaunchTensor,
           call: CallRecord | None, pattern: str, step: int, file: str | None) -> None:
    numel = target.numel
    what = f"{r.kernel} reads {target.describe()} at line {rd.line} (`{rd.text[:160]}`) with an index loaded from "
    if idx.role != "input" or idx.input_index is None:
        v.unknown.append(what + f"{idx.arg} ({idx.role})")
        return
    t = call.inputs[idx.input_index] if call and idx.input_index < len(call.inputs) else None
    if t is None or t.max is None or (t.dtype and t.dtype not in INT_DTYPES) or numel is None:
        v.unknown.append(what + _where(idx) + (": its values were not captured" if t is None or t.max is None
                                               else f" (size of {target.arg} unknown)" if numel is None else ""))
        return
    scale, times = _scale(r, rd)
    limit = -(-numel // scale)  # the first index whose element lies past the end
    bad = _out_of_range(t, numel, scale)
    if bad is None:
        v.in_range.append(f"{_where(idx)} of call {call.index} holds {t.min:g}..{t.max:g}, within the {limit} "
                          f"indices (index{times} into {numel} elements) of {target.describe()} that {r.kernel} "
                          "reads with it")
        return
    if v.cause is not None:
        return
    value = f"{bad:g}"
    sentence = (f"Input {idx.input_index} ({idx.arg}) holds the index value {value} (call {call.index}), and "
                f"{r.kernel} crashed reading {target.describe()} with it at line {rd.line}: the address takes the "
                f"index{times} into {numel} elements, so it must lie in [0, {limit}).")
    ev = [what + _where(idx) + f"; call {call.index} gave {_where(idx)} {t.dtype}{t.shape} with min {t.min:g} and "
          f"max {t.max:g}" + (f" (at {t.max_at})" if t.max_at is not None and bad == t.max else ""),
          f"{target.arg} is {target.role} {target.describe()}: {numel} elements"]
    owner = "generated" if GENERATED_KERNEL.match(r.kernel) else "user"
    facts = {"kind": "index_value_out_of_range", "owner": owner, "kernel": r.kernel, "launch": r.launch,
             "input_index": str(idx.input_index), "input_name": idx.arg, "got": value, "table": target.describe(),
             "line": str(rd.line), "pattern": pattern}
    v.cause = RootCause(named=True, level="culprit", kind="index_value_out_of_range", summary=sentence,
                        pattern=pattern, input_index=idx.input_index, input_name=idx.arg, kernel=r.kernel,
                        expected=f"0 <= index < {limit}", got=value,
                        source=f"{file or r.source}:{rd.line}", evidence=ev, step=step,
                        fixes=select(pattern, facts) or [
                            f"Validate or clamp input {idx.input_index} ({idx.arg}) before the call: every value must "
                            f"index {target.describe()}."])
    v.found.append(f"{_where(idx)} into {r.kernel}: {value}{times} past the {numel} elements of "
                   f"{target.describe()} it indexes at line {rd.line}")
