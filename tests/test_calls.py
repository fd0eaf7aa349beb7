"""The capture runner on real packages: each load and call recorded, the call a process died in, parity from it."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from aoti_debug.mcp.app import build_server
from aoti_debug.parity.engine import check_parity
from aoti_debug.runs import calls
from aoti_debug.runs import store as runs
from aoti_debug.runs.rerun import RerunRequest, rerun
from mcp import Client
from pkgs import ROOT, build_example

pytestmark = [pytest.mark.spawns, pytest.mark.compiles]
PY = sys.executable


@pytest.fixture(scope="module")
def dtype_run(tmp_path_factory) -> tuple[Path, Path, str]:
    """(root, package, run id): the dtype_mismatch example (int32 ids for an int64 input) rerun with calls."""
    pkg = build_example("dtype_mismatch")
    result = rerun(RerunRequest(argv=[PY, "examples/dtype_mismatch.py", "--package", str(pkg), "--load-only"],
                                cwd=str(ROOT), presets=["calls"], flags={"AOTI_DEBUG_CALLS_SAVE_BYTES": "4096"},
                                timeout_s=300), [ROOT, pkg.parent])
    return ROOT, pkg, result.run_id


def test_the_runner_records_the_load_and_the_call_that_raised_with_its_tensors(dtype_run) -> None:
    _root, pkg, run_id = dtype_run
    report = calls.read(runs.run_path(run_id) / calls.CALLS_DIR)
    assert report.captured and report.torch and (report.loads, report.calls) == (1, 1)
    load, call = report.records
    assert (load.kind, load.status, load.package) == ("load", "finished", str(pkg))
    assert (call.kind, call.status) == ("call", "raised") and "index out of bounds" in call.error
    x, ids = call.inputs
    assert (x.dtype, x.shape, x.device) == ("float32", [4, 8], "cpu")
    # the example's ids are [3, 50, 8, 12] as int32: the values and where the largest sits
    assert (ids.dtype, ids.shape, ids.min, ids.max, ids.max_at, ids.sample) == ("int32", [4], 3, 50, [1],
                                                                                 [3, 50, 8, 12])
    assert report.died_in is None and report.nonfinite_outputs == []
    # asked for (AOTI_DEBUG_CALLS_SAVE_BYTES), the call's inputs are saved in full and read back as parity's inputs
    assert call.inputs_file and Path(call.inputs_file).is_file()
    saved = check_parity(pkg, inputs_file=call.inputs_file, probe_runtime=False)
    assert [(m.kind, m.input_index) for m in saved.mismatches if m.input_index is not None] == [("dtype", 1)]


def test_the_rerun_result_and_its_resource_carry_the_captured_calls(dtype_run) -> None:
    _root, _pkg, run_id = dtype_run
    result = json.loads(runs.load(run_id))
    assert result["calls"]["calls"] == 1 and result["calls"]["records"][1]["status"] == "raised"
    text = runs.read_file(run_id, "calls")
    assert '"kind": "call"' in text and '"event": "error"' in text


def test_parity_compares_the_captured_call_without_an_inputs_file(dtype_run) -> None:
    _root, pkg, run_id = dtype_run
    report = check_parity(pkg, inputs_run=run_id, probe_runtime=False)
    assert report.inputs_source == f"run {run_id} call 1"
    assert [(m.kind, m.input_index) for m in report.mismatches if m.input_index is not None] == [("dtype", 1)]
    assert report.predicted_check_error.startswith("input_handles[1]: unmatched dtype")


@pytest.mark.anyio
async def test_check_parity_over_mcp_takes_a_run_id_for_its_inputs(dtype_run) -> None:
    _root, pkg, run_id = dtype_run
    pkg = pkg.resolve()  # tests/.build may be a link to a shared build folder
    async with Client(build_server([pkg.parent]), raise_exceptions=True) as client:
        result = await client.call_tool("check_parity", {"package_path": str(pkg), "inputs_run": run_id})
        assert not result.is_error, result.content[0].text
        assert [m["kind"] for m in result.structured_content["mismatches"] if m["input_index"] == 1] == ["dtype"]
        bad = await client.call_tool("check_parity", {"package_path": str(pkg), "inputs_run": "../../etc"})
        assert bad.is_error and "not a run id" in bad.content[0].text


def test_a_process_that_dies_inside_a_call_names_that_call_and_the_calls_before_it(tmp_path) -> None:
    pkg = build_example("dtype_mismatch")
    root = tmp_path / "root"
    root.mkdir()
    # The package runs once with good inputs, then the process dies by SIGSEGV inside the second call: the
    # runner's hook must have put the call on disk before the package code ran.
    (root / "repro.py").write_text(textwrap.dedent(f"""
        import ctypes
        import torch
        model = torch._inductor.aoti_load_package({str(pkg)!r})
        x, ids = torch.randn(4, 8), torch.tensor([1, 2, 3, 4])
        model(x, ids)
        real = model.loader

        class Dies:
            def get_call_spec(self):
                return real.get_call_spec()

            def boxed_run(self, inputs):
                ctypes.string_at(0)

        model.loader = Dies()
        model(x, ids * 2)
    """))
    req = RerunRequest(argv=[PY, "repro.py"], cwd=str(root), presets=["calls"], forensics=False, timeout_s=300)
    result = rerun(req,
                   [root, pkg.parent])
    assert result.signal == "SIGSEGV"
    report = result.calls
    assert report.calls == 2 and [r.status for r in report.records] == ["finished", "finished", "died"]
    assert report.died_in.index == 2 and report.died_in.inputs[1].max == 8
    assert report.died_summary.startswith("the process died inside call 2 of ") and "1 call(s) before" in (
        report.died_summary)


def test_a_process_that_dies_inside_the_package_load_is_told_apart_from_one_that_dies_in_a_call(tmp_path) -> None:
    """The native loader crashes (a NULL read where the package's .so would be opened): the load record is on disk
    before the loader runs, so the report names the load and no call. A real crash of this kind, the H200's
    toolchain_segfault (std::regex in wrapper.so's parse_device_str), ends the same way in the GPU suite."""
    pkg = build_example("dtype_mismatch")
    root = tmp_path / "root"
    root.mkdir()
    (root / "repro.py").write_text(textwrap.dedent(f"""
        import ctypes
        import torch

        real = torch._C._aoti.AOTIModelPackageLoader

        class CrashingLoader:
            load_metadata_from_package = staticmethod(real.load_metadata_from_package)

            def __init__(self, *args, **kwargs):
                ctypes.string_at(0)

        torch._C._aoti.AOTIModelPackageLoader = CrashingLoader
        model = torch._inductor.aoti_load_package({str(pkg)!r})
        model(torch.randn(4, 8), torch.tensor([1, 2, 3, 4]))
    """))
    result = rerun(RerunRequest(argv=[PY, "repro.py"], cwd=str(root), presets=["calls"], forensics=False,
                                timeout_s=300), [root, pkg.parent])
    assert result.signal == "SIGSEGV"
    report = result.calls
    assert [(r.kind, r.status) for r in report.records] == [("load", "died")] and report.calls == 0
    assert report.died_in.package == str(pkg)
    assert report.died_summary == f"the process died while loading the package of {pkg} (load 1), before any call ran"


def test_a_command_that_is_not_a_python_script_runs_uncaptured_with_a_note(tmp_path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    tool = root / "tool.sh"
    tool.write_text("#!/bin/sh\necho ran\n")
    tool.chmod(0o755)
    result = rerun(RerunRequest(argv=[str(tool)], cwd=str(root), presets=["calls"]), [root])
    assert result.exit_code == 0 and "ran" in result.stdout_tail
    assert any("not captured" in w for w in result.warnings)
    assert result.calls is not None and not result.calls.captured


def test_a_broken_calls_file_is_read_within_its_bounds(tmp_path) -> None:
    folder = tmp_path / "calls"
    folder.mkdir()
    good = {"event": "start", "kind": "call", "index": 1, "package": "m.pt2",
            "inputs": [{"dtype": "float32", "shape": [2], "nan": 2, "numel": 2}]}
    (folder / "calls.jsonl").write_text(json.dumps(good) + "\n" + '{"event": "end", "kind": "call", "ind')
    report = calls.read(folder)
    assert report.died_in.index == 1 and report.died_in.inputs[0].nonfinite() == 2
    assert any("partial record" in n for n in report.notes)
    assert not calls.read(tmp_path / "nothing").captured


def test_a_real_segfault_on_the_third_input_set_names_that_call_and_its_out_of_range_id(tmp_path) -> None:
    """embedding_unchecked's package (no indirect-index check): two good calls, then id 10**12 crashes the kernel."""
    pkg = build_example("embedding_unchecked")
    root = tmp_path / "root"
    root.mkdir()
    (root / "repro.py").write_text(textwrap.dedent(f"""
        import torch
        model = torch._inductor.aoti_load_package({str(pkg)!r})
        x = torch.randn(4, 16)
        for ids in ([1, 7, 42, 99], [0, 1, 2, 3], [3, 10**12, 8, 12]):
            model(x, torch.tensor(ids))
    """))
    result = rerun(RerunRequest(argv=[PY, "repro.py"], cwd=str(root), presets=["calls"], forensics=False,
                                timeout_s=300), [root, pkg.parent])
    assert result.signal == "SIGSEGV"
    report = result.calls
    assert [(r.kind, r.status) for r in report.records] == [("load", "finished"), ("call", "finished"),
                                                             ("call", "finished"), ("call", "died")]
    died = report.died_in
    assert died.index == 3 and died.inputs[1].max == 10**12 and died.inputs[1].max_at == [1]
    assert report.died_summary.startswith("the process died inside call 3 of ") and "2 call(s) before" in (
        report.died_summary)
