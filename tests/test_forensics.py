"""Forensics on real crashes: faulthandler frames, gdb batch backtraces attributed to libraries, memcheck reports."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aoti_debug.runs import proc
from aoti_debug.runs.forensics import (
    attribute_backtrace,
    debugger_argv,
    exec_env,
    library_kind,
    parse_faulthandler,
    parse_gdb,
)
from aoti_debug.runs.memcheck import parse_memcheck

FIXTURES = Path(__file__).parent / "fixtures" / "forensics"
PY = sys.executable
needs_gdb = pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed")
needs_cxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

CUSTOM_OP = """
#include <cstdio>
extern "C" int my_custom_op(int *p) { std::printf("custom op running\\n"); return *p + 1; }
"""
# Shaped like the toolchain-skew crash on record (reference section 11.9): the package's wrapper .so
# crashes inside libstdc++ while the model container is created.
WRAPPER = """
#include <bits/stl_tree.h>
static std::_Rb_tree_node_base *parse_device_str(std::_Rb_tree_node_base *n) { return std::_Rb_tree_increment(n); }
extern "C" int AOTInductorModelContainerCreateWithDevice(void) {
  return parse_device_str(reinterpret_cast<std::_Rb_tree_node_base *>(16)) != nullptr;
}
"""
CALLER = textwrap.dedent("""
    import ctypes, sys
    def load_package(path):
        lib = ctypes.CDLL(path)
        return lib.{fn}({arg})
    load_package(sys.argv[1])
""")


def build_lib(tmp_path: Path, name: str, source: str) -> Path:
    src, out = tmp_path / f"{name}.cpp", tmp_path / name
    src.write_text(source)
    subprocess.run(["g++", "-g", "-O0", "-shared", "-fPIC", "-o", str(out), str(src)], check=True, timeout=120)
    return out


def crash_under(tmp_path: Path, lib: Path, fn: str, arg: str = "") -> tuple[str, proc.ProcResult]:
    script = tmp_path / "caller.py"
    script.write_text(CALLER.format(fn=fn, arg=arg))
    argv = [PY, str(script), str(lib)]
    r = proc.run(proc.ProcSpec(argv=debugger_argv(shutil.which("gdb")), timeout_s=120, log_dir=tmp_path / "log",
                               env_overrides={**exec_env(argv), "PYTHONFAULTHANDLER": "1"}))
    return (tmp_path / "log" / "combined.log").read_text(), r


@pytest.mark.spawns
def test_faulthandler_output_of_a_real_segfault_gives_the_python_frames_innermost_first(tmp_path) -> None:
    script = tmp_path / "seg.py"
    script.write_text("import ctypes\ndef inner():\n    ctypes.string_at(0)\ndef outer():\n    inner()\nouter()\n")
    r = proc.run(proc.ProcSpec(argv=[PY, "-X", "faulthandler", str(script)], log_dir=tmp_path / "log"))
    assert r.signal == "SIGSEGV"
    fault = parse_faulthandler((tmp_path / "log" / "combined.log").read_text())
    assert fault and fault.fatal == "Segmentation fault"
    assert [f.function for f in fault.frames if f.file == str(script)] == ["inner", "outer", "<module>"]
    assert fault.frames[0].function == "string_at"  # ctypes' own frame is innermost


def test_faulthandler_parsing_of_an_abort_without_a_python_frame() -> None:
    text = ("terminate called after throwing an instance of 'c10::Error'\n"
            "Fatal Python error: Aborted\n\n<no Python frame>\n")
    fault = parse_faulthandler(text)
    assert fault and fault.fatal == "Aborted" and fault.frames == []
    assert parse_faulthandler("Traceback (most recent call last):\nValueError: x\n") is None


@pytest.mark.spawns
@needs_gdb
@needs_cxx
def test_gdb_puts_a_crash_in_a_custom_library_and_calls_it_a_custom_op(tmp_path) -> None:
    lib = build_lib(tmp_path, "libmy_ops.so", CUSTOM_OP)
    text, r = crash_under(tmp_path, lib, "my_custom_op", "None")
    fault = parse_faulthandler(text)
    bt = attribute_backtrace(parse_gdb(text), fault)
    assert bt.signal == "SIGSEGV" and bt.exit == "terminated with signal SIGSEGV"
    top = bt.frames[0]
    assert (top.function, top.library, top.kind) == ("my_custom_op", str(lib), "other")
    assert top.source and top.source.endswith("libmy_ops.so.cpp:3")
    assert bt.points_to == "custom_op" and str(lib) in bt.verdict
    # faulthandler still printed the Python frames after gdb handed the signal on
    assert fault and fault.frames[0].function == "load_package"
    assert "custom op running" in text


@pytest.mark.spawns
@needs_gdb
@needs_cxx
def test_a_package_so_crashing_inside_libstdcxx_at_load_points_to_the_toolchain(tmp_path) -> None:
    lib = build_lib(tmp_path, "model.wrapper.so", WRAPPER)
    text, _ = crash_under(tmp_path, lib, "AOTInductorModelContainerCreateWithDevice")
    bt = attribute_backtrace(parse_gdb(text), parse_faulthandler(text))
    assert bt.frames[0].kind == "libstdc++" and "_Rb_tree_increment" in (bt.frames[0].function or "")
    assert bt.top_kind == "package" and bt.top_library == str(lib)
    assert bt.during_load and bt.points_to == "toolchain"
    assert "CXX=/usr/bin/g++" in bt.verdict


@pytest.mark.spawns
@needs_gdb
def test_a_program_that_exits_under_gdb_is_no_crash_and_keeps_arguments_with_spaces(tmp_path) -> None:
    argv = [PY, "-c", "import sys; print('args:', sys.argv[1:]); sys.exit(3)", "two words", "$HOME;`x`"]
    r = proc.run(proc.ProcSpec(argv=debugger_argv(shutil.which("gdb")), env_overrides=exec_env(argv),
                               log_dir=tmp_path, timeout_s=60))
    text = (tmp_path / "combined.log").read_text()
    assert "args: ['two words', '$HOME;`x`']" in text  # no shell, no re-splitting
    bt = attribute_backtrace(parse_gdb(text), None)
    assert bt.signal is None and bt.exit == "exited with code 03" and bt.points_to == "no_crash"
    assert r.returncode is not None


@pytest.mark.parametrize("path, kind", [
    ("/tmp/aotinductor_Ab12/plain/data/aotinductor/model/c1x2.wrapper.so", "package"),
    ("/tmp/torchinductor_root/ab/cabc.wrapper.so", "package"),
    ("/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so", "libtorch"),
    ("/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so", "libtorch"),
    ("/venv/lib/python3.11/site-packages/torch/_C.cpython-311-x86_64-linux-gnu.so", "libtorch"),
    ("/lib/x86_64-linux-gnu/libstdc++.so.6", "libstdc++"),
    ("/lib/x86_64-linux-gnu/libcuda.so.1", "driver"),
    ("/usr/local/cuda/lib64/libcudart.so.13", "cuda"),
    ("/lib/x86_64-linux-gnu/libc.so.6", "libc"),
    ("/usr/lib/libpython3.11.so.1.0", "python"),
    ("/home/u/ext/libmy_ops.so", "other"),
])
def test_libraries_are_attributed_to_their_owner(path, kind) -> None:
    assert library_kind(path) == kind


# From the reference's record of compute-sanitizer on an H200 (aoti-internals.md, section 11.6).
MEMCHECK_REFERENCE = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at gather_k+0x1a0 in c5gu2737abc.py:22
=========     by thread (3,0,0) in block (0,0,0)
=========     Access to 0x7f1e2a000190 is out of bounds
=========     and is 396 bytes after the nearest allocation at 0x7f1e2a000000 of size 400 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f2d6f] in libcuda.so.1
=========         Host Frame: AOTInductorModelContainerRun [0x1234] in c1x2.wrapper.so
=========
========= ERROR SUMMARY: 1 error
"""


