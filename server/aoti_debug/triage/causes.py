"""Root causes from each kind of evidence: an input check line, a parity mismatch, an index-assert explanation,
printer suspects, a native backtrace, a memcheck report. Each says whether it names the cause, with the values."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from aoti_debug.classify.engine import Classification
from aoti_debug.classify.guides import load_guides
from aoti_debug.common.intparse import to_int
from aoti_debug.kernels.index_oob_model import OobExplanation
from aoti_debug.package.contract import InputContract
from aoti_debug.parity.rules import Mismatch, make
from aoti_debug.runs.forensics import GENERATED_KERNEL, Backtrace, Faulthandler
from aoti_debug.runs.memcheck import Memcheck
from aoti_debug.triage import culprits, headers
from aoti_debug.triage.fixes import has_conditional_fixes, select
from aoti_debug.triage.model import RootCause
from aoti_debug.triage.rules import culprit_level, rules

SYSTEM_CXX = "/usr/bin/g++"
TOOLCHAIN_FIX = (f"Rebuild the package with the system compiler and a fresh cache: CXX={SYSTEM_CXX} "
                 "TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) python <build script>; then check the '// Compile cmd' "
                 "trailer of the new wrapper.cpp.")
# One sentence per input-check kind; fields come from the classification.
INPUT_SENTENCES = {
    "dtype": "input {index}{name} is {got} but the package was exported with {expected}",
    "static_dim": "input {index}{name} has size {got} at dim {dim}; the package was exported with a static {expected}",
    "dim_below_min": "input {index}{name} has size {got} at dim {dim}, below the exported minimum {expected}",
    "dim_above_max": "input {index}{name} has size {got} at dim {dim}, above the exported maximum {expected}",
    "stride": "input {index}{name} has stride {got} at dim {dim}; the package expects {expected} "
              "(a non-contiguous or permuted input)",
    "input_count": "the model got {got} tensor inputs; the package expects {expected}",
    "device_type": "input {index}{name} is on {got} but the package was compiled for {expected}",
}



def capitalized(text: str) -> str:
    """A sentence's first letter in upper case, unless its first word is a name (a kernel, a buffer, an FQN):
    triton_per_fused_div_sum_0 stays as the package spells it."""
    first = text.split(" ", 1)[0]
    if not first or re.search(r"[_\d.:]", first) or any(ch.isupper() for ch in first[1:]):
        return text
    return first[0].upper() + text[1:]

def _name(contract: InputContract | None, index: int | None) -> str | None:
    if contract is None or index is None:
        return None
    spec = next((s for s in contract.inputs if s.index == index), None)
    return spec.name if spec else None


def _fix(kind: str, **fields: Any) -> list[str]:
    try:
        m = make(kind, "", **fields)
    except KeyError:
        return []
    fix = m.fix.replace(" (?)", "")
    return [fix[:1].upper() + fix[1:]]


def guide_fix(pattern: str) -> str:
    """The first item of the guide's 'Fix or work around' section."""
    g = load_guides().get(pattern)
    if g is None:
        return ""
    m = re.search(r"^## Fix[^\n]*\n+(.*?)(?=\n## |\Z)", g.body, re.S | re.M)
    if not m:
        return ""
    first = re.split(r"\n(?=- |\d+\. )|\n\n", m.group(1).strip())[0]
    return re.sub(r"\s+", " ", re.sub(r"^(- |\d+\. )", "", first)).strip()


def guide_fixes(pattern: str, facts: dict[str, str]) -> list[str]:
    """The guide's fixes whose condition holds for these facts; its first 'Fix' item where it states none."""
    if has_conditional_fixes(pattern):
        return select(pattern, facts)
    return [x for x in [guide_fix(pattern)] if x]


