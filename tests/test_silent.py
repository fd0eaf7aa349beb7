"""A silent failure on real CPU builds: NaN outputs that nothing reports, caught by the capture runner and traced
to the kernel that made them and the input elements behind it (two compiles: the baseline, the printer)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aoti_debug.triage.examples import run_example

pytestmark = [pytest.mark.spawns, pytest.mark.compiles]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.mark.timeout(1200)
def test_nan_outputs_of_a_run_that_passed_are_traced_to_the_div_kernel_and_the_zero_row(tmp_path) -> None:
    r = run_example("silent_nan", folder=tmp_path / "ex")
    base, classify = r.steps[0], r.steps[1]
    assert base.tool == "rerun_with_flags" and any("output 0: 4 NaN" in f for f in base.found), base.found
    # nothing in the output names a failure; the capture runner's observation moves it to nan_inf
    assert r.initial_pattern == "unknown" and r.pattern == "nan_inf"
    assert classify.evidence[0].startswith("the capture runner saw call 1 output 0: 4 NaN")
    rc = r.root_cause
    assert rc and rc.named and rc.kind == "nan_produced" and rc.input_index == 0 and "div" in (rc.kernel or "")
    assert any("captured call 1: input 0 (float32[4, 8]) holds 8 zero(s), min 0.0 at [1, 0]" == e
               for e in rc.evidence), rc.evidence
    assert r.example and r.example.match, r.example
