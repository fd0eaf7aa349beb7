"""Runtime facts of the Python that will load a package: torch, GPUs, CPU flags, libstdc++, compiler.

Run as `python runtime_probe.py OUT.json [INPUTS INPUTS_OUT.json]` in the target interpreter (standard
library plus torch). Writes what it could learn even when torch is missing ("torch_error"); with
INPUTS it then describes that torch.save file (inputs_probe.py) in the same process, to import torch once.
"""

import json
import os
import platform
import re
import shutil
import subprocess
import sys

# The compiler answers --version in milliseconds; a wrapper that hangs must not hang the probe.
COMPILER_TIMEOUT_S = 15
# Only instruction-set flags matter to a package; the rest of /proc/cpuinfo is noise in a report.
ISA_FLAG_RX = re.compile(r"^(avx|sse|ssse|fma|f16c|amx|asimd|sve|neon|vsx|bmi|vnni|pclmul|vpclmul|vaes|aes$)")
GLIBCXX_RX = re.compile(rb"GLIBCXX_3\.4(?:\.\d+)?")
CXXABI_RX = re.compile(rb"CXXABI_1\.3(?:\.\d+)?")


def versions_in(path):
    """Symbol-version names a shared library defines (GLIBCXX_3.4.N, CXXABI_1.3.N), read as bytes."""
    try:
        with open(path, "rb") as f:
            data = f.read(64 * 2**20)
    except OSError:
        return []
    found = {m.decode() for m in GLIBCXX_RX.findall(data)} | {m.decode() for m in CXXABI_RX.findall(data)}
    return sorted(found)


def loaded_libstdcxx():
    """Path of the libstdc++ mapped into this process (after importing torch)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if line.strip() else ""
                if "libstdc++.so" in path:
                    return os.path.realpath(path)
    except OSError:
        pass
    return None


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return sorted(f for f in set(value.split()) if ISA_FLAG_RX.match(f))
    except OSError:
        pass
    return []


def compiler(facts):
    """The C++ compiler inductor would pick (config.cpp.cxx, first that answers --version)."""
    candidates = []
    try:
        from torch._inductor import config

        cxx = config.cpp.cxx
        candidates = [c for c in (cxx if isinstance(cxx, (list, tuple)) else (cxx,)) if c]
    except Exception as exc:  # any failure here only loses this fact
        facts["notes"].append(f"torch._inductor.config unreadable: {type(exc).__name__}: {exc}")
        candidates = [os.environ.get("CXX", "g++")]
    for cxx in candidates:
        path = shutil.which(cxx)
        if not path:
            continue
        facts["compiler"] = cxx
        facts["compiler_path"] = os.path.realpath(path)
        try:
            out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=COMPILER_TIMEOUT_S,
                                 stdin=subprocess.DEVNULL)
            text = (out.stdout or out.stderr).strip()
            facts["compiler_version"] = text.splitlines()[0] if text else None
            lib = subprocess.run([cxx, "-print-file-name=libstdc++.so.6"], capture_output=True, text=True,
                                 timeout=COMPILER_TIMEOUT_S, stdin=subprocess.DEVNULL).stdout.strip()
            if lib and os.path.isabs(lib) and os.path.exists(lib):
                facts["compiler_libstdcxx"] = os.path.realpath(lib)
                facts["compiler_libstdcxx_versions"] = versions_in(lib)
        except (OSError, subprocess.SubprocessError) as exc:
            facts["notes"].append(f"{cxx} --version failed: {exc}")
        return
    facts["notes"].append(f"no C++ compiler found among {candidates}")


def main():
    out = sys.argv[1]
    facts = {"python": sys.executable, "python_version": platform.python_version(), "platform": sys.platform,
             "machine": platform.machine(), "libc": " ".join(platform.libc_ver()).strip(),
             "cpu_flags": cpu_flags(), "notes": [], "devices": []}
    try:
        import torch
    except Exception as exc:  # not torch, or a broken install: report it as a fact
        facts["torch_error"] = f"{type(exc).__name__}: {exc}"
    else:
        facts["torch_version"] = torch.__version__
        facts["torch_git"] = getattr(torch.version, "git_version", None)
        facts["torch_cuda"] = torch.version.cuda
        facts["torch_hip"] = getattr(torch.version, "hip", None)
        try:
            facts["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        except Exception as exc:  # older torch lacks it
            facts["notes"].append(f"cpu capability unknown: {exc}")
        try:
            facts["cuda_available"] = bool(torch.cuda.is_available())
            facts["device_count"] = torch.cuda.device_count() if facts["cuda_available"] else 0
            for i in range(facts["device_count"]):
                p = torch.cuda.get_device_properties(i)
                cap = getattr(p, "gcnArchName", "").split(":", 1)[0] if facts["torch_hip"] else f"{p.major}{p.minor}"
                facts["devices"].append({"index": i, "name": p.name, "capability": cap,
                                         "total_memory": int(p.total_memory)})
        except Exception as exc:  # a broken driver is a fact, not a crash
            facts["cuda_error"] = f"{type(exc).__name__}: {exc}"
        compiler(facts)
    lib = loaded_libstdcxx()
    facts["libstdcxx"] = lib
    facts["libstdcxx_versions"] = versions_in(lib) if lib else []
    with open(out, "w") as f:
        json.dump(facts, f)
    if len(sys.argv) > 3:
        from inputs_probe import describe  # the script's folder is on sys.path

        with open(sys.argv[3], "w") as f:
            json.dump(describe(sys.argv[2]), f)


if __name__ == "__main__":
    main()
