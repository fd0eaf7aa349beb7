"""Inductor's CPU ISA probe answered once per inductor cache, and without a torch import per probe child.

Loaded by path in the target interpreter (the runners beside this file); never imported by the server.

Every AOTI compile and load asks `cpu_vec_isa.pick_vec_isa()`, which checks each vector ISA the CPU lists (and the
avx512_bf16, VNNI, AMX and AMX-FP16 extras) with `VecISA.check_build`: build a tiny test library into the inductor
cache unless it is there, then start a child Python that loads it. The library is kept, the answer is not, so every
process probes again; up to torch 2.11 each child imports torch first (about 3-4 s a child on a GPU host, ten
children a process on a Xeon with AMX).

`install()` (with AOTI_DEBUG_REUSE_ISA_PROBE=1 and TORCHINDUCTOR_CACHE_DIR set) wraps `VecISA.check_build`:

- Reuse. An answer this cache already holds for the same check is returned as it was given; any other check is
  probed and its answer added to `<cache>/aoti_debug_isa_answers.jsonl`. The key is what decides the answer in one
  environment: the ISA and its build flags, the test code, the compiler (torch's own fingerprint of it), the
  interpreter, the torch build and LD_LIBRARY_PATH. A cache used from another environment gets other keys.
- A lighter child, where torch's imports torch first (2.11 and older). Before the first probe of a process, one
  child with the probe's environment and folder only imports torch. If that works, each probe child first loads the
  library as torch 2.13's child does (a grandchild with torch's lib folder on LD_LIBRARY_PATH, no torch import) and,
  only if that fails, does what the release's child did (import torch, then load). If torch cannot be imported
  there, every probe is the release's own. The answers can then differ from the release's only for a library that
  loads on its own but not after torch's libraries are in memory, which torch 2.13 no longer checks either.
"""

from __future__ import annotations  # the target Python may be older than the server's

import hashlib
import importlib.abc
import importlib.util
import json
import os
import re
import subprocess
import sys

ENV = "AOTI_DEBUG_REUSE_ISA_PROBE"
MODULE = "torch._inductor.cpu_vec_isa"
ANSWERS = "aoti_debug_isa_answers.jsonl"
# A file larger than this is not read (a few hundred bytes an answer, about ten a host).
MAX_BYTES = 1 << 20
# What install() did, in words (the runners register this module as sys.modules[NAME], so a script can read it).
NAME = "aoti_debug_isa_probe"
NOTES: list[str] = []
# Checks answered from the file / probed in this process.
COUNTS = {"reused": 0, "probed": 0}
PLACEHOLDER = "__lib_path__"
# A release's child that imports torch before the load (2.13's does so only off Linux, under `if sys.platform`).
OLD_CHILD = re.compile(r"^import torch\s*$", re.M)
# The grandchild only loads the library (2.13's own limit for its probe child); the import check may take longer.
FAST_TIMEOUT_S = 60
IMPORT_TIMEOUT_S = 300

LIGHT_CHILD = '''
import os, subprocess, sys
_lib = "__lib_path__"
_env = dict(os.environ)
_old = _env.get("LD_LIBRARY_PATH")
_env["LD_LIBRARY_PATH"] = __torch_lib__ + (os.pathsep + _old if _old else "")
try:
    _ok = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", _lib], env=_env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=__timeout__).returncode == 0
except Exception:
    _ok = False
if not _ok:
    import torch
    from ctypes import cdll
    cdll.LoadLibrary(_lib)
'''


def light_child(torch_lib: str) -> str:
    """The probe child's code for a torch whose lib folder is torch_lib (PLACEHOLDER stays for inductor to fill)."""
    return LIGHT_CHILD.replace("__torch_lib__", repr(torch_lib)).replace("__timeout__", str(FAST_TIMEOUT_S))


