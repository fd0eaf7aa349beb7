"""A native crash inside a generated kernel traced to the input holding the bad id, and invalid generated C++
blamed on the generated code: real CPU builds (two compiles: the triage of embedding_unchecked, whose kernel's
launch in the package and captured call name the id without a printer rebuild, and one that fails)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from aoti_debug.runs.forensics import find_debugger
from aoti_debug.triage import examples
from aoti_debug.triage.engine import triage
from aoti_debug.triage.examples import run_example
from aoti_debug.triage.model import TriageRequest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.spawns, pytest.mark.compiles]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.mark.timeout(1500)
@pytest.mark.skipif(find_debugger() is None, reason="needs gdb for the native backtrace")
def test_a_segfault_inside_a_generated_kernel_is_traced_to_the_input_holding_the_id_not_to_the_load(
        tmp_path) -> None:
    r = run_example("embedding_unchecked", folder=tmp_path / "ex")
    assert r.pattern == "segfault_no_message"
    assert "device_mismatch_load" not in {s.pattern for s in r.steps}
    # the capture runner had the call on disk before the kernel ran: the baseline names the call it died in
    assert any(f.startswith("the process died inside the first call of ") and "int64[4]" in f
               for f in r.steps[0].found), r.steps[0].found
    parity = next(s for s in r.steps if s.tool == "check_parity")
    bt = next(s for s in r.steps if s.preset == "backtrace")
    assert any("cpp_fused_add_embedding_0" in f for f in bt.found) and bt.index > parity.index
    # the kernel's launch in the package and the captured call name the id: no printer rebuild is needed
    assert bt.named_root_cause and not any(s.tool == "dump_kernel_inputs" for s in r.steps)
    rc = r.root_cause
    assert rc.step == bt.index and rc.expected == "0 <= index < 100" and rc.source.endswith(".kernel.cpp:22")
    assert rc and rc.named and rc.level == "culprit" and rc.against == []
    assert (rc.kind, rc.input_index, rc.kernel, rc.got) == ("index_value_out_of_range", 1,
                                                            "cpp_fused_add_embedding_0", "1e+12")
    assert "emb.weight [100, 16]" in rc.evidence[0]  # the table, a constant the printer omits
    # segfault_no_message's fixes for an index past its table in a generated kernel: the input, then the build flag
    assert len(rc.fixes) == 2 and rc.fixes[0].startswith("Validate or clamp input 1 (") and "(1e+12)" in rc.fixes[0]
    assert rc.fixes[1].startswith("Build with assert_indirect_indexing on")
    assert r.stopped_because == "root_cause_named" and r.example and r.example.match, r.example


@pytest.mark.timeout(900)
def test_invalid_generated_cpp_from_a_data_dependent_slice_is_an_inductor_bug_not_a_shim(tmp_path) -> None:
    pkg = tmp_path / "slice.pt2"
    argv = [sys.executable, "examples/item_slice_codegen.py", "--package", str(pkg)]
    r = triage(TriageRequest(argv=argv, cwd=str(ROOT)), [ROOT, tmp_path])
    rc = r.root_cause
    assert r.pattern == "cpp_compile_error" and rc and rc.named and rc.level == "culprit"
    assert rc.source and ".wrapper.cpp:" in rc.source and "the generated wrapper" in rc.summary
    assert "None" in rc.summary and any(e.split(">", 1)[0].isdigit() and "None" in e for e in rc.evidence)
    assert rc.fixes[0].startswith("Inductor wrote invalid C++") and "torch._check" in rc.fixes[0]
    assert not any("custom_ops_to_c_shims" in f for f in rc.fixes)
    assert examples.check(examples.get("item_slice_codegen"), "cpu", r).match
