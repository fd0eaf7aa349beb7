"""explain_index_oob on real packages: a CPU build, the H200 CUDA packages, extracted and cache folders."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from aoti_debug.classify.guides import load_guides
from aoti_debug.cli import main as cli_main
from aoti_debug.common.errors import BadInput
from aoti_debug.common.logread import file_chunks
from aoti_debug.kernels.index_oob import explain_index_oob
from kernel_runs import cpu_dump
from pkgs import EXAMPLES, ROOT, build_example

GPU = ROOT / "tests" / "fixtures" / "gpu_capture"
DYN_TRITON = "triton_poi_fused_clamp_index_mul_0"


def explain(pkg: Path | str, log: Path | str, **kw):
    return explain_index_oob(pkg, file_chunks(log), **kw)


@pytest.fixture(scope="module")
def cpu_nolb(tmp_path_factory) -> tuple[Path, Path]:
    """The dynamic_zero_below_min package built without the lower-bound check, and the log of feeding it n = 0."""
    pkg = build_example("dynamic_zero_below_min", "--no-lowerbound-check")
    log = tmp_path_factory.mktemp("nolb") / "run.log"
    out = subprocess.run([sys.executable, str(EXAMPLES / "dynamic_zero_below_min.py"), "--load-only", "--package",
                          str(pkg)], capture_output=True, text=True, timeout=300, check=False)
    log.write_text(out.stdout + out.stderr)
    assert out.returncode != 0
    return pkg, log


@pytest.mark.compiles
@pytest.mark.spawns
@pytest.mark.timeout(1200)
class TestCpuPackages:
    def test_a_dynamic_dim_of_zero_below_its_minimum_is_the_empty_dimension_case_with_no_lower_guard(
            self, cpu_nolb) -> None:
        e = explain(*cpu_nolb)
        assert e.status == "explained" and e.kernel == "cpp_fused_clamp_index_mul_0" and e.kernel_kind == "cpp"
        assert e.root_cause == "empty_dimension" and "missing_lower_bound_guard" in e.contributing
        b = e.bound
        assert (b.text, b.param, b.call_expr, b.input, b.input_index, b.dim) == ("ks0", "ks0", "s70", "arg1_1", 0, 0)
        assert (b.guard.min, b.guard.max) == (None, 64)
        assert e.assert_source.file.endswith(".kernel.cpp") and "AOTI_TORCH_CHECK" in e.assert_source.text
        assert e.call_site.text.startswith("cpp_fused_clamp_index_mul_0(") and e.clamped
        assert [(a.name, a.input_index) for a in e.index_from] == [("arg2_1", 1)]
        assert e.source_nodes == ["clamp", "index", "mul"] and e.ops_from == "kernel_name"
        assert "no lower bound" in e.markdown and "check_lowerbound" in " ".join(e.fixes)

    def test_an_inductor_cache_folder_explains_the_cpu_embedding_case(self) -> None:
        res, _ = cpu_dump("index_oob")
        cache = res.passes[0].flags["TORCHINDUCTOR_CACHE_DIR"]
        e = explain(cache, res.passes[0].log_path)
        assert e.origin == "cache" and e.kernel == "cpp_fused_add_embedding_relu_0"
        assert e.root_cause == "index_value_out_of_range"
        assert (e.bound.value, e.bound.tensor, e.bound.dim) == (100, "emb_weight", 0)
        assert [(a.name, a.input_index) for a in e.index_from] == [("arg4_1", 1)]


class TestH200Packages:
    """The CUDA packages and sources captured on an H200 (Triton kernels embedded in wrapper.cpp)."""

    def test_the_cuda_dynamic_package_is_the_empty_dimension_case_with_an_unenforced_guard(self) -> None:
        e = explain(GPU / "packages/dynamic_zero_below_min.base.pt2", GPU / "logs/dynamic_zero_below_min.base.log")
        assert e.status == "explained" and (e.kernel, e.kernel_kind) == (DYN_TRITON, "triton")
        assert e.root_cause == "empty_dimension" and e.contributing == ["guard_not_enforced"]
        assert (e.bound.guard.min, e.bound.guard.max, e.bound.guard.enforced) == (2, 64, "runtime_env")
        assert e.call_site.line == 877 and e.call_site.text.startswith(f"call_{DYN_TRITON}(arg2_1, arg1_1, buf0, s70")
        assert [a.param for a in e.call_args] == ["in_ptr0", "in_ptr1", "out_ptr0", "ks0", "xnumel"]
        assert {a.param: a.size_of for a in e.call_args}["ks0"] == "arg1_1.size(0)"
        assert e.source_nodes == ["clamp", "index", "mul"] and e.aten_ops == ["aten.clamp", "aten.index", "aten.mul"]
        assert "tl.device_assert" in e.assert_source.text and e.assert_source.line == 657

    def test_the_cuda_embedding_package_is_an_index_value_out_of_range(self) -> None:
        e = explain(GPU / "packages/index_oob.base.pt2", GPU / "logs/index_oob.base.log")
        assert e.kernel == "triton_poi_fused_add_addmm_embedding_relu_0"
        assert e.root_cause == "index_value_out_of_range" and e.bound.value == 100 and e.bound.tensor == "emb_weight"
        assert [(a.name, a.input_index) for a in e.index_from] == [("arg4_1", 1)]
        assert "embedding" in e.source_nodes

    def test_a_cache_folder_without_the_lower_bound_check_names_the_missing_guard(self) -> None:
        e = explain(GPU / "artifacts/dynamic_zero_below_min_nolb.base",
                    GPU / "logs/dynamic_zero_below_min_nolb.base.log")
        assert e.origin == "cache" and e.root_cause == "empty_dimension"
        assert e.contributing == ["missing_lower_bound_guard"] and e.bound.guard.min is None

    def test_an_extracted_package_gives_the_same_answer_as_the_zip(self, tmp_path) -> None:
        pkg = GPU / "packages/dynamic_zero_below_min.base.pt2"
        with zipfile.ZipFile(pkg) as z:
            z.extractall(tmp_path)
        log = GPU / "logs/dynamic_zero_below_min.base.log"
        a, b = explain(tmp_path, log), explain(pkg, log)
        assert a.origin == "extracted"
        assert (a.kernel, a.root_cause, a.contributing, a.bound.input) == (b.kernel, b.root_cause, b.contributing,
                                                                             b.bound.input)

    def test_printer_output_as_the_log_adds_the_size_at_run_time(self) -> None:
        e = explain(GPU / "packages/dynamic_zero_below_min.base.pt2",
                    GPU / "logs/dynamic_zero_below_min.printer2_filtered.log")
        assert e.bound.runtime_value == 0 and "at run time it was **0**" in e.markdown


class TestRefusalsAndMisses:
    def test_a_log_without_the_assertion_explains_nothing(self) -> None:
        e = explain(GPU / "packages/index_oob.base.pt2", GPU / "logs/nan.base.log")
        assert e.status == "no_assert" and e.kernel is None and "nothing to explain" in e.markdown

    def test_sources_of_another_package_do_not_hold_the_assertion(self) -> None:
        e = explain(GPU / "packages/index_oob.base.pt2", GPU / "logs/dynamic_zero_below_min.base.log")
        assert e.status == "kernel_not_found" and e.root_cause == "unknown"

    @pytest.mark.parametrize("make, message", [
        (lambda p: p / "missing.pt2", "no such package or folder"),
        (lambda p: p, "no generated AOTI sources"),
    ])
    def test_bad_paths_are_refused(self, tmp_path, make, message) -> None:
        with pytest.raises(BadInput, match=message):
            explain(make(tmp_path), GPU / "logs/index_oob.base.log")


def test_the_cli_prints_json_and_exits_zero_when_explained(capsys) -> None:
    code = cli_main(["explain-oob", str(GPU / "packages/index_oob.base.pt2"), "--log",
                     str(GPU / "logs/index_oob.base.log"), "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["root_cause"] == "index_value_out_of_range"


def test_the_guide_and_classify_point_to_the_tools() -> None:
    steps = [s.tool for s in load_guides()["triton_index_out_of_bounds"].rule.next_steps]
    assert steps[0] == "explain_index_oob" and "dump_kernel_inputs" in steps


def test_the_triton_file_line_in_the_log_picks_between_kernels_holding_the_same_assertion(tmp_path) -> None:
    src = GPU / "artifacts/dynamic_zero_below_min_nolb.base/cache"
    wrapper = next(src.rglob("*.wrapper.cpp"))
    text = wrapper.read_text()
    start = text.index("    async_compile.triton('")
    end = text.index("''', device_str='cuda')", start)
    twin = text[start:end].replace(DYN_TRITON, "triton_poi_fused_twin_1").replace(
        "        tmp0 = tl.load", "        tmp_unused = 0\n        tmp0 = tl.load")  # its assert one line lower
    (tmp_path / wrapper.name).write_text(text[:start] + twin + "''')\n" + text[start:])
    e = explain(tmp_path, GPU / "logs/dynamic_zero_below_min_nolb.base.log")
    assert e.candidates == ["triton_poi_fused_twin_1", DYN_TRITON] and e.kernel == DYN_TRITON
