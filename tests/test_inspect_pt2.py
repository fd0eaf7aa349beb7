"""inspect_pt2: real packages built here, hand-made archives in the 2.6 and 2.13 CUDA forms, malformed zips."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pkgs
import pytest
from aoti_debug.common.errors import BadInput
from aoti_debug.package import pt2zip
from aoti_debug.package.inspect import inspect_package
from aoti_debug.package.torch_facts import version_tuple
from pt2_fakes import make_pt2, metadata, model_files, wrapper_26, wrapper_213


@pytest.fixture(scope="session")
def static_pkg() -> Path:
    return pkgs.build_example("dtype_mismatch")


@pytest.fixture(scope="session")
def dynamic_pkg() -> Path:
    return pkgs.build_example("dynamic_above_max")


@pytest.mark.compiles
@pytest.mark.spawns  # tests/pkgs.py builds and probes in subprocesses
def test_a_real_static_package_yields_dtypes_sizes_strides_and_devices_of_every_input(static_pkg) -> None:
    facts = inspect_package(static_pkg)
    m = facts.model()
    assert facts.root and static_pkg.stem.split(".")[0] in facts.root
    assert (m.name, m.device_key, m.platform, m.compute_capability) == ("model", "cpu", "linux", "")
    x, ids = m.contract.inputs
    assert (x.dtype, [d.value for d in x.sizes], x.strides, x.device_type) == ("float32", [4, 8], [8, 1], "cpu")
    assert (ids.dtype, [d.value for d in ids.sizes], ids.strides, ids.device_type) == ("int64", [4], [1], "cpu")
    assert m.contract.checks == "runtime_env" and m.contract.num_inputs == 2 and m.contract.constants_in_so
    assert [c.original_fqn for c in m.contract.constants] == ["proj.weight", "proj.bias", "emb.weight"]
    assert m.contract.constants[2].shape == [100, 16] and m.contract.constants[2].dtype == "float32"
    assert '"builtins.tuple"' in m.contract.in_spec and m.contract.output_names == ["output0"]


@pytest.mark.compiles
@pytest.mark.spawns  # tests/pkgs.py builds and probes in subprocesses
def test_a_real_dynamic_package_yields_the_exported_min_max_and_the_size_symbol(dynamic_pkg) -> None:
    (x,) = inspect_package(dynamic_pkg).model().contract.inputs
    seq = x.sizes[1]
    assert (x.sizes[0].value, seq.value, seq.min, seq.max) == (4, None, 2, 64)
    assert seq.symbol and x.strides == [seq.symbol, 1] and x.rank_exact


@pytest.mark.compiles
@pytest.mark.spawns  # tests/pkgs.py builds and probes in subprocesses
def test_the_compiler_flags_and_libstdcxx_floor_are_read_without_loading_the_so(static_pkg) -> None:
    m = inspect_package(static_pkg).model()
    tc, elf = m.toolchain, m.libraries[0].elf
    assert tc.compiler and tc.std and tc.march == "native" and "torch_cpu" in tc.libraries
    assert any(d.startswith("CPU_CAPABILITY_") for d in tc.defines)
    assert elf.machine == "x86_64" and "libstdc++.so.6" in elf.needed and elf.glibcxx_max.startswith("GLIBCXX_3.4")
    assert any(c.startswith("GCC:") for c in elf.comment)


@pytest.mark.compiles
@pytest.mark.spawns  # tests/pkgs.py builds and probes in subprocesses
def test_the_torch_version_hint_contains_the_torch_that_built_the_package(static_pkg) -> None:
    hint = inspect_package(static_pkg).model().torch_hint
    assert hint.min_version and version_tuple(pkgs.torch_version())[:2] >= version_tuple(hint.min_version)
    assert hint.max_version is None and any("env_gated_checks" in e for e in hint.evidence)


def test_a_cuda_package_in_the_213_form_yields_cuda_inputs_kernels_and_cubins(tmp_path) -> None:
    m = inspect_package(make_pt2(tmp_path / "cuda.pt2", model_files(wrapper_213(), metadata()))).model()
    assert (m.device_key, m.compute_capability) == ("cuda", "90")
    assert [i.device_type for i in m.contract.inputs] == ["cuda", "cuda"]
    assert m.kernels_loaded == {"triton_poi_fused_0": "cabcdef.cubin"} and len(m.cubins) == 1
    assert m.contract.inputs[0].sizes[0].symbol == m.contract.inputs[1].sizes[0].symbol == "s0"
    assert m.contract.out_spec == '[1, {"type": null, "context": null, "children_spec": []}]'
    assert m.toolchain.compiler == "/usr/bin/g++" and "USE_CUDA" in m.toolchain.defines


def test_custom_ops_are_listed_from_the_extern_kernel_json(tmp_path) -> None:
    files = model_files(wrapper_213(), metadata())
    nodes = {"nodes": [{"name": "buf2", "node": {"target": "mylib.gather.default"}}]}
    files["data/aotinductor/model/cabc.json"] = json.dumps(nodes)
    m = inspect_package(make_pt2(tmp_path / "ops.pt2", files)).model()
    assert m.extern_ops == ["mylib.gather.default"] and m.contract.constants_in_so is True


def test_the_26_form_with_inline_always_on_checks_and_an_escaped_spec_is_read(tmp_path) -> None:
    m = inspect_package(make_pt2(tmp_path / "old.pt2", model_files(wrapper_26(), metadata("cpu", "")))).model()
    c = m.contract
    assert c.checks == "always" and m.torch_hint.max_version == "2.6"
    assert [(i.dtype, i.device_type) for i in c.inputs] == [("float32", None), ("bool", None)]
    assert (c.inputs[0].sizes[0].min, c.inputs[0].sizes[0].max, c.inputs[0].sizes[0].symbol) == (2, 64, "s0")
    assert c.in_spec == '[1, {"type": "builtins.tuple", "context": "null"}]'
    assert (c.constants[0].dtype, c.constants[0].kind, c.constants[0].data_size) == ("float32", "Parameter", 512)


def test_the_first_check_form_with_auto_handles_is_read(tmp_path) -> None:
    text = wrapper_26().replace("ConstantHandle arg1_1 = ConstantHandle(input_handles[0]);",
                                "auto arg1_1 = input_handles[0];")
    m = inspect_package(make_pt2(tmp_path / "oldest.pt2", model_files(text, metadata("cpu", "")))).model()
    assert m.contract.inputs[0].dtype == "float32" and m.contract.inputs[0].sizes[1].value == 8


def test_a_package_without_input_checks_says_so(tmp_path) -> None:
    text = "\n".join(line for line in wrapper_26().splitlines() if "input_handles[" not in line
                     and "__check_inputs_outputs" not in line)
    m = inspect_package(make_pt2(tmp_path / "nochecks.pt2", model_files(text, metadata("cpu", "")))).model()
    assert m.contract.checks == "absent" and any("no input check code" in n for n in m.notes)
    assert [i.name for i in m.contract.inputs] == ["arg1_1", "arg2_1"] and m.contract.inputs[0].dtype is None


def test_a_newer_torch_with_unknown_fields_gives_a_partial_model_not_a_crash(tmp_path) -> None:
    text = "model_io_[0].label = \"x\";\nvoid Model::execute() {}\n"
    files = model_files(text, metadata("cuda", "100", AOTI_SOMETHING_NEW="yes"), cubins=())
    files["data/aotinductor/model/cabc.wrapper.cpp"] = "AOTInductorModel\n" + text
    m = inspect_package(make_pt2(tmp_path / "new.pt2", files)).model()
    assert m.metadata_extra == {"AOTI_SOMETHING_NEW": "yes"} and m.device_key == "cuda"
    assert m.contract.inputs == [] and any("not a form this tool knows" in n for n in m.notes)
    assert m.toolchain is None and any("Compile cmd" in n for n in m.notes)


def test_a_package_without_a_root_folder_is_read_and_noted(tmp_path) -> None:
    facts = inspect_package(make_pt2(tmp_path / "flat.pt2", model_files(wrapper_213(), metadata()), root=None))
    assert facts.root is None and facts.model().contract.inputs
    assert any("root folder" in n for n in facts.notes)


def test_several_models_are_all_listed_and_model_is_the_default(tmp_path) -> None:
    files = {**model_files(wrapper_213(), metadata(), model="model"),
             **model_files(wrapper_26(), metadata("cpu", ""), model="aux")}
    facts = inspect_package(make_pt2(tmp_path / "two.pt2", files))
    assert [m.name for m in facts.models] == ["aux", "model"] and facts.model().name == "model"
    assert facts.model("aux").contract.checks == "always" and facts.model("nope") is None
    assert any("2 models" in n for n in facts.notes)


def test_missing_metadata_leaves_the_device_unknown_with_a_note(tmp_path) -> None:
    m = inspect_package(make_pt2(tmp_path / "nometa.pt2", model_files(wrapper_213(), None))).model()
    assert m.device_key is None and any("no *_metadata.json" in n for n in m.notes)


def test_member_names_with_dotdot_or_absolute_paths_are_listed_and_never_used(tmp_path) -> None:
    files = {**model_files(wrapper_213(), metadata()), "../evil.so": b"x", "/etc/evil": b"x",
             "data/aotinductor/model/../../../../x.cpp": "AOTInductorModel"}
    facts = inspect_package(make_pt2(tmp_path / "evil.pt2", files))
    assert set(facts.unsafe_members) == {"../evil.so", "/etc/evil", "pkg/data/aotinductor/model/../../../../x.cpp"}
    assert facts.model().wrapper.endswith("cabc.wrapper.cpp")
    assert not (tmp_path / "evil.so").exists() and not Path("/etc/evil").exists()


@pytest.mark.parametrize("content, message", [
    (b"", "not a readable zip"),
    (b"this is a log file, not a package\n" * 20, "not a readable zip"),
])
def test_a_file_that_is_not_a_zip_is_bad_input(tmp_path, content, message) -> None:
    p = tmp_path / "x.pt2"
    p.write_bytes(content)
    with pytest.raises(BadInput, match=message):
        inspect_package(p)


def test_a_truncated_package_is_bad_input_that_says_it_may_be_truncated(tmp_path) -> None:
    whole = make_pt2(tmp_path / "whole.pt2", model_files(wrapper_213(), metadata())).read_bytes()
    cut = tmp_path / "cut.pt2"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(BadInput, match="truncated"):
        inspect_package(cut)


def test_a_zip_without_an_aoti_model_is_bad_input(tmp_path) -> None:
    p = make_pt2(tmp_path / "other.pt2", {"data/weights/w0": b"0"})
    with pytest.raises(BadInput, match="no AOTI model"):
        inspect_package(p)


def test_a_missing_package_is_bad_input(tmp_path) -> None:
    with pytest.raises(BadInput, match="no such package"):
        inspect_package(tmp_path / "missing.pt2")


def test_a_zip_bomb_member_is_refused_by_ratio_and_the_rest_still_read(tmp_path) -> None:
    files = model_files(wrapper_213(), metadata())
    files["data/aotinductor/model/cabc.wrapper.cpp"] = "AOTInductorModel" + " " * (8 << 20)
    m = inspect_package(make_pt2(tmp_path / "bomb.pt2", files, compression=zipfile.ZIP_DEFLATED)).model()
    assert m.contract is None and any("ratio over" in n for n in m.notes) and m.device_key == "cuda"


def test_a_member_over_the_size_cap_is_refused_without_reading_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(pt2zip, "MAX_TEXT_BYTES", 1000)
    m = inspect_package(make_pt2(tmp_path / "big.pt2", model_files(wrapper_213(), metadata()))).model()
    assert m.contract is None and any("exceeds the 1000-byte cap" in n for n in m.notes)


def test_a_corrupt_member_is_a_note_not_a_crash(tmp_path) -> None:
    p = make_pt2(tmp_path / "crc.pt2", model_files(wrapper_213(), metadata()))
    data = bytearray(p.read_bytes())
    at = data.find(b"inputs_info_[0]")
    data[at:at + 6] = b"XXXXXX"
    p.write_bytes(bytes(data))
    m = inspect_package(p).model()
    assert m.contract is None and any("unreadable" in n and "CRC" in n for n in m.notes)


def test_a_so_that_is_not_elf_gives_an_elf_error_not_a_crash(tmp_path) -> None:
    m = inspect_package(make_pt2(tmp_path / "junk.pt2", model_files(wrapper_213(), metadata(), so=b"\0" * 100))).model()
    assert m.libraries[0].elf.error == "malformed ELF: no ELF magic"
