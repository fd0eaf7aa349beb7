"""Golden log fixtures from real runs: CPU cases run here in subprocesses, GPU ones trimmed from the H200 capture.

    python tests/make_fixture_logs.py                 # every CPU case and every GPU-capture fixture
    python tests/make_fixture_logs.py CASE [CASE...]  # only these (CPU case names or GPU fixture names)
    python tests/make_fixture_logs.py --list

A CPU case runs a planted-bug example of examples/ (or one of the small user scripts of
tests/fixture_scripts.py, written to a temporary folder) in its own process, as a user would, and
writes the combined stdout+stderr to tests/fixtures/logs/<pattern>__<case>.log under a header
(source, torch, command, env, exit status). The same case list drives tests/test_live_logs.py
(`live=True` cases), which classifies the runs live. Packages come from tests/pkgs.py (cached in
tests/.build/<torch>/). GPU fixtures come from tests/gpu_fixture_logs.py. Logs are only ever trimmed
by whole lines (tests/logtrim.py); after writing, the MATCH markers are blessed from the
classifier's answer: review the diff.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pkgs  # noqa: E402
from fixture_scripts import SCRIPTS  # noqa: E402
from gpu_fixture_logs import GPU_FIXTURES, write_gpu_fixture  # noqa: E402
from logtrim import TRIM_NOTE, trim  # noqa: E402

ROOT = pkgs.ROOT
LOGS = ROOT / "tests" / "fixtures" / "logs"
GPU_PACKAGES = ROOT / "tests" / "fixtures" / "gpu_capture" / "packages"
# A run that compiles a tiny model takes 20-60 s on a 2-core machine; more means it hangs.
RUN_TIMEOUT_S = 600
# Variables that change what a run prints; a case sets the ones it needs, the host's are dropped.
SCRUBBED_ENV = ("AOTI_RUNTIME_CHECK_INPUTS", "TORCHINDUCTOR_NAN_ASSERTS",
                "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT",
                "CUDA_LAUNCH_BLOCKING", "CPLUS_INCLUDE_PATH", "CPATH", "CXX",
                "TORCH_LOGS", "TORCH_SHOW_CPP_STACKTRACES", "PYTHONFAULTHANDLER", "TORCHINDUCTOR_CACHE_DIR")


@dataclass(frozen=True)
class Case:
    """One real CPU run: what to run, what it must classify as."""

    name: str  # the fixture is tests/fixtures/logs/<pattern>__<name>.log
    pattern: str
    argv: tuple[str, ...]  # after "python"; {pkg} = the package, {work} = a fresh folder
    bug: str
    package: str | None = None  # a key of PACKAGES
    env: dict[str, str] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)  # what the live test expects in .fields
    live: bool = False  # also run by tests/test_live_logs.py
    setup: str | None = None  # a key of SETUPS, run on {work} before the command


def _build_script(script: str, mode: str) -> Path:
    """Build a package with one of SCRIPTS (argv MODE PATH) once per torch version; cached like pkgs.py."""
    folder = pkgs.BUILD / torch_version()
    folder.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(f"{SCRIPTS[script]}\0{mode}".encode()).hexdigest()[:12]
    out = folder / f"{Path(script).stem}-{mode}-{key}.pt2"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            work = Path(tempfile.mkdtemp(prefix="aoti_fixture_build_"))
            try:
                (work / script).write_text(SCRIPTS[script])
                tmp = work / "out.pt2"
                proc = subprocess.run([sys.executable, str(work / script), mode, str(tmp)], cwd=work,
                                      env={**_base_env(), "TORCHINDUCTOR_CACHE_DIR": str(work / "cache")},
                                      capture_output=True, text=True, timeout=pkgs.BUILD_TIMEOUT_S)
                if proc.returncode != 0 or not tmp.exists():
                    raise RuntimeError(f"building {script} {mode} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
                shutil.move(str(tmp), out)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    return out


@functools.cache
def torch_version() -> str:
    return pkgs.torch_version()


@functools.cache
def package(key: str) -> Path:
    """The package a case runs on, built (or found in the cache) once per process."""
    return PACKAGES[key]()


PACKAGES: dict[str, Callable[[], Path]] = {
    # examples/index_oob.py and examples/dtype_mismatch.py define the same model, seed and export.
    "index_model": lambda: pkgs.build_example("dtype_mismatch"),
    "static": lambda: pkgs.build_example("static_shape_mismatch"),
    "dynamic_max": lambda: pkgs.build_example("dynamic_above_max"),
    "dynamic_min": lambda: pkgs.build_example("dynamic_zero_below_min"),
    "nan_asserts": lambda: pkgs.build_example("nan", env={"TORCHINDUCTOR_NAN_ASSERTS": "1"}),
    "custom_op": lambda: _build_script("custom_op.py", "build"),
    "cuda": lambda: GPU_PACKAGES / "load_device_mismatch.package.base.pt2",
}


def _truncated_omp_header(work: Path) -> None:
    """An include folder whose omp.h is a half-copied copy of the compiler's own (an interrupted copy)."""
    real = subprocess.run(["g++", "-print-file-name=include/omp.h"], capture_output=True, text=True,
                          timeout=60).stdout.strip()
    (work / "include").mkdir()
    (work / "include" / "omp.h").write_text("".join(Path(real).read_text().splitlines(keepends=True)[:60]))