def from_classification(c: Classification, step: int, contract: InputContract | None = None,
                        read: culprits.SourceReader | None = None, log: str | None = None) -> RootCause:
    """A classification that states its cause (rules().naming_fields); at culprit level only when its fields (or a
    culprit step on them) name what to change (rules().culprit_fields)."""
    f = c.fields
    if c.pattern == "custom_op":
        return culprits.custom_op(c, step)
    if c.pattern == "cpp_compile_error":
        return culprits.compile_error(c, step, read, log)
    ev = [e.text for e in c.evidence[:3]]
    idx = to_int(f["input_index"]) if f.get("input_index", "").isdigit() else None
    name = _name(contract, idx)
    if c.pattern == "input_shape_mismatch":
        kind = rules().check_kinds.get(f.get("check", ""), "input_count" if "check" not in f else "static_dim")
        expected, got = (f.get("expected_dtype"), f.get("got_dtype")) if kind == "dtype" else (
            f.get("expected"), f.get("got"))
    elif c.pattern == "input_device_mismatch" and idx is not None:
        kind, expected, got = "device_type", f.get("expected_device"), f.get("got_device")
    else:
        kind, expected, got = {"device_mismatch_load": "device", "native_abi": "toolchain",
                               "input_device_mismatch": "device_type"}.get(
            c.pattern, c.pattern), f.get("expected"), f.get("got")
        if c.pattern == "native_abi":
            kind = next((k for field, k in rules().native_abi_kinds.items() if field in f), "toolchain")
        summary = f"{c.summary} Evidence: `{ev[0]}`" if ev else c.summary
        fixes = [TOOLCHAIN_FIX] if kind == "toolchain" else []
        header = headers.facts("\n".join(e.text for e in c.evidence))
        if header.get("header_package"):
            summary += f" {header['missing_header']} comes with {header['header_package']}."
        chosen = select(c.pattern, culprits.facts_of(c, kind=kind, **header)) if has_conditional_fixes(c.pattern) else [
            x for x in [guide_fix(c.pattern)] if x]
        return RootCause(named=True, level="culprit" if culprit_level(c) else "pattern", kind=kind, summary=summary,
                         pattern=c.pattern, evidence=ev, fixes=fixes + chosen, step=step)
    dim = to_int(f["dim"]) if f.get("dim", "").isdigit() else None
    values = {"index": idx, "name": f" ({name})" if name else "", "dim": dim, "expected": expected, "got": got}
    filled = {k: ("?" if v is None else v) for k, v in values.items()}
    sentence = INPUT_SENTENCES.get(kind, "input {index}").format_map(filled)
    sentence = capitalized(sentence) + "."
    level = "culprit" if idx is not None or (kind == "input_count" and expected) else "pattern"
    return RootCause(named=True, level=level, kind=kind, summary=sentence, pattern=c.pattern, input_index=idx,
                     input_name=name, dim=dim, expected=expected, got=got, evidence=ev, step=step,
                     fixes=_fix(kind, index=idx, name=name, dim=dim, expected=expected, got=got)
                     + guide_fixes(c.pattern, culprits.facts_of(c, kind=kind)))


def from_parity(m: Mismatch, pattern: str, step: int) -> RootCause:
    return RootCause(named=True, level="culprit", kind=m.kind, summary=f"{m.title}: {m.message}.", pattern=pattern,
                     input_index=m.input_index, input_name=m.input_name, dim=m.dim, expected=m.expected, got=m.got,
                     evidence=[m.message], fixes=[m.fix] + ([TOOLCHAIN_FIX] if m.kind in (
                         "static_libstdcxx", "compiler_skew") else []), step=step)


