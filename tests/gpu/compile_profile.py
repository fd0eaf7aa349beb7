"""Where a CUDA (or CPU) AOTI build and load spend their time: phases, child processes, cProfile's top.

    python tests/gpu/compile_profile.py [--device cuda] [--runs cold,warm,cold_isa_ok] [--top 25] [--out DIR]

Each run is a fresh Python that builds and loads the MLP of examples/static_shape_mismatch.py (the
smallest CUDA example) and prints, as one ``PROFILE {json}`` line: the wall of ``import torch``,
``export``, ``aoti_compile_and_package``, ``aoti_load_package`` and the first call; every child
process inductor started (argv head, seconds, which phase); and the top functions of cProfile by
cumulative time inside the compile and inside the load. Runs:

- ``cold``: a new ``TORCHINDUCTOR_CACHE_DIR`` (what a triage's baseline meets);
- ``warm``: the same directory again (what a triage's later reruns meet);
- ``cold_isa_ok``: a new directory with ``TORCHINDUCTOR_VEC_ISA_OK=1`` (for comparison only: triage
  never sets it on a compile, since it would change the CPU code inductor generates);
- ``cold_reuse`` / ``warm_reuse``: a new directory, then the same again, with the reuse_isa_probe preset's patch
  (server/aoti_debug/probes/isa_probe.py, AOTI_DEBUG_REUSE_ISA_PROBE=1), which triage puts on every rerun.

The environment is passed on (``CXX`` included). With ``--out`` the cProfile dumps are kept there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import cProfile, importlib.util, io, json, os, pstats, subprocess, sys, time
device, top, dump = sys.argv[1], int(sys.argv[2]), sys.argv[3]
isa_notes = []
if os.environ.get("AOTI_DEBUG_REUSE_ISA_PROBE") == "1":
    spec = importlib.util.spec_from_file_location("aoti_debug_isa_probe", os.environ["PROFILE_ISA_PROBE"])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.install(isa_notes)
phase = ["import"]
children = []
_real_init = subprocess.Popen.__init__
def _init(self, args, *a, **k):
    self._prof_t0 = time.perf_counter()
    self._prof_argv = [str(x) for x in (args if isinstance(args, (list, tuple)) else [args])]
    self._prof_phase = phase[0]
    _real_init(self, args, *a, **k)
_real_wait = subprocess.Popen.wait
def _wait(self, *a, **k):
    rc = _real_wait(self, *a, **k)
    if not getattr(self, "_prof_done", False):
        self._prof_done = True
        head = " ".join(" ".join(x.split())[:120] for x in self._prof_argv[:4])
        children.append({"phase": self._prof_phase, "argv": head[:240],
                         "s": round(time.perf_counter() - self._prof_t0, 2)})
    return rc
subprocess.Popen.__init__ = _init
subprocess.Popen.wait = _wait
t = {}
t0 = time.perf_counter()
import torch
t["import_torch"] = time.perf_counter() - t0
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(device).eval()
x = torch.randn(4, 8, device=device)
phase[0] = "export"
t0 = time.perf_counter()
ep = torch.export.export(model, (x,))
t["export"] = time.perf_counter() - t0

def profiled(name, fn):
    phase[0] = name
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    out = prof.runcall(fn)
    t[name] = time.perf_counter() - t0
    if dump:
        prof.dump_stats(os.path.join(dump, name + ".prof"))
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    rows = []
    for (file, line, func), (cc, nc, tt, ct, callers) in st.stats.items():
        rows.append((ct, tt, nc, f"{os.path.basename(file)}:{line}({func})"))
    def pick(rs):
        return [{"cum_s": round(ct, 2), "own_s": round(tt, 2), "calls": nc, "fn": fn_} for ct, tt, nc, fn_ in rs[:top]]
    by_cum = pick(sorted(rows, reverse=True))
    by_own = pick(sorted(rows, key=lambda r: r[1], reverse=True))
    return out, {"cumulative": by_cum, "own": by_own}

pkg = os.path.join(os.environ["PROFILE_TMP"], "mlp.pt2")
_, compile_top = profiled("compile", lambda: torch._inductor.aoti_compile_and_package(ep, package_path=pkg))
runner, load_top = profiled("load", lambda: torch._inductor.aoti_load_package(pkg))
phase[0] = "call"
t0 = time.perf_counter()
y = runner(x)
if device == "cuda":
    torch.cuda.synchronize()
t["call"] = time.perf_counter() - t0
print("PROFILE " + json.dumps({"torch": torch.__version__, "isa_notes": isa_notes,
                               "phases_s": {k: round(v, 2) for k, v in t.items()},
                               "children": children, "compile_top": compile_top, "load_top": load_top}))
"""


