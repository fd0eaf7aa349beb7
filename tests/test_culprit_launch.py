"""A crashed kernel's indices tied to model inputs: the real H200 package of examples/ima_triton.py with the real
compute-sanitizer report, the real CUDA index_oob package, and the generated C++ of a real CPU build of
embedding_unchecked with its gdb frame. The captured values are the capture runner's own description
(probes/calls_runner.describe) of the ids the examples pass."""

from __future__ import annotations

import re
from pathlib import Path

import byfile
import pytest
from aoti_debug.kernels.kernel_code import kernels
from aoti_debug.package import kernel_sources
from aoti_debug.runs.calls import CallRecord, CallsReport, TensorInfo
from aoti_debug.runs.memcheck import parse_memcheck
from aoti_debug.triage.culprit_kernel import examine
from aoti_debug.triage.kernel_reads import indirect_reads

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "tests" / "fixtures" / "gpu_capture"
IMA_PKG = CAPTURE / "packages" / "ima_triton.base.pt2"
MEMCHECK = CAPTURE / "logs" / "ima_triton.memcheck.log"
BACKTRACE = ROOT / "tests" / "fixtures" / "culprit" / "embedding_unchecked.backtrace.log"
SOURCES = BACKTRACE.with_name("embedding_unchecked.sources")
PATTERN = "cuda_illegal_memory_access"


def example_constant(script: str, name: str) -> int:
    """A constant of an example script (the id it plants), read from its source."""
    m = re.search(rf"^{name}\s*=\s*([\d_*]+)\s*$", (ROOT / "examples" / script).read_text(), re.M)
    assert m, name
    base, _, power = m.group(1).replace("_", "").partition("**")  # 1_000_000_000 or 10**12
    return int(base) ** int(power) if power else int(base)


def described(*values: int) -> TensorInfo:
    """What the capture runner records of an int64 tensor holding these values."""
    torch = pytest.importorskip("torch")
    runner = byfile.load("server/aoti_debug/probes/calls_runner.py")
    return TensorInfo.model_validate(runner.describe(torch.tensor(list(values), dtype=torch.int64)))


def calls(*inputs: TensorInfo) -> CallsReport:
    rec = CallRecord(kind="call", index=1, status="died", inputs=list(inputs))
    return CallsReport(captured=True, calls=1, records=[rec], died_in=rec)


def ima_error():
    e = parse_memcheck(MEMCHECK.read_text(errors="replace")).errors[0]
    assert (e.kernel, e.line) == ("gather_rows_kernel", 24)
    return e


def floats(*shape: int) -> TensorInfo:
    return TensorInfo(dtype="float32", shape=list(shape), numel=1)


def test_a_user_triton_kernel_reading_past_its_table_is_traced_to_the_input_holding_the_id() -> None:
    e = ima_error()
    bad = example_constant("ima_triton.py", "BAD_ROW")
    v = examine(IMA_PKG, None, None, calls(floats(16, 8), described(1, bad, 12, 15)), e.kernel, e.file, e.line,
                PATTERN, 5)
    rc = v.cause
    assert rc is not None and rc.named and rc.level == "culprit", v
    assert (rc.kind, rc.input_index, rc.input_name, rc.kernel, rc.got) == (
        "index_value_out_of_range", 1, "arg3_1", "gather_rows_kernel", "1e+09")
    assert rc.source.endswith(".py:24") and "buf2 [16, 16] float32" in rc.summary and rc.expected == "0 <= index < 16"
    assert "index x n_cols (16) into 256 elements" in rc.summary  # row * n_cols: 16 rows of 16
    assert "tl.load(src_ptr + row * n_cols + col" in rc.evidence[0] and "at [1]" in rc.evidence[0]
    assert v.reads.launch == "gather_rows_kernel_0"  # the name the printer's kernel filter takes
    # the guide's fixes whose condition holds: the input's values, and the user kernel's missing bounds check
    assert rc.fixes[0].startswith("Validate or clamp input 1 (arg3_1) where it is produced: gather_rows_kernel")
    assert rc.fixes[1].startswith("Bounds-check the index in your kernel gather_rows_kernel (line 24)")
    assert not any("assert_indirect_indexing" in f for f in rc.fixes)  # that one is for generated kernels


