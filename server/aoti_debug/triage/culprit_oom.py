"""Out of memory at the culprit: the size that failed, matched to a buffer of the package (its wrapper.cpp
allocation, a product of shape symbols) and, through the symbol, to the input dimension and its exported range."""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass

from aoti_debug.package.contract import InputContract

# aoti_torch_empty_strided(rank, sizes, strides, dtype, device type, device index, &bufN_handle)
ALLOC_RX = re.compile(r"aoti_torch_empty_strided\(\s*(\d+),\s*(\w+),\s*\w+,\s*(?:cached_torch_dtype_|"
                      r"aoti_torch_dtype_)(\w+)\(?\)?,.*?&(\w+?)_handle\)")
ARRAY_RX = re.compile(r"\bint64_t\s+(int_array_\d+)\[\]\s*=\s*\{([^}]*)\}")
GIB_RX = re.compile(r"Tried to allocate ([\d.]+) ([KMGT]?i?B)")
BYTES_RX = re.compile(r"you tried to allocate (\d+) bytes")
FAILED_RX = re.compile(r"aoti_torch_empty_strided\(.*&(\w+?)_handle\) API call failed at (\S+), line (\d+)")
UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "KB": 10**3, "MB": 10**6, "GB": 10**9}
ITEMSIZE = {"float32": 4, "float": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "int32": 4,
            "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8}
OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


@dataclass
class Requested:
    """The size that failed: exact bytes (host) or the allocator's rounded text (GPU)."""

    bytes: int
    text: str
    exact: bool


@dataclass
class OomMatch:
    buffer: str
    sizes: list[str]
    dtype: str
    symbol: str | None
    value: int | None
    bytes: int
    line: int | None


def requested(text: str) -> Requested | None:
    """The last failed request in the log."""
    exact = BYTES_RX.findall(text)
    if exact:
        n = int(exact[-1])
        return Requested(n, f"{n} bytes ({n / 2**30:.2f} GiB)", True)
    rounded = GIB_RX.findall(text)
    if rounded:
        value, unit = rounded[-1]
        return Requested(int(float(value) * UNITS.get(unit, 1)), f"{value} {unit}", False)
    return None


def _eval(expr: str, env: dict[str, int]) -> int | None:
    """An integer size expression of wrapper.cpp (`s77`, `1024L`, `2L*s0`), with the symbols in env."""
    try:
        tree = ast.parse(re.sub(r"\b(\d+)L\b", r"\1", expr.strip()), mode="eval")
    except SyntaxError:
        return None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name) and n.id in env:
            return env[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in OPS:
            return OPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        raise ValueError(ast.dump(n))

    try:
        return ev(tree)
    except (ValueError, ZeroDivisionError):
        return None


def _symbols(sizes: list[str]) -> set[str]:
    return {s for item in sizes for s in re.findall(r"\b[a-z]+\d+\b", item) if not re.fullmatch(r"\d+L?", s)}


def _bytes(sizes: list[str], itemsize: int, env: dict[str, int]) -> int | None:
    total = itemsize
    for item in sizes:
        v = _eval(item, env)
        if v is None:
            return None
        total *= v
    return total


def _close(got: int, req: Requested) -> bool:
    if req.exact:
        return got == req.bytes
    value, unit = GIB_RX.search(f"Tried to allocate {req.text}").groups()
    return f"{got / UNITS.get(unit, 1):.2f}" == value


def allocations(wrapper: str) -> list[tuple[str, list[str], str, int]]:
    """(buffer, size items, dtype, line) of every empty_strided allocation in the wrapper."""
    arrays = {m.group(1): [x.strip() for x in m.group(2).split(",") if x.strip()] for m in ARRAY_RX.finditer(wrapper)}
    out = []
    for m in ALLOC_RX.finditer(wrapper):
        sizes = arrays.get(m.group(2))
        if sizes is not None and len(sizes) == int(m.group(1)):
            out.append((m.group(4), sizes, m.group(3), wrapper.count("\n", 0, m.start()) + 1))
    return out


def match(req: Requested, wrapper: str, failed_buffer: str | None = None) -> list[OomMatch]:
    """Buffers whose size can equal the request: static ones that do, and one-symbol ones solved for it."""
    found = []
    for buf, sizes, dtype, line in allocations(wrapper):
        if failed_buffer and buf != failed_buffer:
            continue
        item = ITEMSIZE.get(dtype.lower())
        if item is None:
            continue
        syms = _symbols(sizes)
        if not syms:
            b = _bytes(sizes, item, {})
            if b is not None and _close(b, req):
                found.append(OomMatch(buf, sizes, dtype, None, None, b, line))
            continue
        if len(syms) != 1:
            continue
        sym = syms.pop()
        unit = _bytes(sizes, item, {sym: 1})
        if not unit or (_bytes(sizes, item, {sym: 2}) or 0) != 2 * unit:
            continue  # only sizes linear in the symbol are solved
        value = round(req.bytes / unit)
        if value > 0 and _close(value * unit, req):
            found.append(OomMatch(buf, sizes, dtype, sym, value, value * unit, line))
    return found


def failed_buffer(text: str) -> tuple[str, str, int] | None:
    """(buffer, wrapper path, line) from the `aoti_torch_empty_strided(...) API call failed` line."""
    hits = FAILED_RX.findall(text)
    return (hits[-1][0], hits[-1][1], int(hits[-1][2])) if hits else None


def input_of(symbol: str, contract: InputContract | None) -> tuple[int, str, int, int | None, int | None] | None:
    """(input index, name, dim, min, max) of the first input dimension bound to the symbol."""
    for spec in contract.inputs if contract else []:
        for d in spec.sizes:
            if d.symbol == symbol:
                return spec.index, spec.name, d.dim, d.min, d.max
    return None
