"""Compare actual inputs with a model's InputContract, in the order the generated checks run."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from aoti_debug.package.contract import InputContract, InputSpec
from aoti_debug.package.torch_facts import enums
from aoti_debug.parity.rules import Mismatch, make
from aoti_debug.runs.probe import ActualInput


class InputComparison(BaseModel):
    """One input position: what the package expects and what it gets."""

    index: int
    name: str | None = Field(None, description="Graph input name from the package")
    expected: str | None = Field(None, description="dtype[sizes] stride [...] device, as the package states it")
    got: str | None = Field(None, description="The actual tensor, same format")
    source: str | None = Field(None, description="Where the actual tensor sits in the saved object")
    status: Literal["ok", "mismatch", "missing", "extra", "unchecked"]
    kinds: list[str] = Field(default_factory=list, description="Mismatch kinds found for this input")


def _eval(expr: str, symbols: dict[str, int]) -> int | None:
    """Evaluate a product/sum of ints and bound symbols ('8*s27', 's0 + 1'); None if anything is unknown."""
    if not re.fullmatch(r"[\w\s*+()-]+", expr):
        return None
    tokens = re.findall(r"[A-Za-z_]\w*", expr)
    if any(t not in symbols for t in tokens):
        return None
    code = re.sub(r"[A-Za-z_]\w*", lambda m: str(symbols[m.group(0)]), expr)
    # No '**' (9**9**9 never ends) and short numbers only: the sizes AOTI writes are products of a few symbols.
    if not re.fullmatch(r"[\d\s*+()-]+", code) or "**" in code or len(code) > 400 or re.search(r"\d{41}", code):
        return None
    try:
        return int(eval(code, {"__builtins__": {}}))  # noqa: S307 - digits and + - * ( ) only
    except (SyntaxError, ZeroDivisionError, ValueError, OverflowError, MemoryError, RecursionError):
        return None


def _device_type(device: str) -> str:
    return device.split(":", 1)[0].strip().lower()


def _one(spec: InputSpec, a: ActualInput, checked: bool, symbols: dict[str, tuple[int, int, int]],
         device_key: str | None, size_asserts: bool) -> list[Mismatch]:
    """Mismatches of one input, in check order: dtype, sizes by dim, strides by dim, device."""
    ids = {"index": spec.index, "name": spec.name}
    out: list[Mismatch] = []
    table = enums()
    got_dtype = table.dtype_name(a.dtype) or a.dtype
    if spec.dtype and got_dtype != spec.dtype:
        exp, got = table.dtypes.get(spec.dtype), table.dtypes.get(got_dtype)
        out.append(make("dtype", f"input {spec.index} ({spec.name}) is {got_dtype}, the package expects {spec.dtype}",
                        checked=checked, expected=spec.dtype, got=got_dtype, expected_code=exp and exp.code,
                        expected_aten=exp and exp.aten, got_code=got and got.code, **ids))
    rank, shape, strides = spec.rank, a.shape, a.strides()
    if rank is not None and (len(shape) < rank or (spec.rank_exact and len(shape) != rank)):
        m = make("rank", f"input {spec.index} ({spec.name}) has {len(shape)} dims, the package expects {rank}",
                 expected=rank, got=len(shape), **ids)
        if len(shape) > rank and size_asserts and checked:
            m.with_check = f"expected ndim {rank} but got {len(shape)}"
        out.append(m)
        if len(shape) < rank:
            return out
    for d in spec.sizes:
        if d.dim >= len(shape):
            break
        n = shape[d.dim]
        dim_ids = {**ids, "dim": d.dim, "got": n}
        if d.value is not None and n != d.value:
            out.append(make("static_dim", f"input {spec.index} ({spec.name}) dim {d.dim} is {n}, exported as {d.value}",
                            checked=checked, expected=d.value, **dim_ids))
        if d.min is not None and n < d.min:
            out.append(make("dim_below_min", f"input {spec.index} ({spec.name}) dim {d.dim} is {n}, below the exported "
                            f"min {d.min}", checked=checked, expected=d.min, **dim_ids))
        if d.max is not None and n > d.max:
            out.append(make("dim_above_max", f"input {spec.index} ({spec.name}) dim {d.dim} is {n}, above the exported "
                            f"max {d.max}", checked=checked, expected=d.max, **dim_ids))
        if d.symbol:
            first = symbols.setdefault(d.symbol, (spec.index, d.dim, n))
            if first[2] != n:
                how = " (symbol inferred: this torch's code names none here)" if d.symbol_inferred else ""
                m = make("shared_dim", f"input {spec.index} ({spec.name}) dim {d.dim} is {n} but {d.symbol} is "
                         f"{first[2]} (input {first[0]} dim {first[1]}){how}", symbol=d.symbol, expected=first[2],
                         **dim_ids)
                want = spec.strides[d.dim] if d.dim < len(spec.strides) else None
                want = want if isinstance(want, int) or want is None else _eval(want, {s: v[2] for s, v in
                                                                                       symbols.items()})
                if size_asserts and checked and want is not None:  # run_impl's assert_size_stride (2.12+)
                    m.with_check = f"expected size {n}=={first[2]}, stride {strides[d.dim]}=={want} at dim={d.dim}"
                out.append(m)
    values = {s: v[2] for s, v in symbols.items()}
    for dim, want in enumerate(spec.strides[:len(strides)]):
        value = want if isinstance(want, int) else (_eval(want, values) if want else None)
        if value is None or strides[dim] == value:
            continue
        kind = "stride_size_one" if shape[dim] <= 1 else "stride"
        out.append(make(kind, f"input {spec.index} ({spec.name}) stride {dim} is {strides[dim]}, exported as {value}"
                        + ("" if isinstance(want, int) else f" ({want})"),
                        checked=checked and isinstance(want, int), dim=dim, expected=value, got=strides[dim], **ids))
    want_dev = spec.device_type or device_key
    got_dev = _device_type(a.device)
    if want_dev and got_dev != want_dev:
        codes = table.device_types
        out.append(make("device_type", f"input {spec.index} ({spec.name}) is on {a.device}, the package expects "
                        f"{want_dev}", checked=checked and spec.device_type is not None, expected=want_dev,
                        got=a.device, expected_code=codes.get(want_dev), got_code=codes.get(got_dev), **ids))
    return out


def compare_inputs(contract: InputContract, actual: list[ActualInput]) -> tuple[list[InputComparison], list[Mismatch]]:
    """Per-input comparisons and mismatches; the first failure AOTI_RUNTIME_CHECK_INPUTS=1 shows is marked."""
    checked = contract.checks in ("runtime_env", "always")
    expected_n = contract.num_inputs if contract.num_inputs is not None else len(contract.inputs)
    mismatches: list[Mismatch] = []
    if len(actual) != expected_n:
        mismatches.append(make("input_count", f"{len(actual)} tensors given, the package takes {expected_n}",
                               checked=True, expected=expected_n, got=len(actual)))
    rows: list[InputComparison] = []
    symbols: dict[str, tuple[int, int, int]] = {}
    for i in range(max(expected_n, len(actual))):
        spec = contract.inputs[i] if i < len(contract.inputs) else None
        a = actual[i] if i < len(actual) else None
        row = InputComparison(index=i, name=spec.name if spec else None, expected=spec.describe() if spec else None,
                              got=a.describe() if a else None, source=a.path if a else None, status="unchecked")
        if spec is None or a is None:
            row.status = "extra" if spec is None else "missing"
        else:
            found = _one(spec, a, checked and spec.checked, symbols, contract.device_key, contract.size_asserts)
            row.kinds = [m.kind for m in found]
            row.status = "mismatch" if found else ("ok" if spec.checked or spec.dtype else "unchecked")
            mismatches += found
        rows.append(row)
    # check_input_<i> runs for every input before run_impl's size asserts (rank, shared dims) run.
    late = ("rank", "shared_dim")
    first = next((m for m in mismatches if m.with_check and m.kind not in late), None) or next(
        (m for m in mismatches if m.with_check), None)
    if first is not None:
        first.first_check_failure = True
    return rows, mismatches
