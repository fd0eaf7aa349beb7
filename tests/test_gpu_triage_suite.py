"""The GPU triage suite's committed output (H200, torch 2.11): checked again against the manifest with the strict
check, the classifier, an offline replay of its kept logs, and the tables of docs/gpu-verification.md. No GPU
needed: these read what the GPU run kept (tests/test_gpu.py runs it live)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import byfile
import pytest
import strict_known
from aoti_debug.classify.engine import classify_file
from aoti_debug.triage import examples
from aoti_debug.triage.model import RootCause, TriageReport

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "tests" / "fixtures" / "gpu_triage_suite"
MCP = ROOT / "tests" / "fixtures" / "gpu_mcp_triage"
DOC = ROOT / "docs" / "gpu-verification.md"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def suite():
    return byfile.load("tests/gpu/triage_suite.py")


def reports() -> dict[str, TriageReport]:
    return {p.stem: TriageReport.model_validate_json(p.read_text()) for p in sorted((SUITE / "results").glob("*.json"))}


def doc_block(name: str) -> str:
    m = re.search(rf"<!-- BEGIN {name}[^>]*-->\n(.*?)\n<!-- END {name} -->", DOC.read_text(), re.S)
    assert m, f"docs/gpu-verification.md has no {name} block"
    return m.group(1)


def test_every_cuda_example_was_triaged_on_the_gpu_and_the_strict_check_finds_the_recorded_differences() -> None:
    got = reports()
    # examples marked verified: false were written for the GPU suite and await their first GPU run
    cuda = {e.name for e in examples.manifest().values()
            if "cuda" in e.devices and (e.expected.get("cuda") or {}).get("verified") is not False}
    assert set(got) == cuda
    checks = {name: examples.check(examples.get(name), "cuda", r) for name, r in got.items()}
    assert {name: c.differences for name, c in checks.items() if not c.match} == strict_known.GPU_SUITE
    for name, r in got.items():
        assert r.root_cause and r.root_cause.named and r.stopped_because == "root_cause_named", name
    assert "NVIDIA H200" in (SUITE / "env.txt").read_text()


def test_each_kept_step_log_names_torch_the_gpu_and_its_command() -> None:
    logs = sorted((SUITE / "logs").glob("*/step*.log"))
    assert len(logs) >= 40
    for log in logs:
        head = log.read_text(errors="replace").split("\n", 6)[:6]
        assert head[0].startswith("# aoti-debug GPU triage suite: example "), log
        assert "torch 2.11.0+cu130" in head[1] and "NVIDIA H200" in head[1], log
        assert any(line.startswith("# command: ") for line in head), log


# Patterns added after the GPU run was recorded, and the baselines they now name (the live triage had the
# old id): wrong_output (issue 12) for a run that only fails the caller's assert_close.
ROUTED_SINCE_RECORDING: dict[str, tuple[str, str]] = {}


def test_the_classifier_routes_each_gpu_baseline_as_the_live_triage_did(suite) -> None:
    for name, r in reports().items():
        base = SUITE / "logs" / name / "step1_rerun_with_flags.log"
        status = suite.logged_exit_status(base)
        if status is None:  # a run that passed: the header records no status; the live report does
            status = suite.exit_status_of(r.steps[0].found)
        assert status is not None, name
        recorded, now = ROUTED_SINCE_RECORDING.get(name, (r.initial_pattern, r.initial_pattern))
        assert r.initial_pattern == recorded, name
        assert classify_file(base, status).pattern == now, name


def test_the_sanitizer_report_is_kept_beside_the_memcheck_step_and_names_the_user_kernel() -> None:
    report = (SUITE / "logs" / "ima_triton" / "step5_rerun_with_flags_memcheck.sanitizer.log").read_text()
    assert "Invalid __global__ read of size 4 bytes" in report and "gather_rows_kernel" in report


def test_replaying_the_kept_logs_offline_reaches_the_live_root_cause_unless_it_needed_the_package(suite) -> None:
    rows = suite.replay(SUITE)
    assert len(rows) == len(reports())
    for r in rows:
        if r["needs_calls"]:  # named from what the capture runner recorded, which the suite does not keep
            assert r["replay"].split(" / ")[0] == r["initial"], r
        elif r["needs_package"]:  # explain_index_oob / check_parity read the package, which the suite does not keep;
            # a cause check_parity names in the captured call also moves the pattern (parity_cause_pattern)
            assert r["replay"].split(" / ")[0] in (r["live"].split(" / ")[0], r["initial"]), r
        else:
            assert r["replay"] == r["live"], r
    # 8 of 20 in the 2026-11-23 run (H100), 8 of 21 in the 2026-11-25 run (H200): check_parity now names causes in
    # the captured call, before the reruns, and a kernel compute-sanitizer names is judged by its launch in the
    # package (ima_triton)
    assert sum(not (r["needs_package"] or r["needs_calls"]) for r in rows) >= 8


def test_the_gpu_suite_and_replay_tables_in_the_docs_are_current(suite) -> None:
    assert doc_block("GPU SUITE TABLE") == suite.suite_table(SUITE), "regenerate: triage_suite.py ... --replay"
    assert doc_block("GPU REPLAY TABLE") == suite.replay_table(suite.replay(SUITE)), "regenerate the replay table"
    assert "21/21 match (strict check)" in (SUITE / "triage_suite.md").read_text()  # what the run printed
    strict = f"{len(reports()) - len(strict_known.GPU_SUITE)}/{len(reports())} match (strict check)"
    assert doc_block("GPU SUITE TABLE").startswith(strict)


def test_the_suite_prints_every_difference_of_an_example_that_does_not_match(suite, tmp_path) -> None:
    lines = suite.differences(suite.recheck(SUITE)).splitlines()
    assert len(lines) == len(reports()) and "index_oob: MATCH" in lines
    # the kept run matched everywhere: the same output with one report's cause taken back to the kernel alone
    out = tmp_path / "suite"
    (out / "results").mkdir(parents=True)
    (out / "triage_suite.json").write_text((SUITE / "triage_suite.json").read_text())
    for p in (SUITE / "results").glob("*.json"):
        data = json.loads(p.read_text())
        if p.stem == "ima_triton":
            data["root_cause"].update(kind="illegal_access", input_index=None)
        (out / "results" / p.name).write_text(json.dumps(data))
    lines = suite.differences(suite.recheck(out)).splitlines()
    assert "ima_triton: MISMATCH: root cause: expected index_value_out_of_range (index_value_out_of_range), got " \
           "illegal_access (named); input index: expected 1 (baseline), got none" in lines
    assert sum(line.endswith(": MATCH") for line in lines) == len(lines) - 1


def test_the_mcp_stdio_run_on_the_gpu_matched_and_read_the_memcheck_resource() -> None:
    data = json.loads((MCP / "mcp_triage.json").read_text())
    assert {"triage", "get_run", "classify_error", "check_parity", "rerun_with_flags", "dump_kernel_inputs",
            "explain_index_oob"} <= set(data["tools"])
    rows = {r["example"]: r for r in data["rows"]}
    live = reports()
    for name, r in rows.items():
        assert r["match"] and r["root_cause"]["kind"] == live[name].root_cause.kind, name  # as recorded
    strict = {name: examples.check(examples.get(name), "cuda", TriageReport(
        run_id="mcp", status="done", mode="command", pattern=r["pattern"], root_cause=RootCause(**r["root_cause"])))
        for name, r in rows.items()}
    assert {name: c.differences for name, c in strict.items() if not c.match} == strict_known.MCP_STDIO
    assert rows["index_oob"]["wait"] and rows["index_oob"]["progress"][0].startswith("step 1: ")
    assert all(r["get_run_polls"] > 0 for r in rows.values() if not r["wait"])
    # the example of the run whose triage reached compute-sanitizer (2026-11-25: ima_triton) read its report
    memcheck = [x for r in rows.values() for x in r["resources"] if x["uri"].endswith("/memcheck")]
    assert memcheck and memcheck[0]["sanitizer_lines"] > 0
    table = "\n".join(line for line in (MCP / "mcp_triage.md").read_text().splitlines() if line.startswith("|"))
    assert doc_block("GPU MCP TABLE") == table
