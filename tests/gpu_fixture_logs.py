"""Golden fixtures cut from GPU runs: the H200 capture (tests/fixtures/gpu_capture).

Written by `python tests/make_fixture_logs.py`; the capture's header is kept under a `# source:` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from logtrim import TRIM_NOTE, trim

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "fixtures" / "logs"
GPU_LOGS = ROOT / "tests" / "fixtures" / "gpu_capture" / "logs"


@dataclass(frozen=True)
class GpuFixture:
    """A fixture cut from a log of the H200 capture: its header kept, the body trimmed by whole lines."""

    name: str  # tests/fixtures/logs/<pattern>__<name>.log
    pattern: str
    capture: str  # file name in tests/fixtures/gpu_capture/logs/
    keep: tuple[tuple[int, int], ...] = ()  # body line ranges to keep (1-based, inclusive, in the capture file)
    drop: tuple[str, ...] = ()  # regexes of noise lines to drop


GDB_NOISE = (r"^\[New Thread ", r"^\[Thread 0x\w+ \(LWP \d+\) exited\]$", r"^\[Detaching after v?fork from child",
             r"^warning: Cuda Driver error detected: ")

GPU_FIXTURES: list[GpuFixture] = [
    GpuFixture("gpu_triton_assert_then_abort", "triton_index_out_of_bounds", "index_oob.base.log"),
    GpuFixture("gpu_assert_surfaces_at_a_later_sync", "triton_index_out_of_bounds", "dtype_mismatch.base.log"),
    GpuFixture("gpu_assert_breaks_the_nan_check", "triton_index_out_of_bounds", "index_oob.sanity.log"),
    GpuFixture("gpu_symbolic_bound", "triton_index_out_of_bounds", "dynamic_zero_below_min_nolb.base.log"),
    GpuFixture("gpu_driver_error", "cuda_illegal_memory_access", "ima_triton.base.log"),
    GpuFixture("gpu_terminate_after_accelerator_error", "cuda_illegal_memory_access", "ima_triton.deterministic.log"),
    # the first two of the 16 per-thread reports, then the last one and the end of the run
    GpuFixture("gpu_memcheck_report", "cuda_illegal_memory_access", "ima_triton.memcheck.log",
               keep=((15, 92), (586, 671))),
    GpuFixture("gpu_shim_same_device", "input_device_mismatch", "input_device_mismatch.cuda_pkg.base.log"),
    GpuFixture("gpu_check_inputs_cuda_package", "input_device_mismatch",
               "input_device_mismatch.cuda_pkg.check_inputs.log"),
    GpuFixture("gpu_check_inputs_cpu_package", "input_device_mismatch", "input_device_mismatch.cpu_pkg.sanity.log"),
    GpuFixture("gpu_cpu_package_cuda_input", "input_device_mismatch", "input_device_mismatch.cpu_pkg.base.log"),
    GpuFixture("gpu_shim_rejects_width", "input_shape_mismatch", "static_shape_mismatch_width.base.log"),
    GpuFixture("gpu_check_inputs_dim_below_min", "input_shape_mismatch", "dynamic_zero_below_min.sanity.log"),
    GpuFixture("gpu_mixed_device_constants", "device_mismatch_load",
               "load_device_mismatch.aot_load_cuda_on_cpu.base.log"),
    GpuFixture("gpu_aot_load_cpu_so_on_cuda", "device_mismatch_load",
               "load_device_mismatch.aot_load_cpu_on_cuda.base.log"),
    GpuFixture("gpu_no_visible_device", "device_mismatch_load", "load_device_mismatch.package.no_gpu.log"),
    GpuFixture("gpu_nan_asserts", "nan_inf", "nan.nan_asserts.log"),
    GpuFixture("gpu_user_nan_check", "nan_inf", "nan.base.log"),
    GpuFixture("gpu_printer_level2_stats", "nan_inf", "nan.printer2_filtered.log"),
    GpuFixture("gpu_faulthandler_load", "segfault_no_message", "toolchain_segfault.base.log"),
    GpuFixture("gpu_cuda_gdb_backtrace", "native_abi", "toolchain_segfault.cuda_gdb.log", drop=GDB_NOISE),
    GpuFixture("gpu_wrong_values_no_error", "wrong_output", "dynamic_above_max.base.log"),
]


def _split_header(lines: list[str]) -> int:
    n = 0
    while n < len(lines) and re.match(r"^#(?: .*)?$", lines[n]):
        n += 1
    return n


def write_gpu_fixture(fx: GpuFixture) -> Path:
    src = GPU_LOGS / fx.capture
    lines = src.read_text(encoding="utf-8", errors="replace").split("\n")
    n = _split_header(lines)
    body = [line for i, line in enumerate(lines[n:], n + 1)
            if not fx.keep or any(a <= i <= b for a, b in fx.keep)]
    text, dropped = trim("\n".join(body), fx.drop)
    dropped += len(lines) - n - len(body)
    header = [f"# source: GPU capture tests/fixtures/gpu_capture/logs/{fx.capture} (header copied, body trimmed "
              "by tests/make_fixture_logs.py)", *lines[:n - 1]]
    if dropped:
        header.append(f"# trimmed: {dropped} lines, {TRIM_NOTE}" + (", noise lines of the debugger" if fx.drop else ""))
    header.append("#")
    path = LOGS / f"{fx.pattern}__{fx.name}.log"
    path.write_text("\n".join(header) + "\n" + text.rstrip("\n") + "\n", encoding="utf-8")
    return path
