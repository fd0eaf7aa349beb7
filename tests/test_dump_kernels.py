"""dump_kernel_inputs on real CPU builds (printer compiled in) and on the replayed H200 runs (Triton kernels)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import gpu_replay
import pytest
from aoti_debug.cli import main as cli_main
from aoti_debug.kernels.dump import dump_kernel_inputs
from aoti_debug.kernels.model import DumpRequest
from aoti_debug.kernels.suspects import saved_tensors
from kernel_runs import cpu_dump, replay
from pkgs import ROOT

pytestmark = pytest.mark.spawns
TRITON_OOB = "triton_poi_fused_add_addmm_embedding_relu_0"
CAPTURE_LOGS = ROOT / "tests" / "fixtures" / "gpu_capture" / "logs"


def run_specific(text: str) -> list[str]:
    """Printer output without its header, addresses and temporary paths (they differ between two runs)."""
    body = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("# "))
    return re.sub(r"/tmp/\S+", "/tmp/…", re.sub(r"0x[0-9a-f]+", "0x…", body)).splitlines()


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def dump(tmp_path: Path, argv: list[str], **kw) -> object:
    return dump_kernel_inputs(DumpRequest(argv=argv, cwd=str(tmp_path), **kw), [ROOT, tmp_path])


def by_kind(res, kind: str) -> list:
    return [s for s in res.suspects if s.kind == kind]


@pytest.mark.compiles
@pytest.mark.timeout(1200)
class TestCpuBuilds:
    """Two real CPU compiles per example: level 3, then level 2 filtered to the failing kernel and its producers."""

    def test_an_embedding_index_past_the_table_names_the_kernel_the_input_and_its_max_against_the_bound(self) -> None:
        res, _ = cpu_dump("index_oob")
        assert [p.level for p in res.passes] == [3, 2] and all(p.compiled for p in res.passes)
        assert res.failing_kernel == "cpp_fused_add_embedding_relu_0" and res.failing_kernel_from == "level3"
        assert res.printed_kernels == ["cpp_fused_add_embedding_relu_0", "aoti_torch_cpu_addmm_out"]
        top = res.suspects[0]
        assert (top.kind, top.kernel, top.arg, top.input_index, top.value, top.bound) == (
            "index_above_bound", "cpp_fused_add_embedding_relu_0", "arg4_1", 1, 500, 100)
        assert res.passes[1].flags["AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT"] == ",".join(res.printed_kernels)
        assert res.explanation.root_cause == "index_value_out_of_range"
        assert {L.kernel for L in res.launches} == set(res.printed_kernels)

    def test_a_planted_nan_names_the_first_kernel_producing_it(self) -> None:
        res, _ = cpu_dump("nan")
        assert res.status == "ok" and res.failing_kernel is None and res.printed_kernels == []
        s = by_kind(res, "nan_inf_producer")[0]
        assert (s.kernel, s.arg, s.model_input, s.input_index) == ("cpp_fused_log_0", "buf0", "arg2_1", 0)
        assert "log" in s.detail and "min -1" in s.detail
        assert res.suspects[0] is s  # no input holds NaN: the producer comes first


class TestH200Replays:
    """The same cases with Triton kernels: the real H200 output and sources, replayed by tests/gpu_replay.py."""

    def test_the_triton_index_case_names_kernel_input_and_bound(self, tmp_path) -> None:
        res = dump(tmp_path, replay("index_oob"))
        assert res.failing_kernel == TRITON_OOB
        assert res.printed_kernels == [TRITON_OOB, "aoti_torch_cuda_mm_out"]  # the producer of buf1 (alias of buf0)
        top = res.suspects[0]
        assert (top.arg, top.input_index, top.value, top.bound) == ("arg4_1", 1, 500, 100)
        assert res.explanation.kernel == TRITON_OOB and res.explanation.bound.tensor == "emb_weight"

    def test_the_triton_nan_case_names_the_log_kernel(self, tmp_path) -> None:
        res = dump(tmp_path, replay("nan"))
        s = by_kind(res, "nan_inf_producer")[0]
        assert (s.kernel, s.arg, s.model_input) == ("triton_poi_fused_log_0", "buf0", "arg2_1")

    def test_an_empty_dimension_comes_first_when_the_size_argument_printed_zero(self, tmp_path) -> None:
        res = dump(tmp_path, replay("dynamic_zero_below_min"))
        assert [s.kind for s in res.suspects][:2] == ["empty_dimension", "index_above_bound"]
        assert res.suspects[0].arg == "arg1_1" and res.suspects[0].input_index == 0
        assert res.explanation.root_cause == "empty_dimension" and res.explanation.bound.runtime_value == 0

    def test_named_kernels_skip_the_level3_pass(self, tmp_path) -> None:
        res = dump(tmp_path, replay("index_oob"), kernels=[TRITON_OOB])
        assert [p.level for p in res.passes] == [2] and res.printed_kernels == [TRITON_OOB]
        assert res.suspects[0].arg == "arg4_1"

    @pytest.mark.parametrize("example", ["index_oob", "nan", "dynamic_zero_below_min"])
    def test_dropping_other_kernels_records_gives_what_the_filtered_build_printed(self, example) -> None:
        """The replay's rule for a filter it has no capture of, checked against each real filtered capture."""
        real = CAPTURE_LOGS / f"{example}.printer2_filtered.log"
        wanted = gpu_replay.kernels(gpu_replay.captured_env(real)[gpu_replay.FILTER])
        derived = gpu_replay.filtered((CAPTURE_LOGS / f"{example}.printer2.log").read_text(), wanted)
        assert run_specific(derived) == run_specific(real.read_text())

    def test_the_replay_honours_the_kernel_filter(self, tmp_path) -> None:
        env = {**os.environ, "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "2"}
        out = {k: subprocess.run(replay("index_oob"), env={**env, gpu_replay.FILTER: k}, capture_output=True,
                                 text=True, timeout=60) for k in (TRITON_OOB, "aoti_torch_cuda_mm_out")}
        assert f"[  before_launch - {TRITON_OOB} - arg4_1  ]:" in out[TRITON_OOB].stdout
        assert "- aoti_torch_cuda_mm_out -" not in out[TRITON_OOB].stdout  # the real filtered capture
        assert "- aoti_torch_cuda_mm_out -" in out["aoti_torch_cuda_mm_out"].stdout
        assert f"- {TRITON_OOB} -" not in out["aoti_torch_cuda_mm_out"].stdout
        level3 = subprocess.run(replay("index_oob"), env={**env, "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "3",
                                gpu_replay.FILTER: TRITON_OOB}, capture_output=True, text=True, timeout=60)
        assert level3.returncode == 2 and "no capture of index_oob at printer level 3" in level3.stderr

    def test_level3_alone_stops_after_naming_the_kernel(self, tmp_path) -> None:
        res = dump(tmp_path, replay("index_oob"), level=3)
        assert [p.level for p in res.passes] == [3] and res.failing_kernel == TRITON_OOB
        assert res.explanation is not None and res.explanation.status == "explained"


def test_a_repro_that_compiles_nothing_is_reported_not_applied(tmp_path) -> None:
    (tmp_path / "load_only.py").write_text("print('loaded a prebuilt package')\n")
    res = dump(tmp_path, [sys.executable, "load_only.py"])
    assert res.status == "flags_not_applied" and len(res.passes) == 1
    assert "not --load-only" in res.next_step


def test_level1_files_are_found_in_both_layouts_and_split_on_known_kernel_names(tmp_path) -> None:
    (tmp_path / "tmp" / "aoti_torch").mkdir(parents=True)
    new = tmp_path / "tmp" / "aoti_torchbefore_launch_cpp_fused_add_0_buf0_cpu.pt"
    old = tmp_path / "tmp" / "aoti_torch" / "after_launch_triton_poi_fused_1_arg4_1_cuda.pt"
    for p in (new, old):
        p.write_bytes(b"x")
    got = {s.path: s for s in saved_tensors([], tmp_path, 0.0, ["cpp_fused_add_0"])}
    assert (got[str(new)].prefix, got[str(new)].kernel, got[str(new)].arg, got[str(new)].device) == (
        "before_launch", "cpp_fused_add_0", "buf0", "cpu")
    assert got[str(new)].relevant and not got[str(old)].relevant
    assert got[str(old)].prefix == "after_launch" and got[str(old)].device == "cuda"


def test_the_cli_prints_the_failing_kernel_and_the_suspect(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = cli_main(["dump-kernels", "--root", str(ROOT), "--root", str(tmp_path), "--", *replay("index_oob")])
    out = capsys.readouterr().out
    assert code == 0
    assert f"failing:    {TRITON_OOB}" in out and "[index_above_bound]" in out and "max 500 >= bound 100" in out
    assert textwrap.dedent(out).count("pass ") >= 2
