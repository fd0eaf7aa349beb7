"""Culprit steps on real CPU runs: an OOM tied to an input dimension, a misspelled constant, an unregistered op."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from aoti_debug.triage import examples
from aoti_debug.triage.engine import triage
from aoti_debug.triage.model import TriageReport, TriageRequest
from pkgs import build_example

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.spawns, pytest.mark.compiles]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def load_only(name: str) -> TriageReport:
    """Triage `python examples/<name>.py --package P --load-only` on the example's prebuilt package."""
    pkg = build_example(name)
    argv = [sys.executable, f"examples/{name}.py", "--package", str(pkg), "--load-only"]
    # the build folder may be a link to a shared cache outside the checkout
    r = triage(TriageRequest(argv=argv, cwd=str(ROOT)), [ROOT, pkg.resolve().parent])
    assert r.package and Path(r.package).resolve() == pkg.resolve()
    return r


def matches_manifest(name: str, r: TriageReport) -> None:
    c = examples.check(examples.get(name), "cpu", r)
    assert c.match, c.differences


def test_an_oom_inside_the_exported_range_is_tied_to_the_input_dim_and_the_package_buffer() -> None:
    r = load_only("oom_dynamic")
    rc = r.root_cause
    assert r.pattern == "out_of_memory" and r.stopped_because == "root_cause_named"
    assert rc and rc.named and rc.level == "culprit" and rc.kind == "oom_input_dim"
    assert (rc.input_index, rc.dim, rc.got) == (0, 0, "12000") and rc.expected.endswith("1048576]")
    assert "buf0" in rc.summary and "x 1024 x 4096 float32" in rc.summary and "within" in rc.summary
    parity = r.steps[rc.step - 1]
    assert parity.tool == "check_parity"  # the classification alone only knew the class
    assert [s.named_root_cause for s in r.steps if s.tool == "classify_error"] == [False]
    assert rc.fixes and "Dim a realistic max" in rc.fixes[0] and "12000" in rc.fixes[0]
    assert not any("expandable_segments" in f for f in rc.fixes)  # not a fragmentation problem
    matches_manifest("oom_dynamic", r)


def test_a_misspelled_constant_is_named_against_the_package_fqns_with_the_closest_one() -> None:
    r = load_only("constant_misspelled")
    rc = r.root_cause
    assert r.pattern == "constant_loading" and rc and rc.named and rc.level == "culprit"
    assert (rc.kind, rc.constant, rc.expected) == ("constant_unknown", "lin.wieght", "lin.weight")
    assert "did you mean lin.weight" in rc.summary
    assert rc.fixes[0].startswith("Pass lin.weight instead of lin.wieght")
    matches_manifest("constant_misspelled", r)


def test_an_op_missing_from_the_loading_process_gets_the_load_phase_fix_not_register_fake() -> None:
    r = load_only("custom_op_unloaded")
    rc = r.root_cause
    assert r.pattern == "custom_op" and rc and rc.named and rc.level == "culprit"
    assert (rc.kind, rc.op) == ("custom_op_load", "aoti_examples::scaled_add")
    assert "registered by examples/custom_op_unloaded.py:" in rc.summary  # the module to import when serving
    # the target Python, probed: a fresh `import torch` there does not register it either
    assert any("does not register aoti_examples::scaled_add" in e for e in rc.evidence), rc.evidence
    assert "torch.ops.load_library" in rc.fixes[0] and "register_fake" not in rc.fixes[0].split("(")[0]
    assert not any(f.startswith("Register a fake") for f in rc.fixes)
    matches_manifest("custom_op_unloaded", r)


def test_the_gpu_allocators_rounded_size_is_solved_for_the_same_buffer_and_row_count() -> None:
    """issue 13's H100 run printed "Tried to allocate 187.50 GiB" for this model; the CPU package has the same
    buffer expression, so the rounded GiB text must solve to the same symbol value as the exact byte count."""
    from aoti_debug.package.inspect import inspect_package
    from aoti_debug.package.pt2zip import open_pt2
    from aoti_debug.triage import culprit_oom

    pkg = build_example("oom_dynamic")
    model = inspect_package(pkg).model()
    with open_pt2(pkg) as arc:
        wrapper = arc.read_text(model.wrapper)
    req = culprit_oom.requested("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 187.50 GiB.")
    assert req and not req.exact
    (hit,) = culprit_oom.match(req, wrapper)
    assert (hit.buffer, hit.value, hit.dtype) == ("buf0", 12000, "float32")
    assert culprit_oom.input_of(hit.symbol, model.contract)[:3] == (0, model.contract.inputs[0].name, 0)
