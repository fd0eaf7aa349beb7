"""Crash forensics: faulthandler's Python frames, a gdb/cuda-gdb batch backtrace, and what the top frames point to."""

from __future__ import annotations

import json
import re
import shutil
import sys
from typing import Literal

from pydantic import BaseModel, Field

from aoti_debug.common.intparse import to_int
from aoti_debug.runs._exec import ENV as EXEC_ENV

# Native frames kept from the crashing thread; the cause is near the top.
MAX_FRAMES = 30
BT_MARK, LIBS_MARK = "@@aoti-debug backtrace", "@@aoti-debug libraries"

LibKind = Literal["package", "libtorch", "libstdc++", "driver", "cuda", "triton", "libc", "python", "other", "unknown"]
# Library path -> owner, first match wins. "package" is the AOTI model .so (extracted or in a cache).
LIBRARY_KINDS: list[tuple[LibKind, str]] = [
    ("package", r"(\.wrapper\.so$|/data/aotinductor/|/aotinductor_[^/]+/|/torchinductor_[^/]+/.*\.so$)"),
    ("libtorch", r"/(libtorch[\w.+-]*|libc10[\w.+-]*|libshm[\w.+-]*|_C\.cpython[\w.+-]*|libaoti[\w.+-]*)\.so"),
    ("libstdc++", r"/lib(stdc\+\+|gcc_s)\.so"),
    ("driver", r"/lib(cuda|nvidia-[\w-]+)\.so"),
    ("cuda", r"/lib(cudart|cublas\w*|cudnn\w*|nccl|nvrtc\w*|cufft\w*|curand|cusparse\w*|cusolver\w*|nvJitLink"
             r"|cupti)[\w.+-]*\.so"),
    ("triton", r"/triton/"),
    ("libc", r"/((libc|libm|libpthread|libdl|librt)(-[\d.]+)?\.so|ld-linux[\w.-]*\.so|ld64\.so)"),
    ("python", r"(/libpython[\w.]*\.so|/lib-dynload/|/libffi[\w.]*\.so|/bin/python[\d.]*$)"),
]
# Function names of C++ standard library code, wherever it was compiled.
STDLIB_PREFIXES = ("std::", "__gnu_cxx::", "__cxxabiv1::", "void std::")
# Faulthandler's fatal error -> the signal behind it (for runs under a tool that hides the signal).
FATAL_SIGNALS = {"Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
                 "Floating-point exception": "SIGFPE", "Illegal instruction": "SIGILL"}
# Frames or Python functions that mean the crash happened while loading a package.
LOAD_MARKERS = re.compile(
    r"_load_aoti|aoti_load_package|load_package|aot_load|AOTIModelPackageLoader|AOTIModelContainerRunner"
    r"|AOTInductorModelContainerCreate|AOTInductorModel::AOTInductorModel|parse_device_str"
)

# A running model's frames: a load marker under one of these is a run, not a load (AOTIModelPackageLoader::run).
RUN_MARKERS = re.compile(r"AOTInductorModelContainerRun\b|AOTInductorModel::run|::run_impl\b|::run_single_threaded")
# Functions Inductor generates for kernels (CPU C++ and Triton): a crash inside one happened while it ran.
GENERATED_KERNEL = re.compile(r"^(?:cpp_fused_\w+?|cpp_kernel\w*?|kernel_cpp_\d+|triton_\w+?)(?:\._omp_fn\.\d+)?$")


class PyFrame(BaseModel):
    file: str
    line: int
    function: str


class Faulthandler(BaseModel):
    """What Python's faulthandler printed (PYTHONFAULTHANDLER=1)."""

    fatal: str = Field(description="The fatal error: 'Segmentation fault', 'Aborted', 'Bus error'...")
    frames: list[PyFrame] = Field(default_factory=list, description="Crashing thread, most recent call first")
    other_threads: int = 0


class NativeFrame(BaseModel):
    index: int
    pc: str | None = None
    function: str | None = Field(None, description="'??' when the debugger has no symbol")
    source: str | None = Field(None, description="file:line when debug info exists")
    library: str | None = Field(None, description="Shared object holding the pc; None for the executable")
    kind: LibKind = "unknown"


class Backtrace(BaseModel):
    """A native backtrace of the crashing thread and what it points to."""

    debugger: str
    signal: str | None = Field(None, description="Signal the debugger stopped on: SIGSEGV, CUDA_EXCEPTION_14...")
    signal_text: str | None = None
    exit: str | None = Field(None, description="How the program ended under the debugger")
    frames: list[NativeFrame] = Field(default_factory=list)
    top_library: str | None = Field(None, description="The first frame's library outside libc and libstdc++")
    top_kind: LibKind = "unknown"
    during_load: bool = Field(False, description="Frames show a package being loaded, before any kernel ran")
    kernel: str | None = Field(None, description="The generated kernel the crashing thread was in (cpp_fused_*, "
                               "triton_*), if any")
    points_to: Literal["toolchain", "device_mismatch", "generated_code", "custom_op", "driver", "libtorch",
                       "python", "no_crash", "unknown"] = "unknown"
    verdict: str = ""