def test_the_memcheck_report_gives_kernel_line_thread_address_and_distance() -> None:
    m = parse_memcheck(MEMCHECK_REFERENCE)
    assert m.error_count == 1 and m.kernels == ["gather_k"]
    e = m.errors[0]
    assert (e.access, e.space, e.size) == ("read", "global", 4)
    assert (e.file, e.line, e.thread, e.block) == ("c5gu2737abc.py", 22, "(3,0,0)", "(0,0,0)")
    assert (e.address, e.distance_bytes, e.direction, e.allocation_size) == ("0x7f1e2a000190", 396, "after", 400)
    assert e.host_frames[1].startswith("AOTInductorModelContainerRun")
    assert "gather_k at c5gu2737abc.py:22" in m.verdict and "396 bytes after" in m.verdict


def test_memcheck_variants_old_location_form_commas_before_and_api_errors() -> None:
    text = textwrap.dedent("""\
        ========= Invalid __shared__ write of size 8 bytes
        =========     at 0x00000150 in /src/k.cu:12:kern(float*)
        =========     by thread (1,2,0) in block (4,0,0)
        =========     Address 0x10 is out of bounds
        =========     and is 1,024 bytes before the nearest allocation at 0x410 of size 2,048 bytes
        ========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API \
        call to cudaStreamSynchronize.
        program output that is not part of the report
        ========= ERROR SUMMARY: 2 errors
        """)
    m = parse_memcheck(text)
    e = m.errors[0]
    assert (e.kernel, e.file, e.line, e.space, e.access) == ("kern(float*)", "/src/k.cu", 12, "shared", "write")
    assert (e.distance_bytes, e.direction, e.allocation_size) == (1024, "before", 2048)
    assert m.api_errors and "cudaErrorLaunchFailure" in m.api_errors[0] and m.error_count == 2
    clean = parse_memcheck("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")
    assert clean.errors == [] and clean.error_count == 0 and "no memory error" in clean.verdict


