"""On a GPU host only (marked `gpu`; elsewhere skipped with the reason "no CUDA GPU"): the triage suite live under
the strict example check, and a real out-of-bounds read under compute-sanitizer. On the GPU machine:

    PYTHONPATH=server python3 -m pytest -q -m gpu tests/test_gpu.py

(torch with CUDA, pytest, pydantic, pyyaml and anyio importable; compute-sanitizer and cuda-gdb on PATH). The tests
that read what a GPU run kept (tests/test_gpu_triage_suite.py, test_forensics.py...) need no GPU and run anywhere.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import strict_known
from aoti_debug.runs.memcheck import parse_memcheck

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.gpu, pytest.mark.spawns]
# The suite runs every CUDA example at once, each with this budget (tests/gpu/triage_suite.py); then the tables.
SUITE_BUDGET_S = 420
SUITE_TIMEOUT_S = 840


@pytest.mark.timeout(SUITE_TIMEOUT_S + 60)
def test_every_cuda_example_triages_to_the_recorded_strict_result(tmp_path) -> None:
    """What differs is what strict_known.GPU_SUITE records (ima_triton until its index is traced to input 1)."""
    out = tmp_path / "suite"
    run = subprocess.run([sys.executable, "tests/gpu/triage_suite.py", str(out), "--budget", str(SUITE_BUDGET_S)],
                         cwd=ROOT, capture_output=True, text=True, timeout=SUITE_TIMEOUT_S)
    assert (out / "triage_suite.json").is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    rows = json.loads((out / "triage_suite.json").read_text())["rows"]
    assert {r["example"]: r["differences"] for r in rows if not r["match"]} == strict_known.GPU_SUITE, run.stdout


@pytest.mark.timeout(1300)
def test_a_read_just_past_an_input_is_reported_by_compute_sanitizer_with_its_distance(tmp_path) -> None:
    if shutil.which("compute-sanitizer") is None:  # checked here: on a host without a GPU, "no CUDA GPU" says more
        pytest.skip("compute-sanitizer is not on PATH")
    run = subprocess.run([sys.executable, "tests/gpu/capture_memcheck.py", str(tmp_path), "--only", "oob"],
                         cwd=ROOT, capture_output=True, text=True, timeout=1250)
    log = tmp_path / "forensics" / "oob__aoti_gather_no_index_asserts.memcheck.log"
    assert log.is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    e = parse_memcheck(log.read_text(errors="replace")).errors[0]
    assert e.kernel and e.kernel.startswith("triton_") and e.file and e.line, e
    assert (e.access, e.direction, e.allocation_size) == ("read", "after", 100 * 12 * 4), e
    assert 0 <= e.distance_bytes < 12 * 4, e  # within the one row past the end