def from_oob(e: OobExplanation, pattern: str, step: int) -> RootCause:
    """Named only for an empty dimension that the code proves (a clamped index) or the log shows."""
    b, a = e.bound, e.assertion
    src = e.index_from[0] if e.index_from else None
    ev = [f"index out of bounds: {a.text}" if a else "", e.assert_source.text if e.assert_source else ""]
    if e.root_cause == "empty_dimension" and b is not None:
        named = e.clamped or b.runtime_value is not None
        guard = (f"; check_input_{b.input_index} requires >= {b.guard.min} but runs only with "
                 "AOTI_RUNTIME_CHECK_INPUTS=1" if b.guard and b.guard.min is not None else "")
        summary = (f"Input {b.input_index} ({b.input}) dimension {b.dim} was empty or below its exported minimum: "
                   f"{e.kernel} indexes it with a value clamped to its size (bound `{b.text}`), which fails only "
                   f"for an empty dimension{guard}.")
        return RootCause(named=named, level="culprit", kind="empty_dimension", summary=summary, pattern=pattern,
                         input_index=b.input_index, input_name=b.input, dim=b.dim, kernel=e.kernel,
                         expected=f">= {b.guard.min}" if b.guard and b.guard.min is not None else None,
                         got=None if b.runtime_value is None else str(b.runtime_value),
                         evidence=[x for x in ev if x], fixes=e.fixes[:3], step=step)
    where = f"input {src.input_index} ({src.name})" if src and src.input_index is not None else (
        src.name if src else "an index tensor")
    bound = b.text if b else (a.bound if a else "?")
    tensor = f"{b.tensor} dim {b.dim}" if b and b.tensor else "the indexed tensor"
    summary = (f"{e.kernel or 'A kernel'} indexes {tensor} (size {bound}) with values from {where}; a value is "
               f">= {bound} or negative, or the input is not what the package expects (dtype, shape).")
    return RootCause(named=False, level="culprit" if src and src.input_index is not None else "pattern",
                     kind=e.root_cause, summary=summary, pattern=pattern,
                     input_index=src.input_index if src else None, input_name=src.name if src else None,
                     kernel=e.kernel, expected=f"< {bound}", evidence=[x for x in ev if x], fixes=e.fixes[:3],
                     step=step)


def from_suspect(s: Any, pattern: str, step: int, oob: OobExplanation | None) -> RootCause:
    """A dump_kernel_inputs suspect (dump_suspects.Suspect): the printed numbers that show the cause."""
    where = f"input {s.input_index} ({s.model_input})" if s.input_index is not None else s.arg
    if s.kind in ("index_above_bound", "index_negative", "index_above_every_dim"):
        value = f"{s.value:g}" if s.value is not None else "?"
        summary = (f"{capitalized(where)} holds the index value {value}, but {s.kernel} indexes a "
                   f"dimension of size {s.bound}.") if s.kind != "index_above_every_dim" else (
            f"{capitalized(where)} holds the index value {value}, and {s.kernel} crashed while reading "
            f"with it: no tensor it gets or the package holds has a dimension that large (the largest is {s.bound}).")
        return RootCause(named=True, level="culprit", kind="index_value_out_of_range", summary=summary,
                         pattern=pattern,
                         input_index=s.input_index, input_name=s.model_input, kernel=s.kernel,
                         expected=f"0 <= index < {s.bound}", got=value, evidence=[s.detail], step=step,
                         fixes=(oob.fixes[:2] if oob else []) or [
                             "Validate or clamp the index tensor where it is produced (ids < table size)."])
    if s.kind == "empty_dimension":
        return RootCause(named=True, level="culprit", kind="empty_dimension",
                         summary=capitalized(s.detail) + ".",
                         pattern=pattern, input_index=s.input_index, input_name=s.model_input, got="0",
                         evidence=[s.detail], fixes=oob.fixes[:2] if oob else [], step=step)
    summary = capitalized(s.detail) + "."
    kind = "nan_produced" if s.kind == "nan_inf_producer" else "nan_input"
    facts = {"kind": kind, "kernel": s.kernel or "the kernel", "input_index": "?" if s.input_index is None else str(
        s.input_index)}
    return RootCause(named=True, level="culprit", kind=kind, summary=summary, pattern=pattern, kernel=s.kernel,
                     input_index=s.input_index, input_name=s.model_input, evidence=[s.detail], step=step,
                     fixes=guide_fixes("nan_inf", facts))


def _short(function: str | None) -> str:
    """'void std::__detail::_Compiler<...>::_M_atom() const' -> 'std::__detail::_Compiler::_M_atom'."""
    f = function or "??"
    while (g := re.sub(r"<[^<>]*>", "", f)) != f:
        f = g
    f = re.sub(r"\(.*$", "", f).strip()
    return f.split(" ")[-1] if " " in f else f


