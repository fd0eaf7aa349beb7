"""Collect the printer's records into launches, in bounded memory: what parse_printer_output returns."""

from __future__ import annotations

import math
import re

from pydantic import BaseModel, Field

from aoti_debug.common.intparse import ints, to_int

# Launches kept in full: the first ones, the last ones (the crash is at the end) and pinned ones.
KEEP_FIRST, KEEP_LAST = 8, 24
# Level-3 kernels kept from the end; open (unmatched) launches kept at most.
TAIL_KERNELS, MAX_OPEN = 20, 1000
# Distinct (kernel, integer argument) pairs and distinct assert texts remembered; saved-file paths listed.
MAX_INT_ARGS, MAX_ASSERTS, MAX_SAVED = 4096, 32, 2000
# The printer's dtype line: float32/float16/bfloat16 by name, anything else by its caffe2 (C++) name.
DTYPES = {"long int": "int64", "long": "int64", "int": "int32", "short int": "int16", "short": "int16",
          "signed char": "int8", "unsigned char": "uint8", "unsigned short": "uint16", "unsigned int": "uint32",
          "unsigned long": "uint64", "bool": "bool", "double": "float64", "float": "float32",
          "c10::Half": "float16", "c10::BFloat16": "bfloat16"}
INT_DTYPES = {"int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64"}
Raw = tuple[int, bytes | None]  # (line, raw stats block or None when the record was cut short)


class TensorRecord(BaseModel):
    """One printed argument: a tensor's stats (its values are skipped) or a scalar's value."""

    arg: str = Field(description="Argument name as printed (arg3_1 = a model input, bufN = an intermediate)")
    line: int = Field(description="1-based line of the record's header in the output")
    dtype: str | None = Field(None, description="torch dtype name (the printer says 'long int' for int64)")
    shape: list[int] | None = None
    stride: list[int] | None = None
    device: str | None = None
    numel: int | None = None
    min: float | None = Field(None, description="None when absent (numel 0) or not finite (see nan/inf)")
    max: float | None = None
    mean: float | None = None
    nan: bool = Field(False, description="A NaN was seen (Mean/Min/Max printed nan)")
    inf: bool = Field(False, description="An infinity was seen in Min/Max/Mean")
    value: int | None = Field(None, description="Scalar arguments (Triton size args, xnumel): the printed value")
    complete: bool = Field(True, description="False: the record was cut short (the process died, or a print "
                           "failed after a sticky CUDA error)")


class LaunchArg(BaseModel):
    arg: str
    role: str = Field(description="input, output, inout (changed, produced earlier) or unknown; from the "
                      "before/after stats and where the buffer was first written, not from the source")
    before: TensorRecord | None = Field(None, description="Before the launch (garbage for pure outputs)")
    after: TensorRecord | None = None


class Launch(BaseModel):
    """One kernel launch at level 2: its arguments before and after."""

    kernel: str
    ordinal: int = Field(description="0-based position among the level-2 launches in the output")
    line: int
    call: int = Field(description="Which model call (1-based) it belongs to")
    args: list[LaunchArg] = Field(default_factory=list)
    scalars: dict[str, int] = Field(default_factory=dict, description="Scalar arguments as printed (s70: 0)")
    finished: bool = Field(description="An after_launch record with stats was printed")


class IndexAssert(BaseModel):
    """An 'index out of bounds: lo <= tmpN < bound' message, deduplicated by text."""

    text: str
    tmp_var: str | None = None
    lower: str | None = None
    bound: str | None = Field(None, description="As printed: 100 (Triton), 100L (CPU), ks0, 1 + ks0")
    bound_value: int | None = Field(None, description="The bound when it is a number")
    kernel_file: str | None = Field(None, description="Triton: the kernel .py and line in the compiling host's cache")
    first_line: int
    count: int = 1


