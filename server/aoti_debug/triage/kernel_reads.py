"""A crashed kernel's reads through loaded indices: which pointer each load addresses with values loaded from
another, at the faulting line when one is known, and the launch's tensors (model inputs, constants, buffers)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from aoti_debug.kernels.kernel_code import CPP_DEF_RX, Kernel, arg_name, find_calls, kernels, size_bindings, split_args
from aoti_debug.kernels.kernel_graph import ALIAS_RX
from aoti_debug.package.contract import InputContract
from aoti_debug.package.kernel_sources import Source, Sources
from aoti_debug.triage.culprit_oom import _eval, allocations

SIGNATURE_RX = re.compile(r"'signature':\s*\{([^}]*)\}")
SIG_ITEM_RX = re.compile(r"'(\w+)':\s*'([^']*)'")
LAUNCH_NAME_RX = re.compile(r"'kernel_name':\s*'(\w+)'")
CONST_BIND_RX = re.compile(r"\bauto&\s+(\w+)\s*=\s*constants_->at\((\d+)\);")
ASSIGN_RX = {"triton": re.compile(r"^\s*(\w+)\s*=\s*(.+?)\s*$"),
             "cpp": re.compile(r"^\s*(?:const\s+)?(?:auto|[\w:<>]+)\s+(\w+)\s*=\s*(.+?);\s*$")}
TRITON_ACCESS_RX = re.compile(r"\btl\.(?:load|store|atomic_\w+)\(")
IDENT_RX = re.compile(r"\b[A-Za-z_]\w*\b")
# Triton signature types and C++ element types -> torch dtype names.
DTYPES = {"i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "i1": "bool",
          "fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64",
          "int64_t": "int64", "int32_t": "int32", "int16_t": "int16", "int8_t": "int8", "uint8_t": "uint8",
          "bool": "bool", "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16"}


@dataclass
class IndirectRead:
    """A load or store whose address holds values loaded from other pointers (an index read from memory)."""

    line: int  # in the kernel's own file (the .py compute-sanitizer names, the .kernel.cpp gdb names)
    text: str
    pointer: str  # the parameter addressed
    index_from: list[str]  # the pointer parameters whose loaded values are in the address
    scale: str | None = None  # the factor the loaded index is multiplied by in the address (16L, n_cols)


@dataclass
class LaunchTensor:
    param: str
    arg: str
    role: str  # input, constant, buffer, other
    dtype: str | None = None
    shape: list[int] | None = None
    input_index: int | None = None
    fqn: str | None = None

    @property
    def numel(self) -> int | None:
        return math.prod(self.shape) if self.shape is not None else None

    def describe(self) -> str:
        name = self.fqn or self.arg
        shape = f" {self.shape}" if self.shape is not None else ""
        return f"{name}{shape}" + (f" {self.dtype}" if self.dtype else "")


@dataclass
class KernelReads:
    kernel: str
    launch: str  # the name run_impl launches it by (a user Triton kernel gets a _0 suffix)
    source: str
    line: int | None  # the faulting line, when it was found in this source
    reads: list[IndirectRead] = field(default_factory=list)
    args: dict[str, LaunchTensor] = field(default_factory=dict)


def _pointer_types(k: Kernel) -> dict[str, str | None]:
    """Pointer parameter -> element dtype (None: unknown), from the Triton signature or the C++ declaration."""
    if k.kind == "triton":
        sig = SIGNATURE_RX.search(k.source.text, k.start, k.end)
        if sig:
            return {n: DTYPES.get(t[1:]) for n, t in SIG_ITEM_RX.findall(sig.group(1)) if t.startswith("*")}
        return {p: None for p in k.params if "ptr" in p}
    m = next((m for m in CPP_DEF_RX.finditer(k.source.text) if m.group(1) == k.name), None)
    out: dict[str, str | None] = {}
    for item in split_args(m.group(2)) if m else []:
        if "*" in item and (n := re.search(r"(\w+)\s*$", item)):
            base = re.sub(r"\bconst\b|\*|__restrict__", " ", item[:n.start()]).split()
            out[n.group(1)] = DTYPES.get(base[-1]) if base else None
    return out


def _address(line: str, kind: str, pointers: dict[str, str | None]) -> list[tuple[str, str]]:
    """(pointer, address expression) of each memory access on a line."""
    out = []
    if kind == "triton":
        for m in TRITON_ACCESS_RX.finditer(line):
            args = split_args(_until_close(line, m.end()))
            ptr = next((p for p in IDENT_RX.findall(args[0]) if p in pointers), None) if args else None
            if ptr:
                out.append((ptr, args[0]))
        return out
    for p in pointers:
        for m in re.finditer(rf"\b{p}\s*(\[|\+)", line):
            expr = _until_close(line, m.end()) if m.group(1) == "[" else split_args(_until_close(line, m.end()))[0]
            out.append((p, expr))
    return out


def _scale(expr: str, loaded: list[str], params: set[str]) -> str | None:
    """The factor on the loaded index in an address (`x0 + 16*tmp9`, `row * n_cols + col`): a literal or a scalar
    parameter; None when there is none or more than one name holds loaded values."""
    if len(loaded) != 1:
        return None
    n = re.escape(loaded[0])
    m = re.search(rf"(\w+)\s*\*\s*{n}\b", expr) or re.search(rf"\b{n}\s*\*\s*(\w+)", expr)
    if m and (re.fullmatch(r"\d+L?", m.group(1)) or m.group(1) in params):
        return m.group(1)
    return None


def _until_close(text: str, start: int) -> str:
    """The text from start to the bracket that closes the one just opened before it."""
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(text[i], 0)
        i += 1
    return text[start:i - 1] if depth == 0 else text[start:]


def _loaded_from(names: list[str], defs: dict[str, str], kind: str, pointers: dict[str, str | None],
                 params: set[str]) -> list[str]:
    """Pointer parameters whose loaded values the names derive from, following assignments back."""
    found: list[str] = []
    todo, seen = list(names), set()
    while todo:
        n = todo.pop()
        if n in seen or n not in defs:
            continue
        seen.add(n)
        rhs = defs[n]
        for ptr, expr in _address(rhs, kind, pointers):
            if ptr not in found:
                found.append(ptr)
            todo += IDENT_RX.findall(expr)
        todo += [x for x in IDENT_RX.findall(rhs) if x not in params]
    return found


def indirect_reads(k: Kernel, line: int | None = None) -> list[IndirectRead]:
    """Accesses addressed by loaded values; with `line` (of the kernel's own file), those on it or, where an
    optimised build reports the use of a loaded value, the accesses whose results that line uses."""
    pointers = _pointer_types(k)
    params = set(k.params)
    here = k.source.text.count("\n", 0, k.start) + 1
    # a Triton kernel embedded in the wrapper: its .py's line 1 is the line its text starts on
    shift = here - 1 if k.kind == "triton" and k.source.kind == "wrapper" else 0
    defs: dict[str, str] = {}
    by_var: dict[str, list[IndirectRead]] = {}
    out: list[IndirectRead] = []
    for raw in k.body.splitlines():
        own = here - shift
        here += 1
        text = raw.strip()
        found = []
        for ptr, expr in _address(text, k.kind, pointers):
            names = [x for x in IDENT_RX.findall(expr) if x not in params]
            src = [p for p in _loaded_from(names, defs, k.kind, pointers, params) if p != ptr]
            if src:
                derived = [n for n in dict.fromkeys(names) if _loaded_from([n], defs, k.kind, pointers, params)]
                found.append(IndirectRead(own, text, ptr, src, _scale(expr, derived, params)))
        if line is None or own == line:
            out += found
        if line is not None and own == line and not found:
            used, seen = [x for x in IDENT_RX.findall(text) if x not in params], set()
            while used:
                n = used.pop()
                if n not in seen:
                    seen.add(n)
                    out += [r for r in by_var.get(n, []) if r not in out]
                    used += IDENT_RX.findall(defs.get(n, "")) if n not in by_var else []
        if m := ASSIGN_RX[k.kind].match(raw):
            defs[m.group(1)] = m.group(2)
            by_var[m.group(1)] = found
    return out


def find_kernel(sources: Sources, name: str, file: str | None = None) -> Kernel | None:
    """The kernel a crash names: its definition in the file the report names when the package has that file."""
    found = [k for k in kernels(sources) if k.name == name]
    base = file.rsplit("/", 1)[-1] if file else None
    named = [k for k in found if base and k.source.path.endswith(base)]
    return (named or found or [None])[0]


def _own_file(k: Kernel, file: str | None) -> bool:
    """Whether a reported file:line is in the kernel's own numbering: its file, or the cache .py of a Triton kernel
    the wrapper embeds line for line."""
    return file is None or k.source.path.endswith(file.rsplit("/", 1)[-1]) or (
        k.kind == "triton" and k.source.kind == "wrapper" and file.endswith(".py"))


def _shapes(wrapper: str, contract: InputContract | None, actual: dict[int, list[int]]) -> dict[str, LaunchTensor]:
    """Every tensor run_impl can pass, by name: model inputs (their actual shapes), constants, buffers."""
    out: dict[str, LaunchTensor] = {}
    env: dict[str, int] = {}
    for spec in contract.inputs if contract else []:
        out[spec.name] = LaunchTensor("", spec.name, "input", spec.dtype, actual.get(spec.index), spec.index)
    by_name = {s.name: s.index for s in contract.inputs} if contract else {}
    for sym, (name, dim) in size_bindings(wrapper).items():
        shape = actual.get(by_name.get(name, -1))
        if shape is not None and dim < len(shape):
            env[sym] = shape[dim]
    consts = {c.index: c for c in contract.constants} if contract else {}
    for name, idx in CONST_BIND_RX.findall(wrapper):
        c = consts.get(int(idx))
        if c is not None:
            out[name] = LaunchTensor("", name, "constant", c.dtype, list(c.shape) or None, fqn=c.original_fqn or c.name)
    for buf, sizes, dtype, _ in allocations(wrapper):
        dims = [_eval(s, env) for s in sizes]
        out[buf] = LaunchTensor("", buf, "buffer", dtype, None if None in dims else dims)
    for new, old in ALIAS_RX.findall(wrapper):
        if old in out:
            t = out[old]
            out[new] = LaunchTensor("", new, t.role, t.dtype, t.shape, t.input_index, t.fqn)
    return out


def read(sources: Sources, contract: InputContract | None, kernel: str, file: str | None, line: int | None,
         actual: dict[int, list[int]]) -> KernelReads | None:
    """The crashed kernel's indirect reads and its last launch's tensors; None when the package lacks either."""
    k = find_kernel(sources, kernel, file)
    wrapper: Source | None = next((w for w in sources.wrappers if "::run_impl(" in w.text), None)
    if k is None or wrapper is None:
        return None
    launch = (LAUNCH_NAME_RX.search(k.body) or [None, kernel])[1] if k.kind == "triton" else kernel
    calls = find_calls(wrapper, launch)
    if not calls:
        return None
    at_line = line if line and _own_file(k, file) else None
    reads = indirect_reads(k, at_line) if at_line else []
    out = KernelReads(kernel, launch, k.source.path, at_line if reads else None, reads or indirect_reads(k))
    known = _shapes(wrapper.text, contract, actual)
    for param, expr in zip(k.params, calls[-1].args, strict=False):
        name = arg_name(expr)
        t = known.get(name)
        out.args[param] = (LaunchTensor(param, name, t.role, t.dtype, t.shape, t.input_index, t.fqn) if t
                           else LaunchTensor(param, name, "other"))
    return out