def _bare(function: str | None) -> str:
    """'cpp_fused_add_0(float const*, ...)' or 'void cpp_fused_add_0' -> 'cpp_fused_add_0'."""
    f = re.sub(r"\(.*$", "", function or "").strip()
    return f.split(" ")[-1].split("::")[-1] if f else ""


def library_kind(path: str | None) -> LibKind:
    if not path:
        return "unknown"
    for kind, rx in LIBRARY_KINDS:
        if re.search(rx, path):
            return kind
    return "other"


# --- faulthandler ---------------------------------------------------------------------------------

_FATAL = re.compile(r"^Fatal Python error: (?:\w+: )?(.+?)\s*$")
_THREAD = re.compile(r"^(Current thread|Thread) 0x[0-9a-f]+(?: \[[^\]]*\])? \(most recent call first\):")
_PYFRAME = re.compile(r'^\s+File "(.*)", line (\d+) in (.+?)\s*$')


def parse_faulthandler(text: str) -> Faulthandler | None:
    """The last faulthandler report in text, or None."""
    report: Faulthandler | None = None
    current = False
    for line in text.splitlines():
        if m := _FATAL.match(line):
            report, current = Faulthandler(fatal=m.group(1)), False
        elif report is None:
            continue
        elif m := _THREAD.match(line):
            current = m.group(1) == "Current thread"
            report.other_threads += 0 if current else 1
        elif (m := _PYFRAME.match(line)) and current:
            report.frames.append(PyFrame(file=m.group(1), line=to_int(m.group(2)) or 0, function=m.group(3)))
    return report


# --- gdb / cuda-gdb ------------------------------------------------------------------------------

def find_debugger() -> str | None:
    """cuda-gdb where present (it also debugs host code), else gdb."""
    return shutil.which("cuda-gdb") or shutil.which("gdb")


def debugger_argv(debugger: str) -> list[str]:
    """A batch session: run, print the crashing thread's frames and the libraries, then let it die.

    The program is started through aoti_debug.runs._exec with its argv in the environment (see that module).
    """
    cmds = ["set pagination off", "set confirm off", "set print thread-events off",
            "set print frame-info location-and-address", "run",
            f"echo \\n{BT_MARK}\\n", f"bt {MAX_FRAMES}", f"echo \\n{LIBS_MARK}\\n", "info sharedlibrary",
            # hand the signal on, so faulthandler prints the Python frames
            "handle SIGSEGV SIGABRT SIGBUS SIGILL SIGFPE nostop noprint pass", "continue"]
    early = ["set debuginfod enabled off", "set auto-load python-scripts off", "set startup-with-shell off"]
    argv = [debugger, "-q", "-nx", "-batch"]
    for c in early:
        argv += ["-iex", c]
    for c in cmds:
        argv += ["-ex", c]
    return [*argv, "--args", sys.executable, "-m", "aoti_debug.runs._exec"]


def exec_env(argv: list[str]) -> dict[str, str]:
    """The environment entry that tells aoti_debug.runs._exec what to run."""
    return {EXEC_ENV: json.dumps(argv)}


_SIG = re.compile(r"received signal (\S+?), (.+?)\.?\s*$")
_FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(.*)$")
_LIB = re.compile(r"^(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(?:Yes|No)(?: \(\*\))?\s+(\S.*?)\s*$")
_EXIT = re.compile(r"^(?:\[Inferior \d+ \(process \d+\) (exited .*?)\]|Program (terminated with signal \S+?),)")