PROBE = Path(__file__).resolve().parents[2] / "server" / "aoti_debug" / "probes" / "isa_probe.py"
RUNS = ("cold", "warm", "cold_isa_ok", "cold_reuse", "warm_reuse")


def one_run(python: str, device: str, cache: Path, isa_ok: bool, top: int, dump: str, tmp: Path,
            reuse: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_VEC_ISA_OK", "AOTI_DEBUG_REUSE_ISA_PROBE")}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    env["PROFILE_TMP"] = str(tmp)
    env["PROFILE_ISA_PROBE"] = str(PROBE)
    if reuse:
        env["AOTI_DEBUG_REUSE_ISA_PROBE"] = "1"
    if isa_ok:
        env["TORCHINDUCTOR_VEC_ISA_OK"] = "1"
    t = time.perf_counter()
    p = subprocess.run([python, "-c", CHILD, device, str(top), dump], env=env, capture_output=True, text=True,
                       timeout=900)
    wall = time.perf_counter() - t
    line = next((x for x in p.stdout.splitlines() if x.startswith("PROFILE ")), None)
    if p.returncode != 0 or line is None:
        sys.exit(f"run failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    out = json.loads(line.split(" ", 1)[1])
    out["process_wall_s"] = round(wall, 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    ap.add_argument("--runs", default="cold,warm,cold_isa_ok")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    runs = [r for r in args.runs.split(",") if r]
    bad = [r for r in runs if r not in RUNS]
    if bad:
        sys.exit(f"unknown run(s): {', '.join(bad)}")
    with tempfile.TemporaryDirectory(prefix="compile-profile-") as d:
        tmp = Path(d)
        results = {}
        for name in runs:
            reuse = name.endswith("_reuse")
            cache = tmp / {"cold_isa_ok": "cache_isa_ok", "cold_reuse": "cache_reuse", "warm_reuse": "cache_reuse"}.get(
                name, "cache")
            if name.startswith("warm") and not cache.is_dir():
                one_run(args.python, args.device, cache, False, args.top, "", tmp, reuse)  # fill it (not shown)
            dump = ""
            if args.out:
                dump = str(Path(args.out) / name)
                os.makedirs(dump, exist_ok=True)
            results[name] = one_run(args.python, args.device, cache, name == "cold_isa_ok", args.top, dump, tmp, reuse)
    for name, r in results.items():
        print(f"\n## {name} (torch {r['torch']}, device {args.device}); process wall {r['process_wall_s']} s")
        print("phases (s): " + ", ".join(f"{k} {v}" for k, v in r["phases_s"].items()))
        if r.get("isa_notes"):
            print("ISA probe reuse: " + "; ".join(r["isa_notes"]))
        print("child processes (phase, s, argv):")
        for c in r["children"]:
            print(f"  {c['phase']:<8} {c['s']:7.2f}  {c['argv']}")
        for part in ("compile_top", "load_top"):
            for order in ("cumulative", "own"):
                print(f"{part}, by {order} time (cumulative s, own s, calls, function):")
                for row in r[part][order]:
                    print(f"  {row['cum_s']:8.2f} {row['own_s']:8.2f} {row['calls']:7} {row['fn']}")
    if args.out:
        Path(args.out, "compile_profile.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
