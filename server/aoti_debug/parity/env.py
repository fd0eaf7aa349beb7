"""Compare a model's package facts with the loading process: device, GPU, CPU ISA, platform, C++ runtime."""

from __future__ import annotations

import os
import re

from aoti_debug.package import elfscan
from aoti_debug.package.contract import ModelFacts
from aoti_debug.package.torch_facts import enums, version_tuple
from aoti_debug.parity.rules import Mismatch, make
from aoti_debug.runs.probe import RuntimeFacts

GCC_VERSION_RX = re.compile(r"(\d+\.\d+(?:\.\d+)?)\s*$")


def package_mismatches(model: ModelFacts, load_device: str | None) -> list[Mismatch]:
    """What the package alone says will fail, whatever machine loads it."""
    out: list[Mismatch] = []
    if model.device_key is None:
        out.append(make("no_metadata", f"model '{model.name}' has no device metadata (AOTI_DEVICE_KEY)"))
    if not model.libraries and model.wrapper is None:
        out.append(make("no_library", f"model '{model.name}' has neither a .so nor a .cpp"))
    if len(model.libraries) > 1:
        out.append(make("several_libraries", f"model '{model.name}' has {len(model.libraries)} .so files"))
    if load_device and model.device_key:
        want = load_device.split(":", 1)[0].strip().lower()
        if want != model.device_key:
            out.append(make("load_device", f"loading on {load_device}, but the package was compiled for "
                            f"{model.device_key}", expected=model.device_key, got=load_device))
    for lib in model.libraries:
        needed = lib.elf.needed
        if lib.elf.error is None and any(n.startswith(("libtorch", "libc10")) for n in needed) and not any(
                n.startswith(("libstdc++", "libc++")) for n in needed):
            out.append(make("static_libstdcxx", f"{lib.member.rsplit('/', 1)[-1]} links libstdc++ statically "
                            f"(no libstdc++.so.6 among {len(needed)} needed libraries; {lib.size_bytes} bytes), "
                            f"built by {model.toolchain.compiler if model.toolchain else 'an unknown compiler'}",
                            expected="libstdc++.so.6 in DT_NEEDED", got=", ".join(needed)))
    present = {c.rsplit("/", 1)[-1] for c in model.cubins}
    missing = sorted({b for b in model.kernels_loaded.values() if b not in present})
    if missing:
        out.append(make("missing_kernel_binary", f"{len(missing)} kernel binaries named by loadKernel are not in the "
                        f"package ({', '.join(missing[:3])})", expected=", ".join(missing[:3])))
    return out


def _gpu(model: ModelFacts, rt: RuntimeFacts, load_device: str | None) -> list[Mismatch]:
    if rt.torch_cuda is None and rt.torch_hip is None:
        return [make("no_cuda_build", f"the package needs {model.device_key}, torch {rt.torch_version} has no CUDA",
                     expected=model.device_key, got=rt.torch_version)]
    if not rt.cuda_available or not rt.device_count:
        why = rt.cuda_error or "torch.cuda.is_available() is False"
        return [make("no_gpu", f"the package needs a GPU; the target sees none ({why})", expected=model.device_key,
                     got="no GPU")]
    index = int(load_device.split(":", 1)[1]) if load_device and re.fullmatch(r"\w+:\d+", load_device) else 0
    if index >= len(rt.devices):
        return [make("no_gpu", f"device index {index} requested; the target sees {len(rt.devices)} GPU(s)",
                     expected=f"cuda:{index}", got=f"{len(rt.devices)} GPU(s)")]
    dev = rt.devices[index]
    want = (model.compute_capability or "").strip()
    if want and dev.capability and want != dev.capability:
        return [make("compute_capability", f"kernels built for compute capability {want}; GPU {index} ({dev.name}) "
                     f"is {dev.capability}", expected=want, got=dev.capability)]
    return []


def _cpu(model: ModelFacts, rt: RuntimeFacts) -> list[Mismatch]:
    tokens = (model.cpu_isa or "").split()
    table = enums().cpu_isa_flags
    if not tokens or not rt.cpu_flags or (model.machine and rt.machine and model.machine != rt.machine):
        return []
    missing = sorted({f for t in tokens for f in table.get(t, []) if f not in rt.cpu_flags})
    if missing:
        return [make("cpu_isa", f"package compiled for {model.cpu_isa}; this CPU lacks {', '.join(missing)}",
                     expected=model.cpu_isa, got=", ".join(missing))]
    tc = model.toolchain
    if tc and tc.march == "native" and rt.cpu_capability and tokens[0] != rt.cpu_capability.upper():
        return [make("march_native", f"built with -march=native on a {model.cpu_isa} CPU; this one is "
                     f"{rt.cpu_capability}", expected=model.cpu_isa, got=rt.cpu_capability)]
    return []


def _toolchain(model: ModelFacts, rt: RuntimeFacts) -> list[Mismatch]:
    out: list[Mismatch] = []
    provided = set(rt.libstdcxx_versions)
    for lib in model.libraries:
        needed = set(lib.elf.required_versions.get("libstdc++.so.6", []))
        absent = sorted(needed - provided, key=elfscan.version_key) if provided else []
        if absent:
            out.append(make("glibcxx", f"{lib.member.rsplit('/', 1)[-1]} needs {', '.join(absent)}; the target's "
                            f"{rt.libstdcxx} lacks them", expected=absent[-1], got=elfscan.newest(provided, "GLIBCXX")))
    tc = model.toolchain
    built = next((GCC_VERSION_RX.search(c) for lib in model.libraries for c in lib.elf.comment
                  if c.startswith("GCC:")), None)
    target = GCC_VERSION_RX.search(rt.compiler_version or "")
    if tc and tc.compiler and rt.compiler:
        name_differs = "/" in tc.compiler and tc.compiler != rt.compiler and (
            os.path.realpath(tc.compiler) != rt.compiler_path)
        version_differs = built and target and built.group(1) != target.group(1)
        if name_differs or version_differs:
            got = f"{rt.compiler_path or rt.compiler}" + (f" {target.group(1)}" if target else "")
            exp = tc.compiler + (f" {built.group(1)}" if built else "")
            out.append(make("compiler_skew", f"built with {exp}; the target's inductor compiler is {got}",
                            expected=exp, got=rt.compiler_path or rt.compiler))
    return out


def runtime_mismatches(model: ModelFacts, rt: RuntimeFacts, load_device: str | None) -> list[Mismatch]:
    """What differs between the package and the process that will load it."""
    out: list[Mismatch] = []
    for what, want, got in (("platform", model.platform, rt.platform), ("machine", model.machine, rt.machine)):
        if want and got and want != got:
            out.append(make("platform", f"package {what} is {want}; the target is {got}", expected=want, got=got))
    elf_machine = next((lib.elf.machine for lib in model.libraries if lib.elf.machine), None)
    if elf_machine and rt.machine and elf_machine != rt.machine and not any(m.kind == "platform" for m in out):
        out.append(make("platform", f"the .so is built for {elf_machine}; the target is {rt.machine}",
                        expected=elf_machine, got=rt.machine))
    if rt.torch_error:
        return out
    if model.device_key == "cuda":
        out += _gpu(model, rt, load_device)
    elif model.device_key == "cpu":
        out += _cpu(model, rt)
    out += _toolchain(model, rt)
    hint = model.torch_hint.min_version
    if hint and rt.torch_version and version_tuple(rt.torch_version)[:2] < version_tuple(hint)[:2]:
        out.append(make("torch_version", f"the package looks built by torch >= {hint}; the target has "
                        f"{rt.torch_version}", expected=hint, got=rt.torch_version))
    return out