def _split_frame(rest: str) -> tuple[str, str | None, str | None]:
    """'name (args) at f.c:3' / 'name () from lib.so' -> (name, source, library)."""
    source = library = None
    if m := re.search(r" at (\S+:\d+)$", rest):
        source, rest = m.group(1), rest[: m.start()]
    elif m := re.search(r" from (\S+)$", rest):
        library, rest = m.group(1), rest[: m.start()]
    rest = rest.rstrip()
    if rest.endswith(")"):  # strip the argument list by matching parentheses from the end
        depth = 0
        for i in range(len(rest) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(rest[i], 0)
            if depth == 0:
                if i > 0 and rest[i - 1] == " ":
                    rest = rest[: i - 1]
                break
    return rest.strip() or "??", source, library


def parse_gdb(text: str, debugger: str = "gdb") -> Backtrace:
    """Parse a debugger_argv session's output: stop signal, frames of the crashing thread, libraries."""
    bt = Backtrace(debugger=debugger)
    section, libs = "", []
    for line in text.splitlines():
        if line.strip() == BT_MARK:
            section = "bt"
        elif line.strip() == LIBS_MARK:
            section = "libs"
        elif m := _SIG.search(line):
            if bt.signal is None:
                bt.signal, bt.signal_text = m.group(1), m.group(2)
        elif m := _EXIT.match(line):
            bt.exit = m.group(1) or m.group(2)
        elif section == "bt" and (m := _FRAME.match(line)) and len(bt.frames) < MAX_FRAMES:
            name, source, library = _split_frame(m.group(3))
            pc = m.group(2) or (bt.frames[-1].pc if bt.frames else None)  # an inlined frame shares its caller's pc
            bt.frames.append(NativeFrame(index=to_int(m.group(1)) or 0, pc=pc, function=name, source=source,
                                         library=library))
        elif section == "libs" and (m := _LIB.match(line)):
            libs.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    for f in bt.frames:
        if f.library is None and f.pc:
            pc = int(f.pc, 16)
            f.library = next((path for lo, hi, path in libs if lo <= pc < hi), None)
        f.kind = library_kind(f.library) if f.library else ("python" if libs and f.pc else "unknown")
    return bt


def attribute_backtrace(bt: Backtrace, fault: Faulthandler | None) -> Backtrace:
    """Attribute the top frames and say what they point to (device mismatch at load, toolchain, custom op...)."""
    if bt.signal is None:
        bt.points_to, bt.verdict = "no_crash", f"the program did not crash under {bt.debugger} ({bt.exit or 'no stop'})"
        return bt
    owner = next((f for f in bt.frames if f.kind not in ("libc", "libstdc++", "unknown")), None)
    bt.top_library, bt.top_kind = (owner.library, owner.kind) if owner else (None, "unknown")
    text = " ".join(f.function or "" for f in bt.frames) + " " + " ".join(
        p.function for p in (fault.frames if fault else []))
    kernel = next((_bare(f.function) for f in bt.frames if GENERATED_KERNEL.match(_bare(f.function))), None)
    bt.kernel = re.sub(r"\._omp_fn\.\d+$", "", kernel) if kernel else None
    bt.during_load = bool(LOAD_MARKERS.search(text)) and not bt.kernel and not RUN_MARKERS.search(text) and not (
        fault and fault.frames and fault.frames[0].function == "__call__")
    top_idx = bt.frames.index(owner) if owner else 0
    # libstdc++ code is in libstdc++.so or, for templates such as std::regex, compiled into the package itself
    in_stdcxx = any(f.kind == "libstdc++" or (f.function or "").startswith(STDLIB_PREFIXES)
                    for f in bt.frames[:top_idx + 1])
    lib = bt.top_library or "?"
    if bt.kernel and bt.top_kind in ("package", "unknown", "other"):
        bt.points_to = "generated_code"
        bt.verdict = (f"the crash is inside the generated kernel {bt.kernel} while the model ran (not while loading): "
                      "it read or wrote out of bounds, usually at an index taken from an input (an id past a "
                      "table's rows, a dimension the package was not built for). Print its inputs "
                      "(dump_kernel_inputs) to see which input holds the bad value.")
    elif bt.top_kind == "package" and in_stdcxx:
        bt.points_to = "toolchain"
        bt.verdict = (f"the package's .so ({lib}) crashed inside libstdc++"
                      + (" while loading" if bt.during_load else "")
                      + ": the package was built with a compiler or libstdc++ that does not match the one it runs "
                        "with (toolchain skew). Read the compiler from the '// Compile cmd' trailer of wrapper.cpp "
                        "and rebuild with the system compiler (CXX=/usr/bin/g++) and a fresh TORCHINDUCTOR_CACHE_DIR.")
    elif bt.top_kind == "package" and bt.during_load:
        bt.points_to = "device_mismatch"
        bt.verdict = (f"the package's .so ({lib}) crashed while loading, before any kernel ran: compare the "
                      "package's compile device with the load device (check_parity); the deprecated "
                      "torch._export.aot_load of a CPU .so on cuda (or the reverse) dies like this. "
                      "If the devices match, suspect the toolchain the package was built with.")
    elif bt.top_kind == "package":
        bt.points_to = "generated_code"
        bt.verdict = (f"the crash is in the package's generated code ({lib}) while it ran: usually an input "
                      "the package was not built for. Rerun with the sanity preset (input checks), then "
                      "kernel_names to name the kernel.")
    elif bt.top_kind == "other":
        bt.points_to = "custom_op"
        bt.verdict = (f"a library outside torch and the package crashed ({lib}): a custom op or extension. "
                      "Check that it was built against this torch (same version and C++ ABI) and for this device.")
    elif bt.top_kind in ("driver", "cuda"):
        bt.points_to = "driver"
        bt.verdict = (f"the crash is inside the CUDA {('driver' if bt.top_kind == 'driver' else 'libraries')} "
                      f"({lib}): a host pointer used as device memory (device mismatch), a bad launch, or a "
                      "driver/toolkit mismatch. Check devices with check_parity, then run the memcheck preset.")
    elif bt.top_kind == "libtorch":
        bt.points_to = "libtorch"
        bt.verdict = (f"the crash is inside libtorch ({lib})" + (" while loading the package" if bt.during_load else "")
                      + ": the frames name the op; a device mismatch or an input the package was not built for "
                        "are the usual causes (check_parity, sanity preset).")
    elif bt.top_kind == "python":
        bt.points_to = "python"
        bt.verdict = "the crash is in the Python interpreter or a ctypes/ffi call; read the Python frames."
    else:
        bt.verdict = "the frames could not be attributed to a library (no symbols); read them as they are."
    return bt
