"""triage: the step engine on real CPU runs (load-only packages), offline on the real H200 capture, the main job."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import byfile
import pytest
import strict_known
from aoti_debug.cli import main
from aoti_debug.common.errors import BadInput
from aoti_debug.triage import examples
from aoti_debug.triage.engine import find_package, triage
from aoti_debug.triage.model import RootCause, TriageReport, TriageRequest
from aoti_debug.triage.record import get_run
from aoti_debug.triage.rules import rules
from corpus_cases import dev_case
from pkgs import build_example

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "tests" / "fixtures" / "gpu_capture"
LOGS, PACKAGES = CAPTURE / "logs", CAPTURE / "packages"
# A chat message, not a report: the explanation must stay short.
MAX_MARKDOWN = 4000


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """Run directories go to a temporary AOTI_DEBUG_HOME."""
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def offline(log: str, **kw) -> TriageReport:
    return triage(TriageRequest(log_path=str(LOGS / log), probe_runtime=False, **kw), [ROOT])


def steps(r: TriageReport) -> list[tuple[str, str | None, str]]:
    return [(s.tool, s.preset, s.status) for s in r.steps]


class TestOffline:
    """A log from the H200 capture (torch 2.11.0+cu130), no command: classify, parity, explain; no reruns."""

    def test_a_gpu_index_assert_with_its_package_maps_the_bound_and_the_input_but_names_no_cause(self) -> None:
        r = offline("index_oob.base.log", package_path=str(PACKAGES / "index_oob.base.pt2"))
        assert r.mode == "offline" and r.pattern == "triton_index_out_of_bounds"
        assert [t for t, _, st in steps(r) if st == "done"] == ["classify_error", "explain_index_oob", "check_parity"]
        assert all(s.run_id is None for s in r.steps), "offline triage must not rerun anything"
        skipped = {(s.tool, s.preset): s.skipped_because for s in r.steps if s.status == "skipped"}
        assert "offline" in skipped[("rerun_with_flags", "sanity")] and ("dump_kernel_inputs", None) in skipped
        rc = r.root_cause
        assert rc and not rc.named and rc.kind == "index_value_out_of_range" and rc.input_index == 1
        assert "triton_poi_fused_add_addmm_embedding_relu_0" in rc.summary and "100" in rc.summary
        assert r.stopped_because == "steps_exhausted"
        assert "Most likely cause (not confirmed)" in r.markdown and "**Next:**" in r.markdown

    def test_the_captured_printer_output_names_the_offending_id_against_the_bound(self) -> None:
        r = offline("index_oob.base.log", package_path=str(PACKAGES / "index_oob.base.pt2"),
                    evidence_logs={"dump_kernel_inputs": str(LOGS / "index_oob.printer2.log")})
        rc = r.root_cause
        assert r.stopped_because == "root_cause_named" and rc and rc.named
        assert (rc.kind, rc.input_index, rc.got, rc.expected) == ("index_value_out_of_range", 1, "500",
                                                                   "0 <= index < 100")

    def test_an_empty_dynamic_dimension_is_named_by_explain_index_oob_from_the_clamped_index(self) -> None:
        r = offline("dynamic_zero_below_min.base.log", package_path=str(PACKAGES / "dynamic_zero_below_min.base.pt2"))
        rc = r.root_cause
        assert rc and rc.named and rc.kind == "empty_dimension" and (rc.input_index, rc.dim) == (0, 0)
        assert r.steps[-1].tool == "explain_index_oob" and r.steps[-1].named_root_cause

    def test_the_toolchain_segfault_ends_at_native_abi_with_the_backtrace_and_the_rebuild_fix(self) -> None:
        r = offline("toolchain_segfault.base.log", exit_status=139,
                    evidence_logs={"backtrace": str(LOGS / "toolchain_segfault.cuda_gdb.log")})
        assert r.initial_pattern == "segfault_no_message" and r.pattern == "native_abi"
        rc = r.root_cause
        assert rc and rc.named and rc.kind == "toolchain" and r.stopped_because == "root_cause_named"
        assert "std::regex" in rc.summary and "parse_device_str" in rc.summary
        assert any("parse_device_str" in e for e in rc.evidence) and any("_load_aoti" in e for e in rc.evidence)
        assert "CXX=/usr/bin/g++" in rc.fixes[0] and "TORCHINDUCTOR_CACHE_DIR" in rc.fixes[0]
        fault = next(s for s in r.steps if s.preset == "faulthandler")
        assert fault.status == "done" and "_load_aoti" in fault.found[0]
        assert "CXX=/usr/bin/g++" in r.markdown and len(r.markdown) < MAX_MARKDOWN

    def test_a_package_built_by_the_broken_compiler_is_suspected_by_parity_and_confirmed_by_the_backtrace(
            self) -> None:
        """parity_cuda_static_libstdcxx.pt2 was built on the capture host with its default (wrapped) g++."""
        pkg = ROOT / "tests" / "fixtures" / "packages" / "parity_cuda_static_libstdcxx.pt2"
        r = offline("toolchain_segfault.base.log", exit_status=139, package_path=str(pkg),
                    evidence_logs={"backtrace": str(LOGS / "toolchain_segfault.cuda_gdb.log")})
        parity = next(s for s in r.steps if s.tool == "check_parity")
        assert parity.status == "done" and not parity.named_root_cause
        assert any("statically" in e for e in parity.evidence)
        rc = r.root_cause
        assert rc and rc.named and rc.kind == "toolchain" and r.pattern == "native_abi"
        assert "built by /opt/gcc/bin/g++" in rc.summary and any("statically" in e for e in rc.evidence)

    def test_a_memcheck_report_of_a_user_kernel_reading_an_input_index_stays_a_hypothesis_without_its_values(
            self) -> None:
        """Offline there is no captured call: the kernel's launch names the input it reads its index from, but
        not whether that input or the kernel's code is wrong (tests/test_culprit_launch.py has the values)."""
        r = offline("ima_triton.base.log", package_path=str(PACKAGES / "ima_triton.base.pt2"),
                    evidence_logs={"memcheck": str(LOGS / "ima_triton.memcheck.log")})
        rc = r.root_cause
        assert r.pattern == "cuda_illegal_memory_access" and r.stopped_because != "root_cause_named"
        assert rc and not rc.named and rc.kind == "illegal_access" and rc.kernel == "gather_rows_kernel"
        assert "with an index loaded from input 1 (arg3_1): its values were not captured" in rc.summary

    def test_a_step_that_no_longer_fits_the_budget_is_skipped_with_the_reason(self) -> None:
        r = offline("ima_triton.base.log", package_path=str(PACKAGES / "ima_triton.base.pt2"), budget_s=0.5)
        parity = next(s for s in r.steps if s.tool == "check_parity")
        assert parity.status == "skipped" and parity.skipped_because.startswith("budget")
        assert r.stopped_because == "budget"

    def test_a_finished_triage_is_read_back_by_get_run(self) -> None:
        r = offline("dynamic_zero_below_min.base.log", package_path=str(PACKAGES / "dynamic_zero_below_min.base.pt2"))
        back = get_run(r.run_id)
        assert back.status == "ok" and back.triage is not None
        assert back.triage.root_cause == r.root_cause and back.triage.markdown == r.markdown


