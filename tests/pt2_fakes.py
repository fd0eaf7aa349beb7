"""Hand-made .pt2 archives for the parser and the malformed-archive tests (real zips, fake C++).

The wrapper texts copy the generated forms: 2.13 as unzipped from packages built here (CPU) with the
CUDA device-type and loadKernel lines of reference §4.3/§11.8, and the ~2.6 form from
torch/_inductor/codegen/cpp_wrapper_cpu.py of that time (checks inline in __check_inputs_outputs,
compiled in by AOT_INDUCTOR_DEBUG_COMPILE, escaped in_spec_, static_cast constant dtypes).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

TRAILER = (
    "\n// Compile cmd\n// {cxx} /cache/ab/cabc.wrapper.cpp -D TORCH_INDUCTOR_CPP_WRAPPER -D STANDALONE_TORCH_HEADER"
    " -D  C10_USING_CUSTOM_GENERATED_MACROS -D CPU_CAPABILITY_AVX512 -D USE_CUDA  -O1 -DNDEBUG -march=native -fPIC"
    " -std=c++20 -I/usr/local/cuda/include -I/site-packages/torch/include  -mavx512f -mavx512dq -mavx512vl"
    " -mavx512bw -mfma  -c -o /cache/ab/cabc.wrapper.o\n"
    "// Link cmd\n// {cxx} /cache/ab/cabc.wrapper.o /cache/ab/cabc.kernel.o -shared -fPIC -o /cache/ab/cabc.wrapper.so"
    " -ltorch -ltorch_cpu -lc10_cuda -lcuda -lgomp\n"
)


def check_block(idx: int, name: str, dtype: str, aten: str, sizes: list, strides: list, device: int | None,
                style: str = "2.13") -> str:
    """One input's check code; sizes items are ints (static) or (lo, hi) tuples (dynamic)."""
    move = "std::move(ss).str()" if style == "2.13" else "ss.str()"
    head = (f"AOTI_NOINLINE static void check_input_{idx}(\n    AtenTensorHandle* input_handles\n) {{\n"
            if style == "2.13" else "")
    lines = [head + f"    ConstantHandle {name} = ConstantHandle(input_handles[{idx}]);",
             f"    int32_t {name}_dtype;",
             f"    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype({name}, &{name}_dtype));",
             f"    int32_t {name}_expected_dtype = aoti_torch_dtype_{dtype}();",
             f"    if ({name}_expected_dtype != {name}_dtype) {{",
             f'        ss << "input_handles[{idx}]: unmatched dtype, " << "expected: " << {name}_expected_dtype '
             f'<< "({aten}), " << "but got: " << {name}_dtype << "\\n";',
             f"        throw std::runtime_error({move});", "    }",
             f"    auto {name}_size = {name}.sizes();"]
    for d, s in enumerate(sizes):
        if isinstance(s, int):
            lines.append(f"    if ({s} != {name}_size[{d}]) {{ throw std::runtime_error({move}); }}")
        else:
            lines.append(f"    if ({name}_size[{d}] < {s[0]}) {{ throw std::runtime_error({move}); }}")
            lines.append(f"    if ({name}_size[{d}] > {s[1]}) {{ throw std::runtime_error({move}); }}")
    lines.append(f"    auto {name}_stride = {name}.strides();")
    for d, s in enumerate(strides):
        if isinstance(s, int):
            lines.append(f"    if ({s} != {name}_stride[{d}]) {{ throw std::runtime_error({move}); }}")
    if device is not None:
        lines.append(f"    int32_t {name}_expected_device_type = {device};")
    if style == "2.13":
        lines.append("}")
    return "\n".join(lines) + "\n"