SETUPS: dict[str, Callable[[Path], None]] = {"truncated_omp_header": _truncated_omp_header}
CHECK = {"AOTI_RUNTIME_CHECK_INPUTS": "1"}

CASES: list[Case] = [
    # -- index out of bounds: the CPU kernel's bounds check
    Case("cpu_embedding_id_500", "triton_index_out_of_bounds",
         ("examples/index_oob.py", "--load-only", "--package", "{pkg}"), package="index_model", live=True,
         bug="an embedding id of 500 for a 100-row table (input 1)",
         fields={"tmp_var": "tmp4", "bound": "100L", "lower": "0", "kernel_name": "cpp_fused_add_embedding_relu_0"}),
    Case("cpu_int32_ids_misread", "triton_index_out_of_bounds",
         ("examples/dtype_mismatch.py", "--load-only", "--package", "{pkg}"), package="index_model",
         bug="valid ids as int32 into an int64 input: the kernel reads them as huge ids"),
    Case("cpu_empty_dim_symbolic_bound", "triton_index_out_of_bounds",
         ("examples/dynamic_zero_below_min.py", "--load-only", "--package", "{pkg}"), package="dynamic_min",
         bug="an empty table (n = 0) for Dim(min=1); clamp(0, n - 1) gives -1",
         fields={"tmp_var": "tmp12", "bound": "ks0"}),
    # -- the input checks (AOTI_RUNTIME_CHECK_INPUTS=1), one per template, and the unchecked forms
    Case("cpu_check_inputs_dtype", "input_shape_mismatch",
         ("examples/dtype_mismatch.py", "--load-only", "--package", "{pkg}"), package="index_model", env=CHECK,
         live=True, bug="int32 ids into an int64 input",
         fields={"input_index": "1", "check": "unmatched dtype", "expected_dtype": "int64", "got_dtype": "int32"}),
    Case("cpu_check_inputs_static_dim", "input_shape_mismatch",
         ("examples/static_shape_mismatch.py", "--load-only", "--package", "{pkg}"), package="static", env=CHECK,
         live=True, bug="a batch of 6 for a static batch of 4",
         fields={"input_index": "0", "check": "unmatched dim value", "dim": "0", "expected": "4", "got": "6"}),
    Case("cpu_check_inputs_stride", "input_shape_mismatch",
         ("{work}/wrong_call.py", "{pkg}", "stride"), package="static", env=CHECK, live=True,
         bug="a transposed (non-contiguous) view of the right shape",
         fields={"input_index": "0", "check": "unmatched stride value", "dim": "0", "expected": "8", "got": "1"}),
    Case("cpu_check_inputs_dim_above_max", "input_shape_mismatch",
         ("examples/dynamic_above_max.py", "--load-only", "--package", "{pkg}"), package="dynamic_max", env=CHECK,
         live=True, bug="seq = 100 for Dim(max=64)",
         fields={"input_index": "0", "check": "dim value is too large", "dim": "1", "expected": "64", "got": "100"}),
    Case("cpu_check_inputs_dim_below_min", "input_shape_mismatch",
         ("examples/dynamic_zero_below_min.py", "--load-only", "--package", "{pkg}"), package="dynamic_min",
         env=CHECK, bug="n = 0 for Dim(min=1) (the generated check says >= 2)",
         fields={"input_index": "0", "check": "dim value is too small", "expected": "2", "got": "0"}),
    Case("cpu_check_inputs_rank", "input_shape_mismatch",
         ("{work}/wrong_call.py", "{pkg}", "rank"), package="static", env=CHECK,
         bug="a stray trailing dimension ([4, 8, 1] for [4, 8])", fields={"expected": "2", "got": "3"}),
    Case("cpu_input_count", "input_shape_mismatch", ("{work}/wrong_call.py", "{pkg}", "count"), package="static",
         bug="two inputs for a one-input package", fields={"expected": "1", "got": "2"}),
    Case("cpu_shim_rejects_width", "input_shape_mismatch",
         ("examples/static_shape_mismatch.py", "--load-only", "--package", "{pkg}", "--wrong", "width"),
         package="static", live=True, bug="12 features for an 8-feature input, no input checks",
         fields={"shape_error": "mat1 and mat2 shapes cannot be multiplied (4x12 and 8x16)"}),
    Case("cpu_output_resized", "input_shape_mismatch",
         ("examples/static_shape_mismatch.py", "--load-only", "--package", "{pkg}"), package="static",
         bug="a batch of 6 for a static batch of 4, no input checks: only a resize warning, then wrong rows"),
    # -- NaN
    Case("cpu_nan_assert_on_input", "nan_inf", ("{work}/wrong_call.py", "{pkg}", "nan_input"),
         package="nan_asserts", bug="a NaN feature; the package was built with TORCHINDUCTOR_NAN_ASSERTS=1",
         fields={"kind": "NaN"}),
    Case("cpu_user_nan_check", "nan_inf", ("examples/nan.py", "--load-only", "--package", "{pkg}"),
         package="nan_asserts", bug="log of a negative feature; CPU NaN asserts only check graph inputs"),
    # -- compile, export, lowering
    Case("cpu_truncated_omp_header", "cpp_compile_error",
         ("examples/nan.py", "--package", "{work}/nan.pt2"), setup="truncated_omp_header", live=True,
         env={"CPLUS_INCLUDE_PATH": "{work}/include", "TORCHINDUCTOR_CACHE_DIR": "{work}/cache"},
         bug="a half-copied omp.h in a folder on CPLUS_INCLUDE_PATH shadows the compiler's own",
         fields={"exception": "CppCompileError", "compiler_error": "unterminated #ifndef"}),
    Case("cpu_c_shim_undeclared_type", "cpp_compile_error", ("{work}/c_shim.py", "compile", "{work}/shim.pt2"),
         env={"TORCHINDUCTOR_CACHE_DIR": "{work}/cache"}, bug="a C-shim declaration with a misspelled type",
         fields={"exception": "CppCompileError", "compiler_error": "‘UndeclaredType’ has not been declared"}),
    Case("cpu_no_working_compiler", "toolchain_setup", ("examples/nan.py", "--package", "{work}/nan.pt2"),
         env={"CXX": "/opt/nope/g++", "TORCHINDUCTOR_CACHE_DIR": "{work}/cache"},
         bug="CXX names a compiler that does not exist"),
    Case("cpu_data_dependent_guard", "export_failure", ("{work}/export_fail.py", "data_dependent"), live=True,
         bug="Python control flow on a tensor value", fields={"expression": "Eq(u0, 1)"}),
    Case("cpu_constraints_violated", "export_failure", ("{work}/export_fail.py", "constraints"),
         bug="a branch on a dynamic size valid for only part of the declared range", fields={"dims": "b"}),
    Case("cpu_custom_op_without_fallbacks", "lowering_error", ("{work}/custom_op.py", "no_fallbacks", "{work}/x.pt2"),
         env={"TORCHINDUCTOR_CACHE_DIR": "{work}/cache"},
         bug="a custom op compiled with implicit_fallbacks=False", fields={"target": "mylib.twice.default"}),
    # -- custom ops, native libraries, constants, devices, memory
    Case("cpu_no_fake_impl", "custom_op", ("{work}/custom_op.py", "no_fake", "{work}/x.pt2"),
         bug="a custom op exported without register_fake", fields={"op": "mylib::twice"}),
    Case("cpu_op_not_in_serving_process", "custom_op", ("{work}/custom_op.py", "load_without_op", "{pkg}"),
         package="custom_op", bug="the package runs in a process that never defined its custom op",
         fields={"op": "mylib::twice"}),
    Case("cpu_so_without_json", "custom_op", ("{work}/custom_op.py", "so_without_json", "{pkg}", "{work}"),
         package="custom_op", bug="the .so taken out of the .pt2 and loaded without its proxy-executor .json"),
    Case("cpu_c_shim_undefined_symbol", "native_abi", ("{work}/c_shim.py", "link", "{work}/shim.pt2"),
         env={"TORCHINDUCTOR_CACHE_DIR": "{work}/cache"},
         bug="a C-shim declared for a custom op that no loaded library implements",
         fields={"missing_symbol": "aoti_torch_cpu_twice"}),
    Case("cpu_load_constants_empty", "constant_loading", ("{work}/wrong_call.py", "{pkg}", "constants_empty"),
         package="static", bug="a full constants update with no constants"),
    Case("cpu_load_constants_state_dict", "constant_loading",
         ("{work}/wrong_call.py", "{pkg}", "constants_state_dict"), package="static",
         bug="the eager state_dict as constants: 2.bias is not a constant of the package",
         fields={"constant": "2.bias"}),
    Case("cpu_weights_outside_so", "segfault_no_message", ("{work}/weights_outside.py", "{work}/w.pt2"),
         env={"PYTHONFAULTHANDLER": "1", "TORCHINDUCTOR_CACHE_DIR": "{work}/cache"},
         bug="package_constants_in_so=False and load_constants never called", fields={"signal": "SIGSEGV"}),
    Case("cpu_cuda_package_on_cpu_torch", "device_mismatch_load",
         ("examples/load_device_mismatch.py", "--load-only", "--package", "{pkg}"), package="cuda",
         bug="a CUDA package (built on the H200) loaded by a +cpu torch"),
    Case("cpu_aot_load_cpu_so_on_cuda", "device_mismatch_load",
         ("examples/load_device_mismatch.py", "--device", "cpu", "--package", "{work}/m.so"),
         env={"TORCHINDUCTOR_CACHE_DIR": "{work}/cache"},
         bug="deprecated aot_compile for cpu, aot_load(device='cuda') on a +cpu torch"),
    Case("cpu_package_allocates_from_a_view", "out_of_memory", ("{work}/wrong_call.py", "{pkg}", "broadcast_view"),
         package="dynamic_max", bug="a free expand() view of [4, 2**48] fed to a package that allocates its output",
         fields={"alloc_bytes": "4503599627370496"}),
]
LIVE = [c for c in CASES if c.live]


