"""Read generated kernels and their call sites: Triton (embedded in wrapper.cpp or a .py) and CPU C++ kernels."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoti_debug.common.intparse import to_int
from aoti_debug.package.kernel_sources import Source, Sources

TRITON_EMBED_RX = re.compile(r"async_compile\.triton\(\s*'(\w+)'\s*,\s*'''")
TRITON_DEF_RX = re.compile(r"^\s*def (\w+)\(([^)]*)\)\s*:", re.M)
CPP_DEF_RX = re.compile(r'extern\s+"C"\s+(?:\w+\s+)*void\s+(\w+)\s*\(([^)]*)\)\s*\{')
ASSIGN_RX = {"triton": re.compile(r"^\s*(tmp\d+) = (.+?)\s*$", re.M),
             "cpp": re.compile(r"^\s*auto (tmp\d+) = (.+?);\s*$", re.M)}
PTR_RX = re.compile(r"\b(in_out_ptr\d+|in_ptr\d+|out_ptr\d+)\b")
TMP_RX = re.compile(r"\btmp\d+\b")
KS_RX = re.compile(r"\bks\d+\b")
NODES_RX = re.compile(r"//\s*Topologically Sorted Source Nodes:\s*\[(.*?)\](?:,\s*Original ATen:\s*\[(.*?)\])?")
BIND_RX = re.compile(r"\bint64_t\s+(\w+)\s*=\s*(\w+)_size\[(\d+)\];")
CALL_END = re.compile(r"\b(?:call_\w+|aoti_torch_\w+|cpp_fused_\w+)\(")


@dataclass
class Kernel:
    """One generated kernel: its name, parameters (constexpr ones dropped) and body span in a source."""

    name: str
    kind: str  # triton, cpp
    params: list[str]
    source: Source
    start: int  # offset of the body in source.text
    end: int
    first_line: int  # line of async_compile.triton( / the .py's first line / extern "C" ...

    @property
    def body(self) -> str:
        return self.source.text[self.start:self.end]

    def line_of(self, offset: int) -> int:
        return self.source.text.count("\n", 0, offset) + 1


@dataclass
class Call:
    """A launch of a kernel in run_impl."""

    line: int
    text: str
    args: list[str]
    source_nodes: list[str] = field(default_factory=list)
    aten_ops: list[str] = field(default_factory=list)


def _params(raw: str, kind: str) -> list[str]:
    out = []
    for item in split_args(raw):
        if kind == "triton":
            if "constexpr" in item:
                continue
            out.append(item.split(":")[0].strip())
        elif m := re.search(r"(\w+)\s*$", item):
            out.append(m.group(1))
    return out


def kernels(sources: Sources) -> list[Kernel]:
    """Every kernel defined in the sources (Triton embedded in wrappers, Triton .py files, C++ kernels)."""
    found: list[Kernel] = []
    for src in sources.wrappers:
        for m in TRITON_EMBED_RX.finditer(src.text):
            end = src.text.find("'''", m.end())
            end = len(src.text) if end < 0 else end
            d = TRITON_DEF_RX.search(src.text, m.end(), end)
            params = _params(d.group(2), "triton") if d else []
            line = src.text.count("\n", 0, m.start()) + 1
            found.append(Kernel(m.group(1), "triton", params, src, m.end(), end, line))
    for src in sources.triton_pys:
        d = TRITON_DEF_RX.search(src.text)
        if d:
            found.append(Kernel(d.group(1), "triton", _params(d.group(2), "triton"), src, 0, len(src.text), 1))
    for src in [*sources.kernel_cpps, *sources.wrappers]:
        defs = list(CPP_DEF_RX.finditer(src.text))
        for i, m in enumerate(defs):
            end = defs[i + 1].start() if i + 1 < len(defs) else len(src.text)
            found.append(Kernel(m.group(1), "cpp", _params(m.group(2), "cpp"), src, m.end(), end,
                                src.text.count("\n", 0, m.start()) + 1))
    return found


def split_args(raw: str) -> list[str]:
    """Top-level comma split (parentheses, brackets and braces nest)."""
    out, depth, cur = [], 0, []
    for ch in raw:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def find_calls(wrapper: Source, kernel: str) -> list[Call]:
    """Statements launching kernel: call_<triton kernel>(...); or <cpp kernel>(...); with the Source Nodes comment."""
    rx = re.compile(rf"^[ \t]*(?:call_)?{re.escape(kernel)}\(", re.M)
    text, calls = wrapper.text, []
    for m in rx.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        line = text.count("\n", 0, m.start()) + 1
        call = Call(line, text[m.start():i + 1].strip(), split_args(text[m.end():i - 1]))
        before = text[:m.start()].splitlines()[-8:]
        for ln in reversed(before):
            if n := NODES_RX.search(ln):
                call.source_nodes = [x.strip() for x in n.group(1).split(",") if x.strip()]
                call.aten_ops = [x.strip() for x in (n.group(2) or "").split(",") if x.strip()]
                break
            if CALL_END.search(ln):  # the previous launch: its comment is not ours
                break
        calls.append(call)
    return calls


def arg_name(expr: str) -> str:
    """The tensor or symbol an argument expression names: (const int64_t*)(arg2_1.data_ptr()) -> arg2_1."""
    if m := re.search(r"\b(\w+)\.(?:data_ptr|get)\(\)", expr):
        return m.group(1)
    if m := re.fullmatch(r"\s*(-?\d+)L?\s*", expr):
        return m.group(1)
    if m := re.search(r"reinterpret_tensor_wrapper\((\w+)", expr):
        return m.group(1)
    return expr.strip()


def size_bindings(wrapper_text: str) -> dict[str, tuple[str, int]]:
    """Size symbol -> (input name, dimension), from 'int64_t s70 = arg1_1_size[0];'."""
    out: dict[str, tuple[str, int]] = {}
    for sym, name, dim in BIND_RX.findall(wrapper_text):
        if (d := to_int(dim)) is not None:
            out.setdefault(sym, (name, d))
    return out


@dataclass
class Chain:
    """Where an index temporary comes from inside the kernel, and what it indexes."""

    tmps: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    size_args: list[str] = field(default_factory=list)
    clamped: bool = False
    indexed: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def trace_index(k: Kernel, tmp: str, assert_offset: int) -> Chain:
    """Follow tmpN's definitions back to the pointers it loads; find the load it indexes after the assert."""
    body, rx = k.source.text, ASSIGN_RX[k.kind]
    defs: dict[str, str] = {}
    for m in rx.finditer(body, k.start, assert_offset):
        defs[m.group(1)] = m.group(2)  # the nearest definition before the assert wins
    chain, todo, seen = Chain(), [tmp], set()
    while todo:
        t = todo.pop()
        if t in seen or t not in defs:
            continue
        seen.add(t)
        rhs = defs[t]
        chain.lines.append(f"{t} = {rhs}")
        todo += TMP_RX.findall(rhs)
        chain.sources += [p for p in PTR_RX.findall(rhs) if p not in chain.sources]
        chain.size_args += [s for s in KS_RX.findall(rhs) if s not in chain.size_args]
        chain.clamped = chain.clamped or bool(re.search(r"\b(?:minimum|min_propagate_nan)\(", rhs))
    chain.clamped = chain.clamped and bool(chain.size_args)  # clamped to a size: min(idx, ks - 1)
    chain.tmps = sorted(seen, key=lambda s: (len(s), s))  # tmpN by N, without int() of a crafted N
    chain.lines.reverse()
    tail = body[assert_offset:k.end]
    for ln in tail.splitlines()[1:]:
        ptrs = PTR_RX.findall(ln)
        if ptrs and any(t in TMP_RX.findall(ln) for t in seen) and ("load" in ln or "[" in ln):
            chain.indexed = [p for p in dict.fromkeys(ptrs) if not p.startswith("out_ptr")]
            break
    return chain