def _lighten(module, cls, cache: str) -> str:
    """Give cls the light child when its own imports torch first and torch imports in a probe child; returns which
    child the probes use."""
    current = getattr(cls, "_avx_py_load", None)
    if not isinstance(current, str) or PLACEHOLDER not in current or not OLD_CHILD.search(current):
        return "torch's own child"
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if not sys.platform.startswith("linux") or not torch_file:
        return "torch's own child"
    try:
        env = module.python_subprocess_env()
    except Exception:
        env = None
    try:
        imports = subprocess.run([sys.executable, "-c", "import torch"], env=env,
                                 cwd=cache if os.path.isdir(cache) else None, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, timeout=IMPORT_TIMEOUT_S).returncode == 0
    except Exception:
        imports = False
    if not imports:
        return "torch's own child (torch does not import in a probe child here)"
    cls._avx_py_load = light_child(os.path.join(os.path.dirname(torch_file), "lib"))
    return "the light child"


def _read(path: str) -> dict[str, bool]:
    answers: dict[str, bool] = {}
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES)
    except OSError:
        return answers
    for line in data.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:  # a write cut short
            continue
        if isinstance(rec, dict) and isinstance(rec.get("key"), str) and isinstance(rec.get("ok"), bool):
            answers.setdefault(rec["key"], rec["ok"])
    return answers


def _append(path: str, rec: dict) -> None:
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")
    except OSError:
        pass  # the answer is still used in this process


def _key(module, isa, code: str) -> str:
    """What decides a check's answer in one environment, hashed."""
    fingerprint = None
    flags = getattr(isa, "_arch_flags", None)
    try:
        fingerprint = module._get_isa_dry_compile_fingerprint(flags)
    except Exception:
        pass
    try:
        build_flags = isa.build_arch_flags()
    except Exception:
        build_flags = None
    try:
        from torch._inductor import config

        cxx = repr(config.cpp.cxx)
    except Exception:
        cxx = None
    torch_mod = sys.modules.get("torch")
    parts = [type(isa).__qualname__, str(isa), flags, build_flags, fingerprint, cxx, os.environ.get("CXX"),
             hashlib.sha256(code.encode()).hexdigest(), sys.executable, getattr(torch_mod, "__version__", None),
             getattr(torch_mod, "__file__", None), os.environ.get("LD_LIBRARY_PATH")]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def patch(module) -> str:
    """Wrap module.VecISA.check_build so that answers are reused from the cache's file; returns what was done."""
    cls = getattr(module, "VecISA", None)
    own = getattr(cls, "check_build", None)
    if not callable(own):
        return "not applied: this torch has no VecISA.check_build"
    if getattr(own, "_aoti_debug", False):
        return "already applied"
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not cache:
        return "not applied: TORCHINDUCTOR_CACHE_DIR is not set, so there is no cache to keep the answers in"
    path = os.path.join(cache, ANSWERS)
    answers = _read(path)
    child: list[str] = []  # which child the probes use, decided before the first probe

    def check_build(self, code):
        key = _key(module, self, code)
        if key in answers:
            COUNTS["reused"] += 1
            return answers[key]
        if not child:
            child.append(_lighten(module, cls, cache))
        ok = bool(own(self, code))
        COUNTS["probed"] += 1
        answers[key] = ok
        _append(path, {"key": key, "ok": ok, "isa": str(self), "child": child[0]})
        return ok

    check_build._aoti_debug = True
    cls.check_build = check_build
    return f"applied: {len(answers)} answer(s) in {path}"


class _Finder(importlib.abc.MetaPathFinder):
    """Patches cpu_vec_isa right after it is first imported, so nothing is imported earlier than the script would."""

    def __init__(self, notes: list[str]):
        self.notes = notes

    def find_spec(self, name, path, target=None):
        if name != MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader, notes = getattr(spec, "loader", None), self.notes
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            del loader.exec_module  # once: the loader's own method again
            run(module)
            notes.append(patch(module))

        loader.exec_module = exec_module
        return spec


def install(notes: list[str] | None = None) -> list[str]:
    """Patch now if cpu_vec_isa is loaded, else when it is; only where ENV is 1. notes (NOTES by default)
    receives what was done."""
    notes = NOTES if notes is None else notes
    if os.environ.get(ENV) != "1":
        return notes
    module = sys.modules.get(MODULE)
    if module is not None:
        notes.append(patch(module))
    else:
        sys.meta_path.insert(0, _Finder(notes))
    return notes