def test_without_captured_values_the_crash_site_stays_a_hypothesis_that_names_the_index_input() -> None:
    e = ima_error()
    v = examine(IMA_PKG, None, None, None, e.kernel, e.file, e.line, PATTERN, 5)
    assert v.cause is None and v.index_unknown
    assert "input 1 (arg3_1): its values were not captured" in v.unknown[0]


def test_ids_inside_the_table_clear_the_input_and_leave_the_kernel_line_as_the_culprit() -> None:
    e = ima_error()
    v = examine(IMA_PKG, None, None, calls(floats(16, 8), described(1, 7, 12, 15)), e.kernel, e.file, e.line,
                PATTERN, 5)
    assert v.cause is None and not v.index_unknown
    assert v.in_range == ["input 1 (arg3_1) of call 1 holds 1..15, within the 16 indices (index x n_cols (16) into "
                          "256 elements) of buf2 [16, 16] float32 that gather_rows_kernel reads with it"]


def test_an_id_is_judged_in_rows_of_the_table_and_a_negative_one_only_past_one_wrap() -> None:
    e = ima_error()
    for ids, got in (((15, 2), None), ((16, 2), "16"), ((-16, 2), None), ((-17, 2), "-17")):
        v = examine(IMA_PKG, None, None, calls(floats(16, 8), described(*ids)), e.kernel, e.file, e.line, PATTERN, 5)
        assert (v.cause.got if v.cause else None) == got, ids


def test_a_generated_triton_kernel_names_the_embedding_read_and_its_table() -> None:
    src = kernel_sources.locate(CAPTURE / "packages" / "index_oob.base.pt2")
    (k,) = [k for k in kernels(src) if "embedding" in k.name]
    (rd,) = indirect_reads(k)
    assert (rd.pointer, rd.index_from, rd.line) == ("in_ptr2", ["in_ptr1"], 37)
    # the line numbering is the cache .py's, the file compute-sanitizer names
    py = next(f for f in (CAPTURE / "artifacts" / "index_oob.base" / "cache").rglob("*.py")
              if f"def {k.name}(" in f.read_text())
    assert py.read_text().splitlines()[36].strip() == rd.text
    v = examine(CAPTURE / "packages" / "index_oob.base.pt2", None, None,
                calls(floats(4, 8), described(3, 500, 7, 99)), k.name, py.name, 37, PATTERN, 4)
    assert v.cause and v.cause.input_index == 1 and "emb.weight [100, 16]" in v.cause.summary


def test_the_line_gdb_names_in_an_optimised_cpu_kernel_is_traced_to_the_load_whose_value_it_uses() -> None:
    # the generated C++ of the very build gdb ran (a rebuild on another host's vector ISA has other names and lines)
    frame = re.search(r"^#0 .* in (cpp_fused_\w+) \(\) at (\S+):(\d+)$", BACKTRACE.read_text(), re.M)
    kernel, file, line = frame.group(1), frame.group(2), int(frame.group(3))
    assert any(p.name == file.rsplit("/", 1)[-1] for p in SOURCES.rglob("*.kernel.cpp"))
    bad = example_constant("embedding_unchecked.py", "BAD_ID")
    v = examine(SOURCES, None, None, calls(floats(4, 16), described(3, bad, 7, 99)), kernel, file, line, "x", 6)
    assert v.reads.line == line and v.reads.reads[0].pointer == "in_ptr2" and "16L*tmp1" in v.reads.reads[0].text
    assert v.reads.reads[0].line != line  # gdb names the line that uses the loaded value, not the load
    assert v.cause and (v.cause.input_index, v.cause.got) == (1, "1e+12")
    assert "emb.weight [100, 16] float32" in v.cause.summary and "x 16 into 1600 elements" in v.cause.summary
    assert v.cause.expected == "0 <= index < 100"
