"""Real printer runs shared by the kernel tests: dump_kernel_inputs on a CPU example, once per test session.

Each run compiles the example twice (level 3, then level 2), so the tests that need real CPU printer output
(parser, dump, explain on a cache folder) share these two: index_oob and nan, four compiles in all.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

from aoti_debug.kernels.dump import dump_kernel_inputs
from aoti_debug.kernels.model import DumpRequest, DumpResult
from pkgs import EXAMPLES, ROOT

# Two CPU compiles of a tiny model plus its runs; on two busy cores a compile can take two minutes.
PASS_TIMEOUT_S = 400.0


@functools.cache
def cpu_dump(example: str) -> tuple[DumpResult, Path]:
    """dump_kernel_inputs(['python', 'examples/<example>.py']) in a scratch folder; (result, that folder)."""
    work = Path(tempfile.mkdtemp(prefix=f"aoti_dump_{example}_"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    old = os.environ.get("AOTI_DEBUG_HOME")
    os.environ["AOTI_DEBUG_HOME"] = str(work / "home")  # run directories stay in the scratch folder
    try:
        req = DumpRequest(argv=[sys.executable, str(EXAMPLES / f"{example}.py")], cwd=str(work),
                          timeout_s=PASS_TIMEOUT_S)
        return dump_kernel_inputs(req, [ROOT, work]), work
    finally:
        if old is None:
            os.environ.pop("AOTI_DEBUG_HOME", None)
        else:
            os.environ["AOTI_DEBUG_HOME"] = old


def replay(example: str, *extra: str) -> list[str]:
    """The argv of the H200 capture replayed as a repro (tests/gpu_replay.py)."""
    return [sys.executable, str(ROOT / "tests" / "gpu_replay.py"), example, *extra]