def _suite():
    return byfile.load("tests/gpu/triage_suite.py")


def test_an_outsiders_log_is_explained_as_not_an_aoti_failure_with_what_to_do_instead(tmp_path) -> None:
    # Liger-Kernel's own Triton kernel given a CPU tensor, quoted from https://github.com/triton-lang/triton/issues/5205
    log = tmp_path / "liger.log"
    log.write_text(
        '  File "/home/coder/Liger-Kernel/src/liger_kernel/ops/swiglu.py", line 74, in swiglu_forward\n'
        '  File "/usr/local/lib/python3.11/site-packages/triton/runtime/jit.py", line 691, in run\n'
        "ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)\n")
    r = triage(TriageRequest(log_path=str(log), probe_runtime=False), [tmp_path])
    assert (r.pattern, r.outsider, r.root_cause) == ("unknown", "triton", None)
    assert r.seen.startswith("A Triton kernel the program launched itself")
    assert "**What failed.** A Triton kernel the program launched itself" in r.markdown
    assert "TRITON_INTERPRET=1" in r.markdown and "minifier" not in r.markdown and "**Next:**" not in r.markdown
    assert r.next_step.startswith("Not an AOTI failure.") and "TRITON_INTERPRET=1" in r.next_step


def test_the_gpu_verification_tables_are_current_and_every_cuda_example_matches_offline() -> None:
    suite = _suite()
    doc = (ROOT / "docs" / "gpu-verification.md").read_text()
    rows = suite.offline(CAPTURE)
    for name, fresh in (("CLASSIFY", suite.classify_table(CAPTURE)), ("TRIAGE", suite.table(rows, timed=False))):
        m = re.search(rf"<!-- BEGIN {name} TABLE[^>]*-->\n(.*?)\n<!-- END {name} TABLE -->", doc, re.S)
        assert m and m.group(1) == fresh, f"docs/gpu-verification.md {name} table is stale: regenerate it"
    assert {r["example"]: r["differences"] for r in rows if not r["match"]} == strict_known.OFFLINE_CAPTURE


