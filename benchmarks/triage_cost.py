"""Triage cost: per CPU example, the baseline run's wall, the triage's wall and their ratio, side by side.

    python benchmarks/triage_cost.py [--examples index_oob,nan] [--device cpu] [--python PY] [--against DIR]

For each example of examples/examples.yaml that runs on the device (and needs no set-up host): the
baseline is the command triage starts with (`python examples/<script> --device D`, compile and run) in
a fresh folder with a fresh TORCHINDUCTOR_CACHE_DIR; the triage is `aoti-debug triage --example NAME`
in another fresh folder. They run one after the other, baseline first, so both pay the same host
caches (inductor's precompiled headers live outside TORCHINDUCTOR_CACHE_DIR). Target (issue 15):
triage <= 2x its baseline on every CPU example, aim 1.5x; the diagnosis must still match.
--against DIR (the server/ folder of another checkout, e.g. `git worktree add /tmp/old HEAD~3`): each example is
triaged by both trees right after the one baseline, in alternating order, so a before/after shares the host's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aoti_debug.common.paths import examples_dir
from aoti_debug.triage import examples
from aoti_debug.triage.model import TriageReport

TARGET, AIM = 2.0, 1.5
RUN_TIMEOUT_S = 1800


def baseline(ex: examples.Example, device: str, python: str) -> tuple[float, int]:
    """The example's build-and-run command, as triage's first step runs it (wall s, exit code)."""
    with tempfile.TemporaryDirectory(prefix=f"cost-{ex.name}-") as tmp:
        shutil.copytree(examples_dir(), Path(tmp) / "examples", ignore=shutil.ignore_patterns("*.yaml", "*.md"))
        argv, _ = examples.command(ex, device, python)
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / "cache"), "PYTHONFAULTHANDLER": "1"}
        t = time.perf_counter()
        p = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, timeout=RUN_TIMEOUT_S)
        return time.perf_counter() - t, p.returncode


def triage(ex: examples.Example, device: str, python: str, server: str | None = None) -> tuple[float, TriageReport]:
    """`triage --example` by this tree's aoti_debug, or by the one in the folder `server`."""
    with tempfile.TemporaryDirectory(prefix=f"cost-home-{ex.name}-") as home:
        argv = [sys.executable, "-m", "aoti_debug", "triage", "--example", ex.name, "--device", device, "--json",
                "--python", python]
        env = {**os.environ, "AOTI_DEBUG_HOME": home, **({"PYTHONPATH": server} if server else {})}
        t = time.perf_counter()
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        wall = time.perf_counter() - t
    if not p.stdout.strip():
        sys.exit(f"triage of {ex.name} printed no report ({p.returncode}): {p.stderr[-2000:]}")
    return wall, TriageReport.model_validate(json.loads(p.stdout))


def steps(r: TriageReport) -> str:
    return ", ".join(f"{s.tool}{'/' + s.preset if s.preset else ''} {s.cost_s:.0f}" for s in r.steps
                     if s.status != "skipped")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", help="comma list of example names (default: every runnable one on the device)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--python", default=sys.executable, help="the Python with torch the examples run with")
    ap.add_argument("--against", metavar="DIR", help="also triage with the aoti_debug in DIR (another checkout's "
                    "server/ folder), interleaved: a before/after under the same load")
    args = ap.parse_args()
    known = examples.manifest()
    names = args.examples.split(",") if args.examples else [
        n for n, e in known.items() if args.device in e.devices and e.runnable]
    unknown = [n for n in names if n not in known]
    if unknown:
        sys.exit(f"unknown examples {unknown}; known: {', '.join(known)}")
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the start")
    print("| example | tree | baseline s | triage s | ratio | triage / its step 1 | match | steps (s) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for i, name in enumerate(names):
        ex = known[name]
        base, code = baseline(ex, args.device, args.python)
        trees = [("this", None)] + ([("against", args.against)] if args.against else [])
        for tree, server in trees if i % 2 == 0 else trees[::-1]:
            wall, r = triage(ex, args.device, args.python, server)
            ratio = wall / base
            worst = max(worst, ratio) if server is None else worst
            match = "yes" if r.example and r.example.match else "NO"
            # the triage's own baseline step ran later than ours: on a busy host this ratio is the steadier one
            first = r.steps[0].cost_s if r.steps and r.steps[0].cost_s else float("nan")
            print(f"| {name} | {tree} | {base:.1f} (exit {code}) | {wall:.1f} | {ratio:.2f}x | {wall / first:.2f}x | "
                  f"{match} | {steps(r)} | {os.getloadavg()[0]:.1f} |", flush=True)
    print(f"worst ratio {worst:.2f}x (target <= {TARGET}x, aim {AIM}x); load average {os.getloadavg()[0]:.1f} "
          "at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
