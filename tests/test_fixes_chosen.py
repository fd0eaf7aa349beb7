"""Fixes chosen by the evidence on real logs: every golden fixture of a guide whose fixes state conditions gets the
fixes whose `when` holds for its root cause's facts, and at least one (a real failure of the class is never left
without a fix); the conditions that tell fixes of one guide apart are checked on the logs that hold them."""

from __future__ import annotations

import golden
import pytest
from aoti_debug.triage.causes import from_classification
from aoti_debug.triage.fixes import has_conditional_fixes
from aoti_debug.triage.rules import names_cause


def _names_its_cause(path) -> bool:
    """The log classifies as its guide's pattern and that pattern names a cause from the log alone (names_cause);
    a cuda_illegal_memory_access log, say, waits for memcheck and the kernel's launch."""
    c = golden.classify(golden.load(path))
    return c.pattern == path.name.split("__")[0] and names_cause(c)


CASES = [p for p in golden.all_fixtures() if has_conditional_fixes(p.name.split("__")[0]) and _names_its_cause(p)]


def cause_of(name: str):
    g = golden.load(next(p for p in golden.all_fixtures() if p.name == name))
    c = golden.classify(g)
    return c, from_classification(c, 1)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_a_real_log_of_a_guide_with_conditional_fixes_gets_at_least_one_fix(path) -> None:
    assert from_classification(golden.classify(golden.load(path)), 1).fixes, path.name


def test_a_runtime_without_cuda_gets_the_runtime_fix_not_the_rebuild_for_another_gpu() -> None:
    _, rc = cause_of("device_mismatch_load__cpu_cuda_package_on_cpu_torch.log")
    assert [f.split(":")[0] for f in rc.fixes] == ["Make the runtime match the package"]


def test_mixed_device_constants_get_the_same_device_rebuild_and_the_packaged_loader() -> None:
    _, rc = cause_of("device_mismatch_load__gpu_mixed_device_constants.log")
    assert rc.fixes[0].startswith("Compile and load on the same device type")
    assert not any(f.startswith("Make the runtime match") for f in rc.fixes)


def test_a_data_dependent_guard_gets_the_branch_fix_with_its_expression_not_the_range_fix() -> None:
    c, rc = cause_of("export_failure__cpu_data_dependent_guard.log")
    assert rc.fixes[0].startswith(f"Export cannot branch on the data-dependent value {c.fields['expression']}")
    assert not any("dynamic_shapes ranges" in f for f in rc.fixes)


def test_a_compiler_that_cannot_be_found_gets_the_compiler_fix_only() -> None:
    _, rc = cause_of("toolchain_setup__no_gxx_in_container.log")
    assert len(rc.fixes) == 1 and rc.fixes[0].startswith("Point torch at a working compiler")