@dataclass
class Run:
    case: Case
    command: str  # as shown in the header: repository-relative, placeholders for temporary paths
    env_shown: dict[str, str]
    exit_status: int
    log: str


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
    return {**env, "PYTHONUNBUFFERED": "1"}


def run_case(case: Case, work: Path) -> Run:
    """Run one case in its own process (cwd = the repository root); combined stdout+stderr."""
    pkg = package(case.package) if case.package else None
    subs = {"pkg": str(pkg), "work": str(work)}
    for name, text in SCRIPTS.items():
        if any(name in a for a in case.argv):
            (work / name).write_text(text)
    if case.setup:
        SETUPS[case.setup](work)
    argv = [a.format(**subs) for a in case.argv]
    env = {k: v.format(**subs) for k, v in case.env.items()}
    proc = subprocess.run([sys.executable, *argv], cwd=ROOT, env={**_base_env(), **env}, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S)

    def shown(s: str) -> str:
        s = s.replace(str(work), "$WORK")
        return s.replace(str(ROOT) + "/", "")

    return Run(case, "python " + " ".join(shown(a) for a in argv), {k: shown(v) for k, v in env.items()},
               proc.returncode, proc.stdout.decode("utf-8", errors="replace"))


def _compiler() -> str:
    out = subprocess.run(["g++", "--version"], capture_output=True, text=True, timeout=60).stdout
    return out.split("\n", 1)[0]


