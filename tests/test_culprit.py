"""Culprit level, evidence against, and fixes chosen by the evidence: offline triage of real logs (no compile)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aoti_debug.triage.context import Ctx
from aoti_debug.triage.engine import triage
from aoti_debug.triage.model import RootCause, TriageReport, TriageRequest
from golden import load

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "fixtures" / "logs"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def offline(tmp_path: Path, fixture: str, **kw) -> TriageReport:
    """Triage a golden fixture's real log (markers removed, header blanked) as a user's log file."""
    log = tmp_path / f"{fixture}.log"
    log.write_text(load(LOGS / f"{fixture}.log").log)
    return triage(TriageRequest(log_path=str(log), probe_runtime=False, **kw), [tmp_path, ROOT])


def test_a_cause_is_named_only_at_culprit_level_and_with_nothing_against_it() -> None:
    base = {"kind": "device", "summary": "s", "pattern": "device_mismatch_load"}
    assert not RootCause(named=True, level="pattern", **base).named
    assert not RootCause(named=True, level="culprit", against=["parity: same device"], **base).named
    assert RootCause(named=True, level="culprit", **base).named


def test_a_device_cause_is_overturned_when_parity_later_finds_the_same_device() -> None:
    ctx = Ctx(req=TriageRequest(log_path="x"), roots=[ROOT],
              report=TriageReport(run_id="r", status="running", mode="offline"))
    ctx.consider(RootCause(named=True, level="culprit", kind="device", summary="load crash", pattern="x"))
    assert ctx.root.named
    ctx.establish("same_device", "check_parity: compiled for cpu, loaded on cpu (same device type)")
    assert not ctx.root.named and ctx.root.against == ["check_parity: compiled for cpu, loaded on cpu (same "
                                                       "device type)"]
    # an uncontradicted hypothesis now replaces it, and a cause of another kind is not affected by the fact
    ctx.consider(RootCause(named=False, level="culprit", kind="illegal_access", summary="k", pattern="x"))
    assert ctx.root.kind == "illegal_access" and ctx.root.against == []


def test_a_restated_oom_without_the_package_stays_at_pattern_level_with_the_fixes_for_its_class(tmp_path) -> None:
    r = offline(tmp_path, "out_of_memory__aoti_load_llama_dso")
    rc = r.root_cause
    assert r.pattern == "out_of_memory" and rc and rc.level == "pattern" and not rc.named
    assert r.stopped_because != "root_cause_named"
    assert any("expandable_segments" in f for f in rc.fixes) and not any("Dim" in f for f in rc.fixes)
    assert "Failure class known, culprit not named" in r.markdown


def test_an_op_missing_in_the_serving_process_gets_the_load_fix(tmp_path) -> None:
    r = offline(tmp_path, "custom_op__cpu_op_not_in_serving_process")
    rc = r.root_cause
    assert rc and rc.named and (rc.level, rc.kind, rc.op) == ("culprit", "custom_op_load", "mylib::twice")
    assert len(rc.fixes) == 1 and "torch.ops.load_library" in rc.fixes[0]


def test_an_op_without_a_fake_kernel_gets_the_export_fix(tmp_path) -> None:
    r = offline(tmp_path, "custom_op__cpu_no_fake_impl")
    rc = r.root_cause
    assert rc and rc.named and (rc.kind, rc.op) == ("custom_op_export", "mylib::twice")
    assert len(rc.fixes) == 1 and rc.fixes[0].startswith("Register a fake (meta) implementation for mylib::twice")


def test_a_constant_error_without_the_package_names_no_culprit(tmp_path) -> None:
    r = offline(tmp_path, "constant_loading__cpu_load_constants_state_dict")
    rc = r.root_cause
    assert r.pattern == "constant_loading" and rc and not rc.named and rc.level == "pattern"
    parity = next(s for s in r.steps if s.tool == "check_parity")
    assert parity.status == "skipped" and "package" in parity.skipped_because


def test_a_compile_error_at_a_c_shim_declaration_is_the_users_shim_with_its_line(tmp_path) -> None:
    r = offline(tmp_path, "cpp_compile_error__cpu_c_shim_undeclared_type")
    rc = r.root_cause
    assert rc and rc.named and rc.level == "culprit" and rc.source.endswith(".wrapper.cpp:714")
    assert "C-shim declaration" in rc.summary and "codegen bug" not in rc.summary
    assert any("714> extern AOTITorchError aoti_torch_cpu_twice" in e for e in rc.evidence)
    assert rc.fixes and rc.fixes[0].startswith("The error is in your C++")
    assert not any("Inductor wrote invalid C++" in f for f in rc.fixes)


CULPRIT = ROOT / "tests" / "fixtures" / "culprit"


def test_a_gdb_frame_inside_a_generated_kernel_is_a_run_crash_not_a_load_crash() -> None:
    """The loader's own run frames (AOTIModelPackageLoader::boxed_run) once made this read as a load crash."""
    from aoti_debug.runs.forensics import attribute_backtrace, parse_faulthandler, parse_gdb

    text = (CULPRIT / "embedding_unchecked.backtrace.log").read_text()
    bt = attribute_backtrace(parse_gdb(text, "gdb"), parse_faulthandler(text))
    assert bt.signal == "SIGSEGV" and bt.kernel == "cpp_fused_add_embedding_0"
    assert (bt.points_to, bt.during_load) == ("generated_code", False)
    assert "not while loading" in bt.verdict and "dump_kernel_inputs" in bt.verdict