class TestRequests:
    def test_nothing_to_triage_and_unknown_evidence_keys_are_refused(self) -> None:
        with pytest.raises(BadInput, match="argv"):
            triage(TriageRequest(), [ROOT])
        with pytest.raises(BadInput, match="evidence_logs key"):
            offline("nan.base.log", evidence_logs={"gdb": str(LOGS / "nan.base.log")})

    def test_a_log_outside_the_roots_is_refused(self, tmp_path) -> None:
        with pytest.raises(BadInput, match="outside the allowed roots"):
            triage(TriageRequest(log_path=str(LOGS / "nan.base.log")), [tmp_path])

    def test_the_package_is_found_in_the_output_only_when_it_exists_inside_the_roots(self, tmp_path) -> None:
        pkg = tmp_path / "m.pt2"
        pkg.write_bytes(b"PK")
        text = f"package: {pkg}\nsaved to '/nope/x.pt2'\n"
        assert find_package(text, tmp_path, [tmp_path]) == pkg
        assert find_package("loaded ./m.pt2.", tmp_path, [tmp_path]) == pkg
        assert find_package(text, tmp_path, [ROOT]) is None


def report(pattern: str, **rc) -> TriageReport:
    """A triage report whose root cause is named with the given fields."""
    cause = RootCause(named=True, level="culprit", summary="", pattern=pattern, **rc) if rc else None
    return TriageReport(run_id="x", status="done", mode="command", pattern=pattern, root_cause=cause)


class TestExamples:
    def test_the_manifest_expectation_accepts_an_early_stop_at_the_baseline_pattern(self) -> None:
        ex = examples.get("dynamic_zero_below_min")
        exp = examples.expectation(ex, "cpu")
        assert exp["patterns"] == ["input_shape_mismatch", "triton_index_out_of_bounds"]
        ok = report("triton_index_out_of_bounds", kind="empty_dimension", input_index=0, dim=0,
                    kernel="cpp_fused_clamp_index_mul_0")
        assert examples.check(ex, "cpu", ok).match
        bad = ok.model_copy(update={"root_cause": ok.root_cause.model_copy(update={"kind": "dtype"})})
        assert examples.check(ex, "cpu", bad).differences == [
            "root cause: expected empty_dimension (empty_dimension or dim_below_min), got dtype (named)"]

    def test_the_strict_check_lists_a_missing_input_a_wrong_dim_and_another_kernel(self) -> None:
        ex = examples.get("dynamic_zero_below_min")
        r = report("triton_index_out_of_bounds", kind="empty_dimension", dim=1, kernel="cpp_fused_add_0")
        assert examples.check(ex, "cpu", r).differences == [
            "input index: expected 0 (baseline), got none", "dim: expected 0 (baseline), got 1",
            "kernel: expected a name containing 'index' (baseline), got cpp_fused_add_0"]

    def test_an_illegal_access_is_not_taken_for_the_out_of_range_index_it_may_come_from(self) -> None:
        r = report("cuda_illegal_memory_access", kind="illegal_access", kernel="gather_rows_kernel")
        c = examples.check(examples.get("ima_triton"), "cuda", r)
        assert not c.match and c.differences == [
            "root cause: expected index_value_out_of_range (index_value_out_of_range), got illegal_access (named)",
            "input index: expected 1 (baseline), got none"]

    def test_a_root_cause_kind_belongs_to_one_manifest_id_only(self) -> None:
        owners: dict[str, list[str]] = {}
        for want, kinds in rules().example_root_causes.items():
            for kind in kinds:
                owners.setdefault(kind, []).append(want)
        assert {k: v for k, v in owners.items() if len(v) > 1} == {}
        assert "illegal_access" not in owners

    def test_the_fields_are_those_of_the_stage_the_report_ended_at(self) -> None:
        """dtype_mismatch's baseline fails in the embedding kernel; the sanity rerun names the dtype, no kernel."""
        ex = examples.get("dtype_mismatch")
        sanity = report("input_shape_mismatch", kind="dtype", input_index=1)
        assert examples.check(ex, "cuda", sanity).match
        early = report("triton_index_out_of_bounds", kind="dtype", input_index=1)
        assert examples.check(ex, "cuda", early).differences == [
            "kernel: expected a name containing 'embedding' (baseline), got none"]

    def test_list_examples_names_the_default_and_the_expected_cpu_diagnosis(self, capsys) -> None:
        assert main(["triage", "--list-examples"]) == 0
        out = capsys.readouterr().out
        assert "index_oob (default)" in out and "expected on cpu: input_shape_mismatch / dtype" in out