def write_cpu_fixture(run: Run) -> Path:
    case = run.case
    body, dropped = trim(run.log)
    env = " ".join(f"{k}={v}" for k, v in run.env_shown.items()) or "(nothing added)"
    header = [
        f"# source: real CPU run, tests/make_fixture_logs.py case {case.name} (python tests/make_fixture_logs.py "
        f"{case.name})",
        f"# torch: {torch_version()}",
        f"# host: {platform.machine()}, Python {platform.python_version()}, {_compiler()}",
        f"# bug: {case.bug}",
        f"# command: {run.command}",
    ]
    if case.package:
        header.append(f"# package: {case.package} (tests/make_fixture_logs.py PACKAGES)")
    header += [f"# env: {env}", f"# exit status: {run.exit_status}"]
    if dropped:
        header.append(f"# trimmed: {dropped} lines, {TRIM_NOTE}")
    header.append("#")
    path = LOGS / f"{case.pattern}__{case.name}.log"
    path.write_text("\n".join(header) + "\n" + body.rstrip("\n") + "\n", encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    import golden

    if argv[:1] == ["--list"]:
        for c in CASES:
            print(f"cpu {c.name:40s} {c.pattern:28s} {'live' if c.live else ''}")
        for fx in GPU_FIXTURES:
            print(f"gpu {fx.name:40s} {fx.pattern}")
        return 0
    wanted = set(argv)
    known = {c.name for c in CASES} | {fx.name for fx in GPU_FIXTURES}
    if wanted - known:
        print(f"unknown case(s): {sorted(wanted - known)}", file=sys.stderr)
        return 2
    LOGS.mkdir(parents=True, exist_ok=True)
    bad = 0
    written: list[Path] = []
    for fx in GPU_FIXTURES:
        if not wanted or fx.name in wanted:
            written.append(write_gpu_fixture(fx))
    for case in CASES:
        if wanted and case.name not in wanted:
            continue
        with tempfile.TemporaryDirectory(prefix=f"aoti_fixture_{case.name}_") as work:
            run = run_case(case, Path(work))
        written.append(write_cpu_fixture(run))
        print(f"{case.name}: exit {run.exit_status}", flush=True)
    for path in written:
        result = golden.bless(path)
        ok = result.pattern == path.name.split("__", 1)[0]
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {path.name}: {result.pattern} {result.confidence} {result.fields}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