def wrapper_213(device: str = "cuda", cxx: str = "/usr/bin/g++") -> str:
    """A 2.13-form CUDA (or cpu) wrapper: x float32[s0 in 2..64, 8], ids int64[s0]; one Triton kernel."""
    dev = 1 if device == "cuda" else 0
    return (
        '#include <torch/csrc/inductor/aoti_include/cuda.h>\n'
        "AOTI_API AOTIRuntimeError AOTInductorGetLastError(const char** msg) { return 0; }\n"
        "AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,\n"
        "    : AOTInductorModelBase(2,\n                           1,\n                           1,\n"
        "                           device_str,\n                           std::move(cubin_dir),\n"
        "                           true) {\n"
        '    inputs_info_[0].name = "arg1_1";\n    inputs_info_[1].name = "arg2_1";\n'
        '    constants_info_[0].name = "fc_weight";\n'
        "    constants_info_[0].dtype = cached_torch_dtype_float32;\n"
        f"    constants_info_[0].device_type = cached_torch_device_type_{device};\n"
        "    constants_info_[0].shape = {16, 8};\n    constants_info_[0].stride = {8, 1};\n"
        '    constants_info_[0].original_fqn = "fc.weight";\n'
        '    in_spec_ = R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": []}])";\n'
        "    out_spec_ =\n"
        'R"([1, {"type": null, )"\n'
        'R"("context": null, "children_spec": []}])"\n'
        ";\n"
        '    outputs_info_[0].name = "output0";\n}\n'
        + check_block(0, "arg1_1", "float32", "at::kFloat", [(2, 64), 8], [8, 1], dev)
        + check_block(1, "arg2_1", "int64", "at::kLong", [(2, 64)], [1], dev)
        + "static bool _check_aoti_runtime_check_inputs_env() {\n"
        '    const static char* env_var_value = getenv("AOTI_RUNTIME_CHECK_INPUTS");\n}\n'
        "void AOTInductorModel::run_impl(\n) {\n    __check_inputs_outputs(input_handles, output_handles);\n"
        "    int64_t s0 = arg1_1_size[0];\n"
        '    if (_check_aoti_runtime_check_inputs_env()) { assert_size_stride(arg1_1, {s0, 8L}, {8L, 1L}, "input"); }\n'
        '    if (_check_aoti_runtime_check_inputs_env()) { assert_size_stride(arg2_1, {s0, }, {1L, }, "input"); }\n'
        + ('    kernels.triton_poi_fused_0 = loadKernel("/tmp/torchinductor_u/ab/cabcdef.cubin", '
           '"triton_poi_fused_0", 0, this->cubin_dir_);\n' if device == "cuda" else "")
        + "} // AOTInductorModel::run_impl\n"
        + TRAILER.format(cxx=cxx)
    )


def wrapper_26() -> str:
    """The ~2.6 form: checks inline in __check_inputs_outputs, always on; escaped in_spec_."""
    return (
        "AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,\n"
        "    : AOTInductorModelBase(2, 1, 1, device_str, cubin_dir, true) {\n"
        '    inputs_info_[0].name = "arg1_1";\n    inputs_info_[1].name = "arg2_1";\n'
        '    constants_info_[0].name = "L__self___fc_weight";\n'
        "    constants_info_[0].dtype = static_cast<int32_t>(cached_torch_dtype_float32);\n"
        "    constants_info_[0].offset = 0;\n    constants_info_[0].data_size = 512;\n"
        "    constants_info_[0].from_folded = false;\n"
        "    constants_info_[0].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::Parameter);\n"
        "    constants_info_[0].shape = {16, 8};\n    constants_info_[0].stride = {8, 1};\n"
        '    constants_info_[0].original_fqn = "fc.weight";\n'
        '    in_spec_ = "[1, {\\"type\\": \\"builtins.tuple\\", \\"context\\": \\"null\\"}]";\n'
        '    outputs_info_[0].name = "output0";\n}\n'
        "AOTI_NOINLINE static void __check_inputs_outputs(\n    AtenTensorHandle* input_handles,\n"
        "    AtenTensorHandle* output_handles) {\n"
        + check_block(0, "arg1_1", "float32", "at::kFloat", [(2, 64), 8], [8, 1], None, style="2.6")
        + check_block(1, "arg2_1", "bool", "at::kBool", [4], [1], None, style="2.6")
        + "}\nvoid AOTInductorModel::run_impl(\n) {\n    __check_inputs_outputs(input_handles, output_handles);\n"
        "    auto arg1_1_size = arg1_1.sizes();\n    int64_t s0 = arg1_1_size[0];\n}\n"
        + TRAILER.format(cxx="g++")
    )


def metadata(device: str = "cuda", cc: str = "90", isa: str = "AVX512", **extra: str) -> str:
    return json.dumps({"AOTI_DEVICE_KEY": device, "AOTI_PLATFORM": "linux", "AOTI_MACHINE": "x86_64",
                       "AOTI_CPU_ISA": isa, "AOTI_COMPUTE_CAPABILITY": cc, **extra})


def model_files(wrapper: str, meta: str | None, *, so: bytes = b"\x7fELF-not-really", cubins: tuple = ("cabcdef",),
                model: str = "model") -> dict[str, bytes | str]:
    base = f"data/aotinductor/{model}/"
    files: dict[str, bytes | str] = {base + "cabc.wrapper.cpp": wrapper, base + "cabc.wrapper.so": so}
    if meta is not None:
        files[base + "cabc.wrapper_metadata.json"] = meta
    for c in cubins:
        files[base + f"{c}.cubin"] = b"\x7fELF cubin"
    return files


def make_pt2(path: Path, files: dict[str, bytes | str], root: str | None = "pkg",
             compression: int = zipfile.ZIP_STORED) -> Path:
    """Write files into a zip under root/ (as torch's archive writer does), with the usual top-level entries."""
    prefix = f"{root}/" if root else ""
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        z.writestr(prefix + "archive_format", "pt2")
        for name, data in files.items():
            z.writestr(name if name.startswith("/") or name.startswith("..") else prefix + name, data)
    return path