@pytest.mark.spawns
@pytest.mark.compiles
class TestOnCpu:
    """Real reruns of the examples on prebuilt packages (--load-only): the sanity rerun acts at run time."""

    def test_without_the_calls_capture_a_static_shape_mismatch_is_named_by_the_sanity_rerun(self) -> None:
        pkg = build_example("static_shape_mismatch")
        argv = [sys.executable, "examples/static_shape_mismatch.py", "--package", str(pkg), "--load-only"]
        r = triage(TriageRequest(argv=argv, cwd=str(ROOT), capture_calls=False), [ROOT])
        assert r.package == str(pkg) and r.pattern == "input_shape_mismatch"
        rc = r.root_cause
        assert rc and rc.named and (rc.kind, rc.input_index, rc.dim, rc.expected, rc.got) == (
            "static_dim", 0, 0, "4", "6")
        sanity = r.steps[rc.step - 1]
        assert (sanity.tool, sanity.preset, sanity.flags.get("AOTI_RUNTIME_CHECK_INPUTS")) == (
            "rerun_with_flags", "sanity", "1")
        assert "TORCHINDUCTOR_NAN_ASSERTS" not in sanity.flags  # a load-only run: run-time flags only
        assert all(s.cost_s >= 0 for s in r.steps) and r.tool_calls == 4

    def test_a_dtype_mismatch_behind_a_misleading_index_assert_ends_at_the_dtype_of_the_captured_call(self) -> None:
        pkg = build_example("dtype_mismatch")
        argv = [sys.executable, "examples/dtype_mismatch.py", "--package", str(pkg), "--load-only"]
        r = triage(TriageRequest(argv=argv, cwd=str(ROOT)), [ROOT])
        assert r.initial_pattern == "triton_index_out_of_bounds" and r.pattern == "input_shape_mismatch"
        # check_parity compares the call the baseline captured: no sanity rerun is needed to see int32 ids
        assert [t for t, _, _ in steps(r)] == ["rerun_with_flags", "classify_error", "explain_index_oob",
                                               "check_parity"]
        assert any("captured by the baseline" in f for f in r.steps[3].found)
        rc = r.root_cause
        assert rc and rc.named and rc.step == 4 and (rc.kind, rc.input_index, rc.expected, rc.got) == (
            "dtype", 1, "int64", "int32")
        assert "int64" in rc.fixes[0] and "dump_kernel_inputs" not in [s.tool for s in r.steps]

    @pytest.mark.timeout(1200)
    def test_the_main_job_triages_the_default_example_to_the_offending_id_and_matches(self, tmp_path,
                                                                                      capsys) -> None:
        """`aoti-debug triage --example`, the README's main command: two compiles (baseline, printer)."""
        report_md = tmp_path / "crash.md"
        assert main(["triage", "--example", "--json", "--report", str(report_md)]) == 0
        captured = capsys.readouterr()
        r = TriageReport.model_validate(json.loads(captured.out))
        assert r.example and r.example.match and r.example.name == "index_oob"
        rc = r.root_cause
        assert rc and rc.named and (rc.kind, rc.input_index, rc.got) == ("index_value_out_of_range", 1, "500")
        assert "100" in rc.summary and "500" in rc.summary
        tools = [s.tool for s in r.steps]
        assert tools[-1] == "dump_kernel_inputs" and "explain_index_oob" in tools
        sanity = next(s for s in r.steps if s.preset == "sanity")
        assert "--load-only" in sanity.ran  # the run-time-only rerun skipped the compile
        if (os.cpu_count() or 1) >= 2:  # the printer rebuild started beside that load-only rerun (triage_ahead)
            assert any(f.startswith(f"started ahead, beside step {sanity.index}") for f in r.steps[-1].found)
        assert "step 6: dump_kernel_inputs" in captured.err  # progress, one line per step
        text = report_md.read_text()
        assert "**Root cause**" in text and "MATCH" in text and len(text) < MAX_MARKDOWN


def test_a_log_that_stays_unknown_lists_the_public_reports_it_reads_like(tmp_path) -> None:
    # quoted from https://github.com/pytorch/pytorch/issues/118177 (a compiled model's output compared with eager's)
    log = tmp_path / "diff.log"
    log.write_text("    raise ValueError('diff value')\nValueError: diff value\n")
    r = triage(TriageRequest(log_path=str(log), probe_runtime=False), [tmp_path])
    found = r.similar_reports
    assert r.pattern == "unknown" and found and found[0].url == "https://github.com/pytorch/pytorch/issues/118177"
    assert "**Public reports it reads like**" in r.markdown
    assert all(s.url in r.markdown for s in found)


def test_a_log_with_a_pattern_lists_no_public_reports_in_its_explanation(tmp_path) -> None:
    # quoted from https://github.com/pytorch/pytorch/issues/153955, an export stopped by a data-dependent guard
    case = dev_case("pytorch/pytorch#153955-1")
    log = tmp_path / "export.log"
    log.write_text(case["text"] + "\n")
    r = triage(TriageRequest(log_path=str(log), probe_runtime=False), [tmp_path])
    assert r.pattern == "export_failure" and r.similar_reports
    assert "**Public reports it reads like**" not in r.markdown
