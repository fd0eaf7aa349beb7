"""Rerun overhead: a script that imports torch and exits, run directly and through the runner, side by side.

    python benchmarks/rerun_overhead.py [-n 9]

Prints the median wall time of each way (interleaved, so load changes hit all of them alike) and the
overhead of the runner against running the command directly. Target: within 3% or 50 ms. A second table
runs an empty script, so the runner's fixed cost shows without torch's import time around it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aoti_debug.runs import proc, rerun

TARGET_PCT, TARGET_MS = 3.0, 50.0


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench(code: str, n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["AOTI_DEBUG_HOME"] = str(root / "home")
        (root / "bench.py").write_text(code)
        argv = [sys.executable, str(root / "bench.py")]
        ways = {
            "direct (subprocess.run)": lambda: subprocess.run(argv, cwd=root, capture_output=True, check=True),
            "proc.run (the wrapper)": lambda: proc.run(proc.ProcSpec(argv=argv, cwd=root, log_dir=root / "p")),
            "rerun (flags, run dir, checks)": lambda: rerun.rerun(
                rerun.RerunRequest(argv=[sys.executable, "bench.py"], cwd=str(root)), [root]),
        }
        times: dict[str, list[float]] = {k: [] for k in ways}
        timed(ways["direct (subprocess.run)"])  # warm the page cache
        for _ in range(n):
            for name, fn in ways.items():
                times[name].append(timed(fn))
    base = statistics.median(times["direct (subprocess.run)"])
    print(f"\nscript: {code.strip()!r}")
    print(f"{'way':34} {'median s':>9} {'min s':>8} {'overhead':>18}")
    for name, ts in times.items():
        med = statistics.median(ts)
        over = med - base
        ok = "" if name.startswith("direct") else (
            "  ok" if over * 1000 <= TARGET_MS or over / base * 100 <= TARGET_PCT else "  OVER TARGET")
        extra = "" if name.startswith("direct") else f"{over * 1000:+7.1f} ms {over / base * 100:+5.1f}%"
        print(f"{name:34} {med:9.3f} {min(ts):8.3f} {extra:>18}{ok}")
    print(f"(n={n}, target: within {TARGET_PCT:.0f}% or {TARGET_MS:.0f} ms of direct)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=9, help="runs of each way (default: %(default)s)")
    args = ap.parse_args()
    bench("import torch\n", args.n)
    bench("pass\n", args.n)  # no torch: shows the runner's fixed cost alone


if __name__ == "__main__":
    main()