# Real GPU logs whose headers the committed scripts wrote (tests/test_fixture_headers.py checks them).
SUITE_LOGS = Path(__file__).parent / "fixtures" / "gpu_triage_suite" / "logs"
CAPTURE_LOGS = Path(__file__).parent / "fixtures" / "gpu_capture" / "logs"
# A native backtrace -> where it must point (forensics.attribute_backtrace's points_to).
BACKTRACES = {SUITE_LOGS / "toolchain_segfault" / "step5_rerun_with_flags_backtrace.log": "toolchain"}
# compute-sanitizer reports of the user Triton kernel of examples/ima_triton.py reading row 1e9 of its input.
OOB_MEMCHECKS = [CAPTURE_LOGS / "ima_triton.memcheck.log",
                 SUITE_LOGS / "ima_triton" / "step5_rerun_with_flags_memcheck.sanitizer.log"]
# Captured by tests/gpu/capture_memcheck.py on a GPU host, then copied here (not yet done: these tests say so).
CAPTURE_JOB = "run `PYTHONPATH=server python3 tests/gpu/capture_memcheck.py OUT` on a GPU host and copy OUT/forensics/"
NEAR_OOB = FIXTURES / "oob__aoti_gather_no_index_asserts.memcheck.log"
HOST_CRASH = FIXTURES / "host_crash__toolchain_load.memcheck.log"


def missing(path: Path):
    return pytest.mark.skipif(not path.is_file(), reason=f"missing fixture tests/fixtures/forensics/{path.name}: "
                              f"{CAPTURE_JOB}{path.name} to tests/fixtures/forensics/")


@pytest.mark.parametrize("path", sorted(BACKTRACES), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_captured_gpu_backtraces_point_where_they_should(path) -> None:
    text = path.read_text(errors="replace")
    bt = attribute_backtrace(parse_gdb(text, "cuda-gdb"), parse_faulthandler(text))
    assert bt.signal and bt.frames and bt.top_kind != "unknown", bt
    assert bt.points_to == BACKTRACES[path], (bt.points_to, bt.verdict)


def test_the_captured_toolchain_crash_is_std_regex_inside_the_package_at_load() -> None:
    """Reference section 11.9, reproduced on the GPU host: libstdc++ template code compiled into the wrapper .so."""
    text = (SUITE_LOGS / "toolchain_segfault" / "step5_rerun_with_flags_backtrace.log").read_text()
    bt = attribute_backtrace(parse_gdb(text, "cuda-gdb"), parse_faulthandler(text))
    assert bt.frames[0].kind == "package" and bt.frames[0].function.startswith("std::codecvt")
    names = [f.function for f in bt.frames]
    assert any(n.startswith("torch::aot_inductor::parse_device_str") for n in names)
    assert "AOTInductorModelContainerCreateWithDevice" in names and bt.during_load
    assert bt.exit == "terminated with signal SIGSEGV"


@pytest.mark.parametrize("path", OOB_MEMCHECKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_captured_out_of_bounds_read_is_parsed_to_its_kernel_line_thread_and_distance(path) -> None:
    m = parse_memcheck(path.read_text(errors="replace"))
    e = m.errors[0]
    assert (e.access, e.space, e.size, e.kernel, e.line) == ("read", "global", 4, "gather_rows_kernel", 24), e
    assert e.file.endswith(".py") and e.thread == "(16,0,0)" and e.block == "(0,0,0)" and e.address, e
    # row 1e9 of 16 float32 columns: about 54 GB past the 32 MiB allocation the table sits in
    assert (e.direction, e.allocation_size) == ("after", 33_554_432) and e.distance_bytes > 54 * 10**9, e
    assert m.kernels == ["gather_rows_kernel"] and m.error_count and m.error_count >= len(m.errors) > 1, m
    assert "gather_rows_kernel" in m.verdict, m.verdict


@missing(NEAR_OOB)
def test_a_read_just_past_an_inductor_kernels_input_is_parsed_with_its_distance() -> None:
    """capture_memcheck.py's oob job: row 100 of a 100 x 12 float32 table, its own allocation."""
    m = parse_memcheck(NEAR_OOB.read_text(errors="replace"))
    e = m.errors[0]
    assert e.kernel and e.kernel.startswith("triton_") and e.file and e.line and e.thread and e.block, e
    assert (e.access, e.direction, e.allocation_size) == ("read", "after", 100 * 12 * 4), e
    assert 0 <= e.distance_bytes < 12 * 4, e  # within the one row past the end


@missing(HOST_CRASH)
def test_a_host_crash_under_memcheck_is_reported_as_no_device_error() -> None:
    m = parse_memcheck(HOST_CRASH.read_text(errors="replace"))
    assert m.errors == [] and m.tool_errors and "backtrace preset" in m.verdict, m