class PrinterLog(BaseModel):
    """The printer's output read as records: model inputs, launches, the failing kernel, index asserts."""

    levels: list[int] = Field(default_factory=list, description="Printer levels seen: 1 saves, 2 values, 3 names")
    bytes: int = 0
    lines: int = 0
    records: int = Field(0, description="Level-2 records read one by one (tensors and scalars)")
    skipped_bytes: int = Field(0, description="Output only scanned, not read record by record: stretches with no "
                               "NaN/Inf and no kernel of interest, past the first launches (counts exclude them)")
    unparsed_lines: int = Field(0, description="Lines inside records that fit no record shape")
    unparsed_samples: list[str] = Field(default_factory=list)
    other_lines: int = Field(0, description="Non-empty lines outside records (the program's own output)")
    model_inputs: list[TensorRecord] = Field(default_factory=list, description="aoti_model_inputs of the last call")
    calls: int = Field(0, description="Model calls seen (each prints its inputs once)")
    launches: list[Launch] = Field(default_factory=list, description="Kept launches: first, last and pinned")
    launches_total: int = 0
    kernels: dict[str, int] = Field(default_factory=dict, description="Level-2 launches per kernel")
    level3_launches: int = 0
    last_kernels: list[str] = Field(default_factory=list, description="Level 3: the last kernels launched")
    unmatched: list[str] = Field(default_factory=list, description="Level 3: before_launch without after_launch")
    failing_kernel: str | None = Field(None, description="Level 3: the last before_launch without its "
                                       "after_launch (on CUDA only trustworthy with CUDA_LAUNCH_BLOCKING=1)")
    unfinished_launch: str | None = Field(None, description="Level 2: the last launch had no after_launch stats")
    raised_kernel: str | None = Field(None, description="CPU: 'Exception raised from <kernel> at <file>.cpp'")
    raised_at: str | None = None
    index_asserts: list[IndexAssert] = Field(default_factory=list)
    saved_tensors: list[str] = Field(default_factory=list, description="Level 1: 'Saved tensor to' paths")
    nan_producer: int | None = Field(None, description="Ordinal of the first launch writing NaN/Inf from clean "
                                     "inputs (in launches)")
    multikernel_silenced: bool = False


def dtype_name(printed: str) -> str:
    return DTYPES.get(printed, printed)


def _num(v: bytes | None) -> tuple[float | None, bool, bool]:
    if v is None:
        return None, False, False
    try:
        x = float(v)
    except ValueError:
        return None, False, False
    return (x if math.isfinite(x) else None), math.isnan(x), math.isinf(x)


def record(arg: str, raw: Raw) -> TensorRecord:
    """Parse a kept record's raw stats block."""
    line, stats = raw
    if stats is None:
        return TensorRecord(arg=arg, line=line, complete=False)
    kv = dict(ln.partition(b": ")[::2] for ln in stats.split(b"\n"))
    r = TensorRecord(arg=arg, line=line, dtype=dtype_name(kv.get(b"Dtype", b"").decode()) or None,
                     device=kv.get(b"Device", b"").decode() or None)
    for key, attr in ((b"Size", "shape"), (b"Stride", "stride")):
        if key in kv:
            setattr(r, attr, ints(re.findall(rb"-?\d+", kv[key])))
    if b"Number of elements" in kv and kv[b"Number of elements"].strip().isdigit():
        r.numel = to_int(kv[b"Number of elements"])
    for key, attr in ((b"Min value", "min"), (b"Max value", "max"), (b"Mean value", "mean")):
        x, nan, inf = _num(kv.get(key))
        setattr(r, attr, x)
        r.nan, r.inf = r.nan or nan, r.inf or inf
    r.complete = b"Requires grad" in kv
    return r


def bad(raw: Raw | None) -> bool:
    """NaN or Inf in a stats block (the keys never contain 'nan' or 'inf')."""
    return raw is not None and raw[1] is not None and (b"nan" in raw[1] or b"inf" in raw[1])


def is_int(raw: Raw | None) -> bool:
    if raw is None or raw[1] is None:
        return False
    s = raw[1]
    i = s.find(b"Dtype: ")
    return i >= 0 and dtype_name(s[i + 7:s.find(b"\n", i)].decode()) in INT_DTYPES


class _Launch:
    __slots__ = ("kernel", "ordinal", "line", "call", "before", "after", "scalars", "roles")

    def __init__(self, kernel: str, ordinal: int, line: int, call: int):
        self.kernel, self.ordinal, self.line, self.call = kernel, ordinal, line, call
        self.before: dict[str, Raw] = {}
        self.after: dict[str, Raw] = {}
        self.scalars: dict[str, int] = {}
        self.roles: dict[str, str] = {}