def test_offline_a_kernel_segfault_without_the_printer_stops_at_the_kernel_and_names_nothing(tmp_path) -> None:
    r = triage(TriageRequest(log_path=str(CULPRIT / "embedding_unchecked.base.log"), exit_status=-11,
                             probe_runtime=False,
                             evidence_logs={"backtrace": str(CULPRIT / "embedding_unchecked.backtrace.log")}),
               [ROOT])
    assert r.pattern == "segfault_no_message" and r.stopped_because != "root_cause_named"
    assert "device_mismatch_load" not in {s.pattern for s in r.steps}
    rc = r.root_cause
    assert rc and not rc.named and rc.kind == "illegal_access" and rc.kernel == "cpp_fused_add_embedding_0"
    assert rc.fixes == ["Print the inputs of cpp_fused_add_embedding_0 (aoti-debug dump-kernels --kernels "
                        "cpp_fused_add_embedding_0 -- python repro.py): a generated kernel crashed reading memory, "
                        "most often with an index value past the tensor it reads."]
    dump = next(s for s in r.steps if s.tool == "dump_kernel_inputs")
    assert dump.status == "skipped" and "offline" in dump.skipped_because
    assert "crashed while loading" not in r.markdown


def test_an_undefined_c_shim_symbol_gets_the_shim_library_fix_not_a_toolchain_rebuild(tmp_path) -> None:
    r = offline(tmp_path, "native_abi__cpu_c_shim_undefined_symbol")
    rc = r.root_cause
    assert rc and rc.named and rc.level == "culprit" and rc.kind == "missing_symbol"
    assert len(rc.fixes) == 1 and "aot_inductor.custom_op_libs" in rc.fixes[0] and "aoti_torch_cpu_twice" in rc.fixes[0]
    assert not any("CXX=/usr/bin/g++" in f for f in rc.fixes)


def test_the_report_shows_the_evidence_for_and_against_a_contradicted_cause() -> None:
    from aoti_debug.triage.markdown import markdown

    rc = RootCause(named=True, level="culprit", kind="device", summary="The .so crashed while loading.",
                   pattern="segfault_no_message", evidence=["#1 AOTInductorModelContainerCreateWithDevice"],
                   against=["check_parity: the package was compiled for cpu and torch 2.13.0+cpu loads it on cpu "
                            "(same device type)"])
    text = markdown(TriageReport(run_id="r", status="done", mode="offline", pattern="segfault_no_message",
                                 root_cause=rc, stopped_because="steps_exhausted"))
    assert not rc.named and "**A cause the evidence contradicts (not the root cause):**" in text
    assert text.index("**Evidence for**") < text.index("**Evidence against**")
    assert "(same device type)" in text.split("**Evidence against**")[1]


def test_a_cause_that_starts_with_a_kernel_or_buffer_name_keeps_the_name_as_the_package_spells_it() -> None:
    """The H200 suite's silent_nan report once began 'Triton_per_fused_div_sum_0 writes NaN ...'."""
    from aoti_debug.triage.causes import capitalized

    for named in ("triton_per_fused_div_sum_0 writes NaN into buf1", "buf1 holds NaN", "emb.weight is read"):
        assert capitalized(named) == named
    assert capitalized("input 1 (arg2_1) holds the index value 7") == "Input 1 (arg2_1) holds the index value 7"