def from_backtrace(bt: Backtrace, fault: Faulthandler | None, step: int, compiler: str | None,
                   pattern: str | None = None) -> RootCause:
    to = rules().points_to_pattern.get(bt.points_to)
    names = [_short(f.function) for f in bt.frames]
    marks = [f for f in bt.frames if re.search(r"regex|_Compiler|parse_device_str|AOTInductorModel\w*Create",
                                               f.function or "")]
    picked = bt.frames[:1] + [m for m in marks if "parse_device_str" in (m.function or "")][:1] + [
        m for m in marks if "Create" in (m.function or "")][:1]
    chosen = list({f.index: f for f in picked}.values())
    ev = [f"#{f.index} {_short(f.function)}" + (f" in {Path(f.library).name}" if f.library else "") for f in chosen]
    py = fault.frames[0] if fault and fault.frames else None
    if py:
        ev.append(f'File "{py.file}", line {py.line} in {py.function}')
    built = f" (built by {compiler})" if compiler else ""
    if bt.points_to == "toolchain":
        regex = any("regex" in (f.function or "") or "_Compiler" in (f.function or "") for f in bt.frames)
        callers = [n for n in names if re.search(r"parse_device_str|AOTInductorModel", n)][:2]
        summary = (f"The package's .so{built} crashed {'while loading, ' if bt.during_load else ''}inside "
                   + ("std::regex code" if regex else "libstdc++ code") + " compiled into it"
                   + (f" (called from {', '.join(callers)})" if callers else "")
                   + ": the C++ toolchain that built the package does not match the runtime's; the model is not "
                     "at fault.")
        return RootCause(named=True, level="culprit", kind="toolchain", summary=summary, pattern=to or "native_abi",
                         evidence=ev,
                         fixes=[TOOLCHAIN_FIX], step=step)
    if bt.points_to == "generated_code" and bt.kernel:
        # a kernel ran and crashed: the culprit is the value it read with, found by printing its inputs
        return RootCause(named=False, kind="illegal_access", summary=bt.verdict, pattern=pattern or
                         "segfault_no_message", kernel=bt.kernel, evidence=ev, step=step,
                         fixes=guide_fixes(pattern or "segfault_no_message", {"kind": "illegal_access",
                                                                             "kernel": bt.kernel}))
    # a load crash (device) is confirmed by check_parity's values; a crashing outside library is named by its path
    level = "culprit" if bt.points_to == "custom_op" and bt.top_library else "pattern"
    return RootCause(named=to is not None, level=level, kind=bt.points_to, summary=bt.verdict,
                     pattern=to or "segfault_no_message", evidence=ev, step=step,
                     fixes=[guide_fix(to)] if to else select("segfault_no_message", {"kind": bt.points_to}))


def from_memcheck(m: Memcheck, pattern: str, step: int) -> RootCause | None:
    if not m.errors:
        return None
    e = m.errors[0]
    ev = [e.what] + [x for x in (f"at {e.kernel} in {e.file}:{e.line}" if e.kernel else "",
                                 f"by thread {e.thread} in block {e.block}" if e.thread else "") if x]
    # a user kernel is fixed in its code; a generated one by the input it read with (dump_kernel_inputs names it)
    level = "pattern" if not e.kernel or GENERATED_KERNEL.match(e.kernel) else "culprit"
    owner = ("generated" if level == "pattern" else "user") if e.kernel else "unknown"
    facts = {"kind": "illegal_access", "owner": owner,
             "kernel": e.kernel or "the kernel", "line": str(e.line or "?"), "pattern": pattern}
    fixes = select(pattern, facts) if has_conditional_fixes(pattern) else [
        f"Bounds-check the index used by {e.kernel or 'the kernel'} (mask the load or clamp it), "
        "and validate the index input before the call.", guide_fix(pattern)]
    return RootCause(named=True, level=level, kind="illegal_access", summary=m.verdict, pattern=pattern,
                     kernel=e.kernel, evidence=ev, step=step, fixes=fixes)
