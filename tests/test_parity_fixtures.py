"""The CUDA side on a CPU-only machine: packages built on an H200 and the real runs recorded there.

tests/gpu/verify_parity.py made them (torch 2.11.0+cu130): parity_cuda.pt2 with the system g++, and
parity_cuda_static_libstdcxx.pt2 with the host's wrapped /opt/gcc/bin/g++, whose every load segfaulted.
Each .verify.json holds, per case, the inputs, and the real outcome with and without
AOTI_RUNTIME_CHECK_INPUTS=1. These tests replay today's predictions against those outcomes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from aoti_debug.package.inspect import inspect_package
from aoti_debug.parity.engine import build_report, check_parity
from aoti_debug.runs import probe
from aoti_debug.runs.probe import ActualInput, ProbeOutcome

PACKAGES = Path(__file__).resolve().parent / "fixtures" / "packages"
CUDA = PACKAGES / "parity_cuda.pt2"
STATIC = PACKAGES / "parity_cuda_static_libstdcxx.pt2"
HOW = "capture it with tests/gpu/verify_parity.py on a GPU host and commit it to tests/fixtures/packages/"
needs_cuda = pytest.mark.skipif(not CUDA.exists(), reason=f"no CUDA fixture package: {HOW}")
needs_static = pytest.mark.skipif(not STATIC.exists(), reason=f"no static-libstdc++ fixture: {HOW}")


def recorded(pkg: Path) -> dict:
    return json.loads(pkg.with_suffix(".verify.json").read_text())


def replay(pkg: Path, case: dict):
    facts = inspect_package(pkg)
    inputs = [ActualInput.model_validate(i) for i in case["inputs"]]
    return build_report(facts, facts.model(), ProbeOutcome(data=recorded(pkg)["runtime"]), inputs, "json")


@needs_cuda
def test_the_h200_package_is_read_without_a_gpu() -> None:
    m = inspect_package(CUDA).model()
    assert (m.device_key, m.compute_capability) == ("cuda", "90")
    assert m.cubins and set(m.kernels_loaded.values()) <= {c.rsplit("/", 1)[-1] for c in m.cubins}
    x, ids = m.contract.inputs
    assert (x.dtype, x.device_type, x.sizes[0].min, x.sizes[0].max, x.sizes[1].value) == ("float32", "cuda", 2, 64, 8)
    assert (ids.dtype, ids.device_type) == ("int64", "cuda")
    # built by 2.11: env-gated device checks (>= 2.8), none of the 2.12+ forms
    assert m.torch_hint.min_version == "2.8" and not any("last_error_api" in e for e in m.torch_hint.evidence)
    assert m.libraries[0].elf.glibcxx_max and "libcuda.so.1" in m.libraries[0].elf.needed


# Read off parity_cuda.verify.json by a person, per recorded case: the error the run with
# AOTI_RUNTIME_CHECK_INPUTS=1 printed (None: it went through), and whether the inputs are wrong (the checks or the
# package refused them, or eager did). check_parity must predict exactly this.
RECORDED = {
    "ok": (None, False),
    "wrong_device": ("input_handles[0]: unmatched device type, expected: 11(cuda), but got: 0", True),
    "ids_int32": ("input_handles[1]: unmatched dtype, expected: 4(at::kLong), but got: 3", True),
    "batch_above_max": ("input_handles[0]: dim value is too large at 0, expected to be <= 64, but got: 100", True),
    "batch_below_min": ("input_handles[0]: dim value is too small at 0, expected it to be >= 2, but got: 1", True),
    "width_9": ("input_handles[0]: unmatched dim value at 1, expected: 8, but got: 9", True),
    "x_transposed": ("input_handles[0]: unmatched stride value at 0, expected: 8, but got: 1", True),
    "count": ("expected inputs vector size to be 2, but got 1", True),
    # x has 4 rows, ids 6: both runs exit 0 (2.11 checks no shared symbol) while eager raises "The size of tensor
    # a (4) must match the size of tensor b (6)": wrong inputs that no run-time check catches
    "shared_batch": (None, True),
}


@needs_cuda
def test_the_stated_expectations_are_what_the_recorded_runs_show() -> None:
    cases = recorded(CUDA)["cases"]
    assert set(RECORDED) == set(cases)
    for name, (check_error, wrong) in RECORDED.items():
        real = cases[name]["with_checks"]
        printed = real["outcome"] + "\n" + real["stderr_tail"]
        assert (check_error in printed) if check_error else real["outcome"] == "ok", name
        refused = {real["outcome"], cases[name]["without_checks"]["outcome"]} != {"ok"}
        assert wrong == (refused or bool(real.get("eager_error"))), name


@needs_cuda
@pytest.mark.parametrize("name", sorted(RECORDED))
def test_todays_prediction_matches_the_run_recorded_on_the_h200(name) -> None:
    r = replay(CUDA, recorded(CUDA)["cases"][name])
    check_error, wrong = RECORDED[name]
    assert (r.predicted_check_error, r.ok) == (check_error, not wrong)


@needs_cuda
def test_a_shared_batch_mismatch_is_predicted_silent_as_recorded() -> None:
    r = replay(CUDA, recorded(CUDA)["cases"]["shared_batch"])
    m = next(m for m in r.mismatches if m.kind == "shared_dim")
    assert m.with_check is None and (m.input_index, m.dim, m.expected, m.got) == (1, 0, "4", "6")
    assert "silent_wrong_result" in [o.outcome for o in m.at_runtime]


@needs_cuda
def test_cpu_inputs_for_the_h200_package_predict_the_observed_device_error() -> None:
    r = replay(CUDA, recorded(CUDA)["cases"]["wrong_device"])
    assert r.predicted_check_error == "input_handles[0]: unmatched device type, expected: 11(cuda), but got: 0"


@needs_cuda
@pytest.mark.spawns
def test_on_this_cpu_only_machine_the_h200_package_is_reported_unloadable() -> None:
    r = check_parity(CUDA, python=probe.check_python(sys.executable))
    assert not r.ok and {"no_cuda_build", "no_gpu"} & {m.kind for m in r.mismatches}


@needs_static
def test_a_package_with_its_own_static_libstdcxx_is_flagged_and_every_recorded_load_segfaulted() -> None:
    r = replay(STATIC, recorded(STATIC)["cases"]["ok"])
    m = next(m for m in r.mismatches if m.kind == "static_libstdcxx")
    assert m.severity == "error" and "/opt/gcc/bin/g++" in m.message and not r.ok
    outcomes = [c[k]["returncode"] for c in recorded(STATIC)["cases"].values()
                for k in ("with_checks", "without_checks")]
    assert outcomes and set(outcomes) == {-11}
