"""check_parity: every mismatch kind, predictions cross-checked by running real packages with the checks on."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
from pathlib import Path

import pkgs
import pytest
from aoti_debug.common.errors import BadInput
from aoti_debug.package.inspect import inspect_package
from aoti_debug.parity.engine import build_report, check_parity
from aoti_debug.runs import probe, proc
from aoti_debug.runs.probe import ActualInput, ProbeOutcome, RuntimeFacts, parse_inputs_json
from pt2_fakes import make_pt2, metadata, model_files, wrapper_213

GLIBCXX = [f"GLIBCXX_3.4.{n}" for n in range(1, 31)] + ["GLIBCXX_3.4"]
CUDA_INPUTS = [{"dtype": "float32", "shape": [4, 8], "device": "cuda:0"}, {"dtype": "int64", "shape": [4],
                                                                             "device": "cuda:0"}]
CASES_SCRIPT = Path(__file__).resolve().parent / "parity_cases.py"
# The case runner imports torch and loads the package (10-20 s on a busy 2-core machine).
CASES_TIMEOUT_S = 300


def runtime(**changes) -> ProbeOutcome:
    """Runtime facts of an H200 box with a CUDA torch; changes override fields."""
    base = dict(python="/env/bin/python", platform="linux", machine="x86_64", torch_version="2.13.0+cu130",
                torch_cuda="13.0", cuda_available=True, device_count=1,
                devices=[{"index": 0, "name": "NVIDIA H200", "capability": "90"}], cpu_capability="AVX512",
                cpu_flags=["avx2", "avx512bw", "avx512dq", "avx512f", "avx512vl", "f16c", "fma"],
                libstdcxx="/usr/lib/libstdc++.so.6", libstdcxx_versions=GLIBCXX, compiler="/usr/bin/g++",
                compiler_path="/usr/bin/g++")
    return ProbeOutcome(data=RuntimeFacts.model_validate({**base, **changes}).model_dump())


def report(pkg: Path, rt: ProbeOutcome | None = None, inputs: list | None = None, load_device: str | None = None,
           model: str | None = None):
    facts = inspect_package(pkg)
    actual = [ActualInput.model_validate(i) for i in inputs] if inputs is not None else None
    return build_report(facts, facts.model(model), rt or runtime(), actual, "json" if inputs else None,
                        load_device=load_device)


def kinds(r) -> list[str]:
    return [m.kind for m in r.mismatches]


@pytest.fixture
def cuda_pkg(tmp_path) -> Path:
    return make_pt2(tmp_path / "cuda.pt2", model_files(wrapper_213(), metadata()))


def test_a_cuda_package_matching_an_h200_with_cuda_inputs_is_ok(cuda_pkg) -> None:
    r = report(cuda_pkg, inputs=CUDA_INPUTS)
    assert r.ok and r.mismatches == [] and [i.status for i in r.inputs] == ["ok", "ok"]


def test_a_cuda_package_on_a_cpu_only_torch_fails_before_any_input_matters(cuda_pkg) -> None:
    r = report(cuda_pkg, runtime(torch_version="2.13.0+cpu", torch_cuda=None, cuda_available=False, devices=[]))
    assert not r.ok and kinds(r) == ["no_cuda_build"] and r.mismatches[0].at_runtime[0].outcome == "load_failure"


def test_a_cuda_torch_without_a_gpu_is_no_gpu(cuda_pkg) -> None:
    r = report(cuda_pkg, runtime(cuda_available=False, device_count=0, devices=[]))
    assert kinds(r) == ["no_gpu"]


def test_an_a100_cannot_run_kernels_built_for_an_h200(cuda_pkg) -> None:
    r = report(cuda_pkg, runtime(devices=[{"index": 0, "name": "NVIDIA A100", "capability": "80"}]))
    m = r.mismatches[0]
    assert (m.kind, m.expected, m.got, m.severity) == ("compute_capability", "90", "80", "error")


def test_the_load_device_index_picks_which_gpu_is_compared(cuda_pkg) -> None:
    two = [{"index": 0, "name": "H200", "capability": "90"}, {"index": 1, "name": "A100", "capability": "80"}]
    assert kinds(report(cuda_pkg, runtime(device_count=2, devices=two), load_device="cuda:0")) == []
    assert kinds(report(cuda_pkg, runtime(device_count=2, devices=two), load_device="cuda:1")) == [
        "compute_capability"]
    assert kinds(report(cuda_pkg, runtime(device_count=2, devices=two), load_device="cuda:2")) == ["no_gpu"]


def test_loading_a_cuda_package_on_cpu_is_a_load_device_mismatch(cuda_pkg) -> None:
    m = report(cuda_pkg, load_device="cpu").mismatches[0]
    assert (m.kind, m.expected, m.got) == ("load_device", "cuda", "cpu")


def test_cpu_inputs_for_a_cuda_package_predict_the_observed_device_check_error(cuda_pkg) -> None:
    r = report(cuda_pkg, inputs=[{**i, "device": "cpu"} for i in CUDA_INPUTS])
    assert kinds(r) == ["device_type", "device_type"]
    # reference §11.4, observed on an H200: the expected code is printed twice.
    assert r.predicted_check_error == "input_handles[0]: unmatched device type, expected: 11(cuda), but got: 0"
    assert r.mismatches[0].first_check_failure and not r.mismatches[1].first_check_failure


def test_dimensions_bound_to_one_symbol_must_agree_across_inputs(cuda_pkg) -> None:
    r = report(cuda_pkg, inputs=[CUDA_INPUTS[0], {**CUDA_INPUTS[1], "shape": [5]}])
    m = r.mismatches[0]
    assert (m.kind, m.input_index, m.dim, m.expected, m.got) == ("shared_dim", 1, 0, "4", "5")
    assert r.predicted_check_error == m.with_check == "expected size 5==4, stride 1==1 at dim=0"


def test_without_size_asserts_a_shared_symbol_is_inferred_from_the_one_bound_range(tmp_path) -> None:
    # 2.11 binds s0 at input 0 only and has no size asserts (tests/fixtures/packages/parity_cuda.pt2).
    text = "\n".join(line for line in wrapper_213().splitlines() if "assert_size_stride" not in line)
    pkg = make_pt2(tmp_path / "old.pt2", model_files(text, metadata()))
    dim = inspect_package(pkg).model().contract.inputs[1].sizes[0]
    assert (dim.symbol, dim.symbol_inferred) == ("s0", True)
    r = report(pkg, inputs=[CUDA_INPUTS[0], {**CUDA_INPUTS[1], "shape": [5]}])
    assert kinds(r) == ["shared_dim"] and "inferred" in r.mismatches[0].message and r.predicted_check_error is None


def test_a_cpu_without_the_packages_isa_would_hit_illegal_instructions(tmp_path) -> None:
    pkg = make_pt2(tmp_path / "cpu.pt2", model_files(wrapper_213("cpu"), metadata("cpu", "", "AVX512"), cubins=()))
    r = report(pkg, runtime(cpu_capability="AVX2", cpu_flags=["avx2", "fma", "f16c"]))
    m = r.mismatches[0]
    assert m.kind == "cpu_isa" and "avx512f" in m.got and m.at_runtime[0].outcome == "illegal_instruction"
    assert kinds(report(pkg)) == []


def test_another_platform_or_machine_is_an_error(cuda_pkg) -> None:
    assert "platform" in kinds(report(cuda_pkg, runtime(machine="aarch64")))
    assert "platform" in kinds(report(cuda_pkg, runtime(platform="darwin")))


def test_a_package_built_by_another_compiler_warns_of_toolchain_skew(tmp_path) -> None:
    pkg = make_pt2(tmp_path / "w.pt2", model_files(wrapper_213(cxx="/opt/gcc/bin/g++"), metadata()))
    m = report(pkg).mismatches[0]
    assert (m.kind, m.severity, m.got) == ("compiler_skew", "warning", "/usr/bin/g++")
    assert "11.9" in m.at_runtime[0].provenance


def test_a_package_newer_than_the_target_torch_warns(cuda_pkg) -> None:
    m = report(cuda_pkg, runtime(torch_version="2.11.0+cu130")).mismatches[0]
    assert (m.kind, m.expected, m.got) == ("torch_version", "2.12", "2.11.0+cu130")


def test_a_kernel_binary_missing_from_the_archive_is_an_error(tmp_path) -> None:
    pkg = make_pt2(tmp_path / "nocubin.pt2", model_files(wrapper_213(), metadata(), cubins=()))
    assert kinds(report(pkg)) == ["missing_kernel_binary"]


def test_unsafe_member_names_and_missing_metadata_are_errors_in_a_partial_report(tmp_path) -> None:
    pkg = make_pt2(tmp_path / "bad.pt2", {**model_files(wrapper_213(), None), "../x": b"x"})
    r = report(pkg)
    assert set(kinds(r)) == {"unsafe_member", "no_metadata"} and not r.ok


def test_a_wrong_input_count_is_predicted_as_the_vector_size_error(cuda_pkg) -> None:
    r = report(cuda_pkg, inputs=CUDA_INPUTS[:1])
    assert r.predicted_check_error == "expected inputs vector size to be 2, but got 1"
    assert [i.status for i in r.inputs] == ["ok", "missing"]


def test_several_models_compare_the_one_asked_for(tmp_path) -> None:
    files = {**model_files(wrapper_213(), metadata(), model="model"),
             **model_files(wrapper_213("cpu"), metadata("cpu", "", "AVX512"), model="cpu_twin", cubins=())}
    pkg = make_pt2(tmp_path / "two.pt2", files)
    assert report(pkg).model == "model" and report(pkg, model="cpu_twin").mismatches == []
    assert any("also holds cpu_twin" in u for u in report(pkg).unchecked)
    with pytest.raises(BadInput, match="no model 'nope'"):
        check_parity(pkg, model="nope", probe_runtime=False)


@pytest.mark.parametrize("text, message", [
    ("{}", "must be a list"),
    ("[1, 2]", "must be a list of objects"),
    ('[{"shape": [4]}]', "dtype"),
    ("[{", "does not parse"),
])
def test_bad_inputs_json_is_bad_input(text, message) -> None:
    with pytest.raises(BadInput, match=message):
        parse_inputs_json(text)


def test_without_the_probe_the_report_is_partial_and_not_ok(cuda_pkg) -> None:
    r = check_parity(cuda_pkg, inputs=[ActualInput.model_validate(i) for i in CUDA_INPUTS], probe_runtime=False)
    assert not r.ok and r.mismatches == [] and any("not probed" in u for u in r.unchecked)


# --- real subprocesses -------------------------------------------------------------------------------


def _fake_python(tmp_path: Path, body: str) -> str:
    script = tmp_path / "python3"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.spawns
def test_a_target_python_without_torch_gives_a_partial_report(cuda_pkg, tmp_path) -> None:
    # -S hides site-packages, so this real interpreter has no torch.
    r = check_parity(cuda_pkg, python=_fake_python(tmp_path, f'exec {sys.executable} -S "$@"'))
    assert not r.ok and r.runtime.torch_error and any("no usable torch" in u for u in r.unchecked)
    assert r.runtime.platform == "linux"


@pytest.mark.spawns
def test_a_probe_that_fails_or_hangs_gives_a_partial_report(cuda_pkg, tmp_path, monkeypatch) -> None:
    r = check_parity(cuda_pkg, python=_fake_python(tmp_path, "echo broken >&2; exit 3"))
    assert r.runtime is None and any("exit 3" in u and "broken" in u for u in r.unchecked)
    monkeypatch.setattr(probe, "RUNTIME_TIMEOUT_S", 1.0)
    r = check_parity(cuda_pkg, python=_fake_python(tmp_path, "sleep 30"))
    assert r.runtime is None and any("timed out" in u for u in r.unchecked)


@pytest.mark.parametrize("python, message", [
    ("/no/such/python", "not found"),
    ("/bin/rm", "must be a Python interpreter"),
    ("sh", "must be a Python interpreter"),
])
def test_a_target_python_that_is_missing_or_not_python_is_bad_input(cuda_pkg, python, message) -> None:
    with pytest.raises(BadInput, match=message):
        check_parity(cuda_pkg, python=python)


@pytest.mark.spawns
@pytest.mark.parametrize("content, message", [
    ("save", "no tensors in the file"),
    ("text", "torch.load\\(weights_only=True\\) failed"),
])
def test_an_inputs_file_without_tensors_is_bad_input(cuda_pkg, tmp_path, content, message) -> None:
    f = tmp_path / "inputs.pt"
    if content == "save":
        proc.run(proc.ProcSpec(argv=[sys.executable, "-c", f"import torch; torch.save({{'a': 1}}, {str(f)!r})"]))
    else:
        f.write_text("not a tensor file\n")
    with pytest.raises(BadInput, match=message):
        check_parity(cuda_pkg, inputs_file=f, probe_runtime=False)


@pytest.fixture(scope="session")
def real_runtime() -> ProbeOutcome:
    return probe.run_probes(sys.executable, None)[0]


def build_shared() -> Path:
    """This file's own package (the only one it compiles): two inputs sharing one dynamic batch, cached."""
    folder = pkgs.BUILD / pkgs.torch_version()
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"parity_shared-{hashlib.sha256(CASES_SCRIPT.read_bytes()).hexdigest()[:12]}.pt2"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            tmp = out.with_suffix(".tmp.pt2")
            res = proc.run(proc.ProcSpec(argv=[sys.executable, str(CASES_SCRIPT), "--build", str(tmp)],
                                         env_overrides={"TORCHINDUCTOR_CACHE_DIR": str(folder / f"cache-{out.stem}")},
                                         timeout_s=pkgs.BUILD_TIMEOUT_S))
            assert res.ok and tmp.exists(), str(res)
            tmp.rename(out)
    return out


