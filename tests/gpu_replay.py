"""A stand-in repro that replays the real H200 capture, so the printer passes run end to end without a GPU.

    python tests/gpu_replay.py EXAMPLE [--slow]     (index_oob, nan, dynamic_zero_below_min)

Like a repro that compiles, it reads the printer flags from its environment and "builds" into
TORCHINDUCTOR_CACHE_DIR (it copies that job's real generated sources there), then prints what the real
run printed at that level (tests/fixtures/gpu_capture/logs/<example>.printer{3,2}.log, capture header
dropped) and exits with the real exit status. Level 2 replays the unfiltered capture: a superset of what
a filtered build prints. --slow waits a while first, as a compile would (progress reports get a chance).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

SLOW_S = 2.5
CAPTURE = Path(__file__).resolve().parent / "fixtures" / "gpu_capture"


def main() -> int:
    name = sys.argv[1]
    if "--slow" in sys.argv:
        time.sleep(SLOW_S)
    level = os.environ.get("AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "0")
    log = CAPTURE / "logs" / f"{name}.{'printer3' if level == '3' else 'printer2' if level == '2' else 'base'}.log"
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if cache:
        shutil.copytree(CAPTURE / "artifacts" / f"{name}.printer2" / "cache", cache, dirs_exist_ok=True)
        for p in Path(cache).rglob("*"):
            p.touch()  # generated now, as a real build's files would be
    text = log.read_text()
    status = next((int(ln.split()[2]) for ln in text.splitlines() if ln.startswith("# exit_status:")), 1)
    sys.stdout.write("".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("# ")))
    sys.stdout.flush()
    return status if status < 128 else 1


if __name__ == "__main__":
    sys.exit(main())
