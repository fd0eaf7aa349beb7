"""Time aoti_load_package of one package with and without TORCHINDUCTOR_VEC_ISA_OK=1, in a cold and a warm cache.

    python tests/gpu/isa_probe_cost.py PACKAGE.pt2 [--repeat N] [--python PY]

Each load runs in its own Python (inductor reads the flag at import and caches the probe per process).
"cold" is a new TORCHINDUCTOR_CACHE_DIR, "warm" the same directory again, so the probe's .so is there.
On torch 2.11 the probe starts a child Python that imports torch for every ISA the CPU lists, even in
a warm cache; with TORCHINDUCTOR_VEC_ISA_OK=1 nothing is probed (guides/debug-flags.md, load_only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
torch._inductor.aoti_load_package(sys.argv[1])
t2 = time.perf_counter()
from torch._inductor import cpu_vec_isa
print("ISA_COST " + json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "torch": torch.__version__,
                                "isa": str(cpu_vec_isa.pick_vec_isa()),
                                "isas": [str(i) for i in cpu_vec_isa.valid_vec_isa_list()]}))
"""
# name -> (TORCHINDUCTOR_VEC_ISA_OK or None, warm cache)
CASES = {"probe, cold cache": (None, False), "probe, warm cache": (None, True),
         "VEC_ISA_OK=1, cold cache": ("1", False), "VEC_ISA_OK=1, warm cache": ("1", True)}


def load_once(python: str, package: Path, cache: Path, isa_ok: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_VEC_ISA_OK"}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    if isa_ok:
        env["TORCHINDUCTOR_VEC_ISA_OK"] = isa_ok
    t = time.perf_counter()
    p = subprocess.run([python, "-c", CHILD, str(package)], env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t
    line = next((x for x in p.stdout.splitlines() if x.startswith("ISA_COST ")), None)
    if p.returncode != 0 or line is None:
        sys.exit(f"load failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    out = json.loads(line.split(" ", 1)[1])
    out["wall_s"] = wall
    out["warning"] = "Device information mismatch" in p.stderr
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("package", type=Path)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if not args.package.is_file():
        sys.exit(f"no package at {args.package}")
    rows: dict[str, list[dict]] = {name: [] for name in CASES}
    with tempfile.TemporaryDirectory(prefix="isa-probe-") as tmp:
        for i in range(args.repeat):
            for name, (isa_ok, warm) in CASES.items():
                cache = Path(tmp) / f"{'ok' if isa_ok else 'probe'}-{i}"
                if warm and not cache.is_dir():
                    load_once(args.python, args.package, cache, isa_ok)  # fill it (not timed)
                rows[name].append(load_once(args.python, args.package, cache, isa_ok))
    first = rows["probe, cold cache"][0]
    print(f"torch {first['torch']}; package {args.package}; ISAs the probe accepted: {first['isas']} "
          f"(picked {first['isa']}); {args.repeat} run(s) each, median shown")
    print(f"| {'case':<26} | load_aoti s | import torch s | process wall s | ISA warning |")
    print(f"|{'-' * 28}|-------------|----------------|----------------|-------------|")
    for name, rs in rows.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("load_s", "import_s", "wall_s")}
        print(f"| {name:<26} | {med['load_s']:11.1f} | {med['import_s']:14.1f} | {med['wall_s']:14.1f} | "
              f"{'yes' if any(r['warning'] for r in rs) else 'no':<11} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