@pytest.fixture(scope="session")
def reality(tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """Run every case on the packages with AOTI_RUNTIME_CHECK_INPUTS=1: case -> (package, result)."""
    out: dict[str, tuple[Path, dict]] = {}
    for example, prefix in (("dtype_mismatch", "two_"), ("dynamic_above_max", "dyn_"), (None, "sh_")):
        pkg = pkgs.build_example(example) if example else build_shared()
        folder = tmp_path_factory.mktemp(example or "shared")
        cases = [c for c in [*CASES, "two_dict"] if c.startswith(prefix)]
        res = proc.run(proc.ProcSpec(argv=[sys.executable, str(CASES_SCRIPT), str(pkg), str(folder), *cases],
                                     env_overrides={"AOTI_RUNTIME_CHECK_INPUTS": "1"}, timeout_s=CASES_TIMEOUT_S))
        assert res.ok, str(res)
        for case, result in json.loads((folder / "results.json").read_text()).items():
            out[case] = (pkg, {**result, "file": folder / f"{case}.pt"})
    return out


# case -> (input mismatch kinds predicted, index named by the first failing check)
CASES = {
    "two_ok": ([], None),
    "two_dtype": (["dtype"], 1),
    "two_static_dim": (["static_dim"], 0),
    "two_stride": (["stride", "stride"], 0),
    "two_device": (["device_type"], 0),
    "two_count": (["input_count"], None),
    "two_rank_up": (["rank"], 0),
    "dyn_ok": ([], None),
    "dyn_above_max": (["dim_above_max"], 0),
    "dyn_below_min": (["dim_below_min"], 0),
    "dyn_stride": (["stride", "stride"], 0),
    "sh_ok": ([], None),
    "sh_shared": (["shared_dim"], 1),
    "sh_ids_int32": (["dtype"], 1),
    "sh_both_above": (["dim_above_max", "dim_above_max"], 0),
}


@pytest.mark.compiles
@pytest.mark.spawns
@pytest.mark.parametrize("case", list(CASES))
def test_each_prediction_matches_a_real_run_with_the_input_checks_on(case, reality, real_runtime) -> None:
    pkg, result = reality[case]
    expected_kinds, index = CASES[case]
    r = report(pkg, real_runtime, result["inputs"])
    assert sorted(kinds(r)) == sorted(expected_kinds), r.summary
    if not expected_kinds:
        assert result["outcome"] == "ok" and r.ok and r.predicted_check_error is None, r.summary
        return
    assert not r.ok and result["outcome"] == f"RuntimeError: {r.predicted_check_error}"
    first = next(m for m in r.mismatches if m.first_check_failure)
    assert first.input_index == index
    if first.kind not in ("rank", "shared_dim") and index is not None:  # size-assert messages name no input
        assert f"input_handles[{index}]" in result["outcome"]


@pytest.mark.compiles
@pytest.mark.spawns
def test_a_saved_inputs_file_is_read_in_the_target_python_and_gives_the_same_prediction(reality) -> None:
    pkg, result = reality["two_dict"]
    r = check_parity(pkg, inputs_file=result["file"])
    assert r.runtime.torch_version and r.inputs_source == str(result["file"])
    assert [i.source for i in r.inputs] == ["['x']", "['ids']"]
    assert kinds(r) == ["dtype"] and result["outcome"] == f"RuntimeError: {r.predicted_check_error}"


@pytest.mark.compiles
@pytest.mark.spawns
def test_the_cli_prints_the_report_as_json_and_exits_1_on_a_mismatch(reality, capsys) -> None:
    from aoti_debug.cli import main
    from aoti_debug.parity.model import ParityReport

    pkg, _ = reality["dyn_above_max"]
    code = main(["parity", str(pkg), "--inputs", '[{"dtype": "float32", "shape": [4, 100]}]', "--json"])
    r = ParityReport.model_validate_json(capsys.readouterr().out)
    assert code == 1 and kinds(r) == ["dim_above_max"] and r.runtime.python
    assert main(["parity", str(pkg), "--inputs", '[{"dtype": "float32", "shape": [4, 10]}]']) == 0
    assert capsys.readouterr().out.startswith("parity:   OK")
    assert main(["parity", str(pkg) + ".missing"]) == 2
    assert os.path.exists(pkg)
