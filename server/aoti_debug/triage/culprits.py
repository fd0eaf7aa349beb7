"""Culprit steps per pattern: what to change, named from the log and the package (the custom op and its phase, the
constant against the package's FQNs, the first compiler error and whose file it is, the buffer behind an OOM)."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from pathlib import Path

from aoti_debug.classify.engine import Classification
from aoti_debug.package.contract import InputContract
from aoti_debug.triage import culprit_oom, headers
from aoti_debug.triage.fixes import select
from aoti_debug.triage.model import RootCause
from aoti_debug.triage.rules import rules

# Reads a source file a compiler error names (None: outside what may be read, or gone).
SourceReader = Callable[[str], "str | None"]
CONTEXT_LINES = 2
MAX_SCAN_FILES = 2000
REGISTERS = re.compile(r"torch\.library\.|\bcustom_op\(|\btriton_op\(|\bLibrary\(|TORCH_LIBRARY")
SKIP_DIRS = {"site-packages", "node_modules", "__pycache__", "build", "dist", "venv"}


def facts_of(c: Classification | None, **extra: str | None) -> dict[str, str]:
    """What fix conditions are evaluated against: the classification's fields and lines, plus the step's facts."""
    out = {k: str(v) for k, v in (c.fields if c else {}).items()}
    if c is not None:
        out["pattern"] = c.pattern
        out["line"] = "\n".join(e.text for e in c.evidence)
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def _ev(c: Classification, n: int = 2) -> list[str]:
    return [e.text for e in c.evidence[:n]]


# --- custom_op ----------------------------------------------------------------------------------

def custom_op(c: Classification, step: int, extern_ops: list[str] | None = None) -> RootCause:
    """The op and the phase its message belongs to; with the package, whether the package calls it."""
    op = c.fields.get("op")
    line = "\n".join(e.text for e in c.evidence)
    phase = next((p for rx, p in rules().custom_op_phases.items() if re.search(rx, line)), None)
    facts = facts_of(c, phase=phase, kind="custom_op")
    ev = _ev(c)
    if extern_ops is not None and op:
        calls = [x for x in extern_ops if op.split(".")[0] in x]
        ev.append(f"the package runs {', '.join(calls)} through the proxy executor" if calls else
                  f"the package's extern-op list does not name {op}")
    where = {"export": "at export (no fake kernel)",
             "load": "in the process that loads and runs the package, where nothing registered it",
             "package": "because the package's proxy-executor JSON is missing",
             "run": "at run time (its fake kernel promised another output size or stride)"}.get(phase or "", "")
    summary = (f"Custom op {op} failed {where}." if op else f"A custom op failed {where}.") + (
        " Load the library that registers it (import its module, or torch.ops.load_library) in that process "
        "before aoti_load_package." if phase == "load" else "")
    return RootCause(named=True, level="culprit" if op and phase else "pattern", kind=f"custom_op_{phase or 'unknown'}",
                     summary=summary, pattern=c.pattern, op=op, evidence=ev, step=step,
                     fixes=select(c.pattern, facts))


def op_definition(op: str, folder: Path) -> str | None:
    """file:line under folder that registers the op: a Python `"ns::name"` literal, or C++ TORCH_LIBRARY(ns, ...)
    with `"name(`; bounded (source files only, hidden folders and environments pruned)."""
    ns, _, name = op.partition("::")
    py = re.compile(rf"""["']{re.escape(op)}["']""")
    cpp = re.compile(rf"""TORCH_LIBRARY(?:_FRAGMENT)?\(\s*{re.escape(ns)}\s*,[\s\S]*?["']{re.escape(name)}\(""")
    seen = 0
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for f in sorted(files):
            path = Path(top) / f
            if path.suffix not in (".py", ".cpp", ".cc", ".cu") or not path.is_file() or path.stat().st_size > 2**20:
                continue
            seen += 1
            if seen > MAX_SCAN_FILES:
                return None
            text = path.read_text(encoding="utf-8", errors="replace")
            m = (py if path.suffix == ".py" else cpp).search(text)
            if m and REGISTERS.search(text):  # a file that registers ops, not one that only names it
                return f"{path.relative_to(folder)}:{text.count(chr(10), 0, m.start()) + 1}"
    return None


# --- constant_loading ---------------------------------------------------------------------------

def constant(c: Classification, step: int, contract: InputContract | None) -> RootCause | None:
    """The name given to load_constants (or the one missing from a full update) against the package's FQNs."""
    name = c.fields.get("constant")
    if not name or contract is None or not contract.constants:
        return None
    fqns = [k.original_fqn or k.name for k in contract.constants]
    internal = {k.name: (k.original_fqn or k.name) for k in contract.constants}
    line = "\n".join(e.text for e in c.evidence)
    if name in internal and re.search(r"Cannot find constants", line):
        fqn = internal[name]
        summary = (f"load_constants(..., check_full_update=True) was not given the package's constant {fqn} "
                   f"(internal name {name}); the package has {len(fqns)}: {', '.join(fqns[:6])}.")
        facts = facts_of(c, kind="constant_missing")
        return RootCause(named=True, level="culprit", kind="constant_missing", summary=summary, pattern=c.pattern,
                         constant=fqn, expected=fqn, evidence=_ev(c), step=step, fixes=select(c.pattern, facts))
    if name in fqns:
        return None  # a known name: the message is about something else (device, dtype)
    near = difflib.get_close_matches(name, fqns, n=1, cutoff=0.6)
    dym = f"; did you mean {near[0]}?" if near else ""
    summary = (f"The name {name} given to load_constants is not a constant of the package{dym} The package's "
               f"constants: {', '.join(fqns[:6])}" + (" ..." if len(fqns) > 6 else "") + ".")
    facts = facts_of(c, kind="constant_unknown", did_you_mean=near[0] if near else None)
    ev = _ev(c) + [f"constants_info_ in wrapper.cpp: {', '.join(fqns[:6])}"]
    return RootCause(named=True, level="culprit", kind="constant_unknown", summary=summary, pattern=c.pattern,
                     constant=name, expected=near[0] if near else None, got=name, evidence=ev, step=step,
                     fixes=select(c.pattern, facts))


# --- cpp_compile_error / native_abi -------------------------------------------------------------

def owner(path: str) -> str:
    """Whose file a compiler error is in (data/triage.yaml source_owners): generated, user, torch, system."""
    return next((o for rx, o in rules().source_owners.items() if re.search(rx, path)), "user")


def _excerpt(log: str | None, path: str, line_no: str) -> str | None:
    """The source line gcc/clang quote under the error (`  714 |     extern ...`)."""
    if not log:
        return None
    at = log.find(f"{path}:{line_no}:")
    m = re.compile(rf"^\s*{line_no} \| (.*)$", re.M).search(log, at) if at >= 0 else None
    return m.group(1).rstrip() if m else None


def compile_error(c: Classification, step: int, read: SourceReader | None = None,
                  log: str | None = None) -> RootCause:
    """The first compiler error, whose file it is (its line refines a generated wrapper's: the user's C-shim
    declaration) and the line with context (from the run's cache, else the compiler's own excerpt)."""
    f = c.fields
    path, line_no, err = f.get("source_file"), f.get("source_line"), f.get("compiler_error")
    who = owner(path) if path else None
    ev = _ev(c, 1)
    code = None
    if path and line_no and line_no.isdigit() and read is not None and (text := read(path)) is not None:
        lines, n = text.splitlines(), int(line_no)
        lo, hi = max(1, n - CONTEXT_LINES), min(len(lines), n + 1)
        ev += [f"{i}{'>' if i == n else ':'} {lines[i - 1].strip()}" for i in range(lo, hi + 1)]
        code = lines[n - 1] if n <= len(lines) else None
    elif path and line_no:
        code = _excerpt(log, path, line_no)
        if code:
            ev.append(f"{line_no}> {code.strip()}")
    if who == "generated_wrapper" and code:
        who = next((o for rx, o in rules().generated_line_owners.items() if re.search(rx, code)), who)
    context = f" The line: `{code.strip()[:200]}`." if code else ""
    name = path.rsplit("/", 1)[-1] if path else None
    whose = {"generated_wrapper": "the generated wrapper", "generated_kernel": "a generated kernel",
             "torch_header": "a header of torch", "system": "a system header or the toolchain",
             "user": "a file of yours (a custom C shim or extension)",
             "user_shim": "the generated wrapper, at your C-shim declaration (aot_inductor.custom_ops_to_c_shims)",
             }.get(who or "", "")
    if path:
        summary = f"The first compiler error is in {whose} ({name}:{line_no}): {err}.{context}"
    else:
        summary = f"The compiler failed: {err or f.get('missing_symbol') or f.get('failure') or c.summary}."
    # a header the include path lacks is the environment's, whoever's file includes it
    header = headers.facts(f"fatal error: {err}" if err else "\n".join(e.text for e in c.evidence))
    if header:
        summary += f" {header['missing_header']} is not on the include path" + (
            f": it comes with {header['header_package']}." if "header_package" in header else ".")
    elif who and who.startswith("generated"):
        summary += " Inductor wrote invalid C++ for this model: an Inductor codegen bug, not your C++."
    facts = facts_of(c, owner=who, kind="compile_error", error_kind="missing_header" if header else "code", **header)
    return RootCause(named=True, level="culprit" if path and line_no else "pattern", kind="compile_error",
                     summary=summary, pattern=c.pattern, source=f"{path}:{line_no}" if path else None,
                     evidence=ev, step=step, fixes=select(c.pattern, facts))


# --- out_of_memory ------------------------------------------------------------------------------

def oom(c: Classification, text: str, wrapper: str | None, contract: InputContract | None,
        step: int) -> RootCause | None:
    """The requested size matched to a package buffer, its shape symbol solved and tied to an input dim."""
    req = culprit_oom.requested(text)
    if req is None or not wrapper:
        return None
    failed = culprit_oom.failed_buffer(text)
    hits = culprit_oom.match(req, wrapper, failed[0] if failed else None) or culprit_oom.match(req, wrapper)
    if not hits:
        return None
    h = hits[0]
    shape = " x ".join(re.sub(r"(\d+)L\b", r"\1", s) for s in h.sizes)
    buf = f"buffer {h.buffer} ({shape} {h.dtype}, wrapper.cpp line {h.line})"
    ev = _ev(c, 1) + [f"{buf} = {h.bytes} bytes" + (f" with {h.symbol} = {h.value}" if h.symbol else "")]
    tied = culprit_oom.input_of(h.symbol, contract) if h.symbol else None
    if tied is None:
        summary = (f"The failed request ({req.text}) is {buf}" + (f", with {h.symbol} = {h.value}" if h.symbol else
                                                                  ", a static size: the model itself is too large "
                                                                  "for this device") + ".")
        facts = facts_of(c, kind="oom_buffer", within_range="static" if not h.symbol else None)
        return RootCause(named=True, level="culprit" if not h.symbol else "pattern", kind="oom_buffer",
                         summary=summary, pattern=c.pattern, evidence=ev, step=step, fixes=select(c.pattern, facts))
    idx, name, dim, lo, hi = tied
    rng = f"[{'' if lo is None else lo}, {'' if hi is None else hi}]"
    inside = (lo is None or h.value >= lo) and (hi is None or h.value <= hi)
    summary = (f"Input {idx} ({name}) has size {h.value} at dim {dim} ({h.symbol}), "
               + ("within" if inside else "outside") + f" its exported range {rng}: {buf} then needs "
               f"{req.text}, which the allocator refused.")
    facts = facts_of(c, kind="oom_input_dim", within_range="yes" if inside else "no", input_index=str(idx),
                     dim=str(dim), got=str(h.value), expected=rng)
    return RootCause(named=True, level="culprit", kind="oom_input_dim", summary=summary, pattern=c.pattern,
                     input_index=idx, input_name=name, dim=dim, got=str(h.value), expected=rng, evidence=ev,
                     step=step, fixes=select(c.pattern, facts))

