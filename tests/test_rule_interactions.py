"""How rules of different patterns settle a log between them (yields_to, aoti_only, the compiled-model cues), on real
reports of the corpus's dev split and on the guides' own source-derived example lines."""

from __future__ import annotations

from unittest import mock

import pytest
from aoti_debug.classify import similar
from aoti_debug.classify.engine import classify_text
from aoti_debug.classify.guides import load_guides
from corpus_cases import classify_dev_case as classify_case
from corpus_cases import dev_case


def examples(pattern: str, needle: str) -> list[str]:
    ex = load_guides()[pattern].rule.examples
    return [line for line in ex.match if needle in line]


def test_ptxas_failing_on_a_kernel_triton_compiles_is_the_kernels_compile_failure() -> None:
    # torchdynamo-era log: Triton's "Internal Triton PTX codegen error" with ptxas's own lines under it
    r = classify_case("pytorch/torchdynamo#840-1")
    assert r.pattern == "lowering_error"
    assert any("Internal Triton PTX codegen error" in e.text for e in r.evidence)


def test_aotis_own_fatbin_build_keeps_its_ptxas_failure_a_compile_error() -> None:
    # the lines torch/_inductor/codecache.py prints and raises when nvcc -fatbin fails, with a ptxas error between
    fatbin, raised = examples("cpp_compile_error", "-fatbin")
    ptxas = examples("cpp_compile_error", "ptxas fatal")[0]
    r = classify_text("\n".join([fatbin, "stderr:", ptxas, "", raised, f"torch._inductor.exc.InductorError: {raised}"]))
    assert r.pattern == "cpp_compile_error" and r.confidence >= 0.9


def test_a_fake_tensor_trace_shows_a_compiled_model_so_the_wrapped_cause_decides() -> None:
    # TorchRuntimeError wraps c10's "data is not allocated yet": a custom op traced without a fake kernel
    r = classify_case("rusty1s/pytorch_scatter#440-1")
    assert r.pattern == "custom_op"
    assert any("not allocated yet" in e.text for e in r.evidence)


def test_the_data_not_allocated_message_alone_is_not_a_custom_op() -> None:
    # a CPU kernel called on an eager meta tensor prints it too (c10 TensorImpl::data)
    line = ("RuntimeError: The tensor has a non-zero number of elements, but its data is not allocated yet. Caffe2 "
            "uses a lazy allocation, so you will need to call mutable_data() or raw_mutable_data() to actually "
            "allocate memory.")
    assert classify_text(line).pattern == "unknown"


def test_the_zip_readers_version_line_from_torch_load_is_no_package_version_skew() -> None:
    for case_id in ("NVIDIA/FasterTransformer#20-1", "pytorch/pytorch#47753-1"):  # torch.load, torch.jit.load
        r = classify_case(case_id)
        assert r.pattern == "unknown", case_id
        assert "version_skew" in [a.pattern for a in r.alternatives], case_id


def test_an_outsiders_log_gets_no_silent_alternatives() -> None:
    r = classify_case("pytorch/torchchat#702-1")  # a native build of the program's own code, nothing ranked
    assert r.pattern == "unknown" and r.outsider == "build"
    assert r.alternatives == []


def test_a_dynamo_recompile_limit_is_never_an_export_failure() -> None:
    r = classify_case("Nerogar/OneTrainer#1510-1")
    assert not any("recompile limit" in e.text for e in r.evidence if e.pattern == "export_failure")
    assert "unknown" in [r.pattern, *(a.pattern for a in r.alternatives)][:3]


def test_a_bare_crash_of_an_eager_program_is_unknown_with_the_crash_first_among_alternatives() -> None:
    # an eager research script (the thread: nothing compiled or exported) and a raw TensorRT engine program
    for case_id in ("SeonghwanSeo/PharmacoNet#6-1", "lvhao7896/DAC2018#1-1"):
        r = classify_case(case_id)
        assert r.pattern == "unknown", case_id
        assert r.alternatives[0].pattern == "segfault_no_message", case_id


def test_the_command_or_code_that_compiled_the_model_makes_a_bare_crash_decide() -> None:
    # an AOTInductor test on the command line; torch.compile in the quoted repro; a script run with --compile;
    # ExecuTorch's runtime frames under gdb's SIGSEGV
    for case_id in ("pytorch/pytorch#122051-1", "pytorch/pytorch#101371-1", "pytorch/pytorch#126669-1",
                    "pytorch/executorch#1858-1"):
        assert classify_case(case_id).pattern == "segfault_no_message", case_id


def test_a_marker_with_no_phase_shows_a_compiled_model_but_says_no_phase() -> None:
    crash = "Segmentation fault (core dumped)"
    alone, compiled = classify_text(crash), classify_text(f"TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n{crash}")
    assert alone.pattern == "unknown" and compiled.pattern == "segfault_no_message"
    assert compiled.phase_basis == "usual"  # the setting says a compiled model ran, not where it failed


def test_any_crash_report_of_a_program_with_nothing_compiled_is_unknown() -> None:
    # glibc's invalid free in a LibTorch program; faulthandler's thread dump of an RL run; a Windows access violation
    for case_id in ("pytorch/pytorch#30507-1", "isaac-sim/OmniIsaacGymEnvs#98-1", "Lightricks/ComfyUI-LTXVideo#269-1"):
        r = classify_case(case_id)
        assert r.pattern == "unknown", case_id
        assert "segfault_no_message" in [a.pattern for a in r.alternatives], case_id


def test_a_compile_workers_thread_in_a_faulthandler_dump_shows_a_compiled_model() -> None:
    r = classify_case("sgl-project/sglang#23526-1")  # only Inductor's compile worker pool among the threads
    assert r.pattern == "segfault_no_message"


CRASH = "Segmentation fault (core dumped)"


@pytest.mark.parametrize("line", [
    'python generate.py --prompt "Hello, my name is" --fake 7B  --compile false',  # a compile flag set off
    "python main.py --name GCN --amp True --compile False --device cuda:0",
    "python setup.py install --compile-rosco",  # a package's own build flag
    "python setup_for_test_only.py install --compile",  # setuptools byte-compiling
    "TORCHDYNAMO_DISABLE=1 python train.py",  # compilation turned off
    "--env TORCHINDUCTOR_CACHE_DIR=/var/tmp",  # a container setting, no command that compiles
    "# model = torch.compile(model)",  # commented out
    "Consider using torch.compile() to speed up your model.",  # prose
    '  File "/x/pytorch/test/inductor/test_triton_kernels.py", line 2913, in test_autotune_unbacked',  # eager test code
])
def test_a_line_that_only_mentions_compiling_shows_no_compiled_model(line: str) -> None:
    r = classify_text(f"{line}\n{CRASH}")
    assert r.pattern == "unknown" and r.alternatives[0].pattern == "segfault_no_message"


@pytest.mark.parametrize("line", [
    "python generate.py --checkpoint-path model.pt --compile --compile_prefill",
    "python generate.py --dso-path model.so",
    "TORCHINDUCTOR_CPP_WRAPPER=1 python run.py",
    "Running only test/inductor/test_aot_inductor_package.py::TestAOTInductorPackage_cuda::test_add",
    "    model = torch.compile(model, mode='max-autotune')",
    "@torch.compile",
    "skipping cudagraphs due to mutated inputs (1 instances)",
])
def test_the_command_code_or_log_line_of_a_compiled_model_makes_a_crash_decide(line: str) -> None:
    assert classify_text(f"{line}\n{CRASH}").pattern == "segfault_no_message"


def test_an_eager_error_stays_unknown_beside_a_compile_flag_set_off() -> None:
    flag = "python train.py --compile false"
    for error in ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)",
                  "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
                  "cuda:0 and cpu!"):
        assert classify_text(f"{flag}\n{error}").pattern == "unknown", error


@pytest.mark.parametrize("case_id", [
    "pytorch/pytorch#157709-1",  # libtorch_python.so needs a newer GLIBCXX: no frame at all
    "pytorch/pytorch#7070-1",  # from torch._C import * in torch/__init__.py, a DLL of torch missing
    "pytorch/pytorch#131662-1",  # IPython's frame of torch/__init__.py, fbgemm.dll (escaped backslashes)
    "huggingface/diffusers#5247-1",  # torch's own "Error loading ...torch\lib\c10.dll", in French
])
def test_torch_itself_failing_to_import_is_a_broken_install_not_a_native_mismatch(case_id) -> None:
    r = classify_case(case_id)
    assert (r.pattern, r.outsider, r.confidence, r.next_steps) == ("unknown", "install", 0.5, [])
    assert r.summary.startswith("torch itself failed to import")
    assert "native_abi" in [a.pattern for a in r.alternatives]  # what the loader's words read like


def test_an_import_failure_beside_a_compiled_model_is_ours_and_an_extensions_own_load_is_no_install() -> None:
    glibcxx = classify_case("pytorch/pytorch#157709-1")
    assert glibcxx.outsider == "install"
    text = dev_case("pytorch/pytorch#157709-1")["text"]
    frame = '  File "/v/site-packages/torch/_inductor/codecache.py", line 2203, in load_pybinding\n'
    assert classify_text(frame + text).pattern == "native_abi"  # a compiled model in view: its words decide
    # an extension imported after torch: its own .so, not torch's install
    ext = classify_case("Dao-AILab/flash-attention#1717-1")
    assert (ext.pattern, ext.outsider) == ("version_skew", None)


@pytest.mark.parametrize("symbol", [
    "_ZN3c104cuda9SetDeviceEi",  # a signature that changed between releases
    "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",  # new-ABI string
    "_ZN3c105ErrorC1ENS_14SourceLocationERKSs",  # old-ABI string
    "_ZNR5torch7Library4_defEN3c1012FunctionSchemaEPNS_12CppFunctionENS_12_RegisterOrVerifyE",  # ref-qualified
    "_ZTIN3c1021AutogradMetaInterfaceE",  # a torch class's typeinfo (mmcv's classic error)
    "_ZTVN2at10TensorImplE",  # a torch class's vtable
])
def test_every_undefined_torch_cxx_symbol_is_a_library_built_against_another_torch(symbol) -> None:
    line = f"ImportError: /env/site-packages/ext/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: {symbol}"
    r = classify_text(line)
    assert r.pattern == "version_skew" and r.fields["missing_symbol"] == symbol
    # a C shim or another library's symbol is the native side's
    assert classify_text(line.replace(symbol, "cuModuleGetFunction")).pattern == "native_abi"


@pytest.mark.parametrize("case_id", [
    "Cambridge-ICCS/FTorch#34-1",  # a CMake project against libtorch: ATen.h's own #error
    "pytorch/pytorch#32938-1",  # PyTorch's own ATen source failing in its CI build
    "thu-coai/DA-Transformer#7-1",  # a project's own CUDA extension, JIT-built, with a too-old GCC
])
def test_a_compiler_error_in_code_inductor_did_not_generate_names_no_compiled_model(case_id) -> None:
    r = classify_case(case_id)
    assert r.pattern == "unknown" and "cpp_compile_error" in [a.pattern for a in r.alternatives[:2]]


@pytest.mark.parametrize("case_id", [
    "pytorch/pytorch#179902-1",  # MSVC on Inductor's hashed c<51>.main.cpp
    "pytorch/pytorch#104319-1",  # g++ on Inductor's CPU vectorization: Vectorized<float>, tmp2
    "pytorch/pytorch#181621-1",  # 'tmp8' was not declared: a name only generated code has
])
def test_a_compiler_error_naming_generated_code_is_the_compiled_models(case_id) -> None:
    assert classify_case(case_id).pattern == "cpp_compile_error"


# Lines of packages that are not torch but whose paths end in torch (review of the install outsider): an extension's
# own import failing, and a device backend that torch autoloads, are the extension's, not torch's install.
IPEX_FRAME = ('  File "/env/site-packages/intel_extension_for_pytorch/__init__.py", line 94, in <module>\n'
              "    from . import cpu\n")
HABANA_FRAME = '  File "/env/site-packages/habana_frameworks/torch/__init__.py", line 3, in <module>\n    import x\n'
NPU_AUTOLOAD = ('  File "/env/site-packages/torch/__init__.py", line 2700, in <module>\n    _import_device_backends()\n'
                '  File "/env/site-packages/torch/__init__.py", line 2650, in _import_device_backends\n'
                "    backend_extension = entrypoint.load()\n")
EXT_SYMBOL = "ImportError: /env/site-packages/ext/libext.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"


@pytest.mark.parametrize("frames", [IPEX_FRAME, HABANA_FRAME, NPU_AUTOLOAD])
def test_a_package_whose_path_ends_in_torch_or_a_backend_torch_autoloads_is_no_broken_install(frames) -> None:
    r = classify_text("Traceback (most recent call last):\n" + frames + EXT_SYMBOL)
    assert (r.pattern, r.outsider) == ("version_skew", None)
    ipex_dll = ('OSError: [WinError 126] The specified module could not be found. Error loading "C:\\env\\'
                'site-packages\\intel_extension_for_pytorch\\lib\\intel-ext-pt-gpu.dll" or one of its dependencies.')
    assert classify_text(ipex_dll).outsider is None


@pytest.mark.parametrize("line", [
    "/home/u/proj/csrc/kernel.cpp:12:3: error: 'foo' was not declared in this scope",  # a project's own kernel.cpp
    "error: 'tmp1' is not a valid key for the config",  # a generated name, but no compiler's words
    "/home/u/ext/src/vec.cpp:40:7: error: no match for 'operator+' (operand types are 'Vectorized<float>')",
])
def test_a_compiler_error_outside_generated_code_marks_no_compiled_model(line) -> None:
    r = classify_text(line)
    assert r.pattern == "unknown"


def test_a_generated_name_in_a_line_that_is_no_compilers_marks_no_compile_phase() -> None:
    assert classify_text("error: 'tmp1' is not a valid key for the config").phase is None


def test_a_compile_error_on_a_name_only_generated_code_has_marks_a_compiled_model() -> None:
    assert classify_text("error: 'tmp8' was not declared in this scope").pattern == "cpp_compile_error"
    assert classify_text("error: could not convert 'tmp2' from 'Vectorized<float>'").pattern == "cpp_compile_error"


def test_open_mpis_signal_line_alone_is_no_compiled_models_crash() -> None:
    mpi = "[node-3:70544] *** Process received signal ***\n[node-3:70544] Signal: Segmentation fault (11)\n"
    alone = classify_text(mpi)
    assert alone.pattern == "unknown" and alone.alternatives[0].pattern == "segfault_no_message"
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + mpi).pattern == "segfault_no_message"


def test_only_the_c_files_triton_builds_read_as_its_toolchain() -> None:
    assert classify_text("/tmp/tmpab/cuda_utils.c:12:3: error: unknown type name 'CUtensorMap'").pattern \
        == "toolchain_setup"
    assert classify_text("C:\\Temp\\tmpq\\__triton_launcher.c(123): error C2059: syntax error: '}'").pattern \
        == "toolchain_setup"
    # a project's own C file is its build's
    assert classify_text("C:\\proj\\src\\foo.c(12): error C2065: 'x': undeclared identifier").pattern == "unknown"
    assert classify_text("/home/u/proj/foo.c:5:10: error: unknown type name 'bar'").pattern != "toolchain_setup"


@pytest.mark.parametrize("text", [
    # a source checkout in a folder named for its version
    'File "/home/u/src/pytorch-2.4/torch/__init__.py", line 290, in <module>\n    from torch._C import *\n'
    "ImportError: /home/u/src/pytorch-2.4/torch/lib/libtorch_cpu.so: undefined symbol: _ZN3c105ErrorC1Ev",
    # a PyInstaller app: a relative frame and its _internal folder
    'File "torch\\__init__.py", line 139, in <module>\n'
    "OSError: [WinError 126] The specified module could not be found. "
    'Error loading "C:\\app\\dist\\main\\_internal\\torch\\lib\\c10.dll" or one of its dependencies.',
    # IPython 7 (Colab) frames
    "/usr/local/lib/python3.10/dist-packages/torch/__init__.py in <module>()\n    197     from torch._C import *\n"
    "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
])
def test_torch_failing_to_import_from_a_checkout_an_app_bundle_or_a_notebook_is_an_install_too(text) -> None:
    assert classify_text(text).outsider == "install"


def test_symbolic_shapes_recording_log_of_an_unbacked_guard_is_export_even_with_a_comma_in_the_expression() -> None:
    # torch/fx/experimental/recording.py logs "failed while running %s(*%s, **%s)"; pytorch/pytorch#134616
    prefix = "E1112 08:15:17.837140 457319 site-packages/torch/fx/experimental/recording.py:298] "
    r = classify_text(prefix + "failed while running evaluate_expr(*(Eq(u0, 1), None), **{'fx_node': False})")
    assert r.pattern == "export_failure"
    assert r.fields.get("expression") == "Eq(u0, 1)"
    nested = classify_text("failed during evaluate_expr(Eq(Mod(u0, 2), 0), hint=None, size_oblivious=False")
    assert nested.pattern == "export_failure"
    # a guard with a hint is on a backed symbol: nothing data-dependent
    hinted = classify_text(prefix + "failed while running evaluate_expr(*(Eq(s0, 1), True), **{'fx_node': False})")
    assert hinted.pattern == "unknown"


@pytest.mark.parametrize("line", [
    # before 2.8 (torch/_dynamo/utils.py get_fake_value); NVIDIA/cuEquivariance#77
    "torch._dynamo.exc.Unsupported: dynamic shape operator: aten.nonzero.default; to enable, set "
    "torch._dynamo.config.capture_dynamic_output_shape_ops = True",
    "torch._dynamo.exc.Unsupported: data dependent operator: aten._local_scalar_dense.default; to enable, set "
    "torch._dynamo.config.capture_scalar_outputs = True",
    "torch._dynamo.exc.Unsupported: Tensor.item",
    # the 2.8+ gb_types of the same breaks
    "torch._dynamo.exc.Unsupported: Dynamic shape operator\n"
    "  Explanation: Operator `aten.nonzero.default`'s output shape depends on input Tensor data.\n"
    "  Hint: Enable tracing of dynamic shape operators with "
    "`torch._dynamo.config.capture_dynamic_output_shape_ops = True`",
    "torch._dynamo.exc.Unsupported: Unsupported Tensor.item() call with capture_scalar_outputs=False",
    # a recompile limit, with the frames that raise it (Nerogar/OneTrainer#1510)
    'File "/venv/lib/python3.12/site-packages/torch/_dynamo/exc.py", line 657, in unimplemented\n'
    "    raise Unsupported(msg, gb_type, skip_frame)\n"
    "torch._dynamo.exc.Unsupported: Dynamo recompile limit exceeded",
])
def test_a_break_only_torch_compile_raises_is_no_export_failure_not_even_as_a_guess(line) -> None:
    # torch._dynamo.export turns capture_scalar_outputs and capture_dynamic_output_shape_ops on
    # (torch/_dynamo/eval_frame.py), and export traces once: these come from plain torch.compile
    r = classify_text(line)
    assert r.pattern == "unknown"


def test_the_breaks_export_can_raise_stay_export_failures() -> None:
    # with the capture configs on, an op with no dynamic-shape meta kernel still stops export
    assert classify_text("torch._dynamo.exc.Unsupported: dynamic shape operator: aten.repeat_interleave.Tensor; "
                         "Operator does not have a meta kernel that supports dynamic output shapes, please report "
                         "an issue to PyTorch").pattern == "export_failure"
    assert classify_text("torch._dynamo.exc.Unsupported: Dynamic shape operator (no meta kernel)").pattern \
        == "export_failure"
    assert classify_text("torch._dynamo.exc.Unsupported: generic_jump TensorVariable()").pattern == "export_failure"


def test_an_op_missing_from_torch_library_counts_only_next_to_a_compiled_model() -> None:
    # torch/_library/fake_impl.py raises it from register_fake in any program (fudan-generative-vision/hallo#98)
    line = "RuntimeError: operator _C::scaled_fp4_quant does not exist"
    assert classify_text(line).pattern == "unknown"
    loaded = classify_text("torch._inductor.aoti_load_package('model.pt2')\n" + line)
    assert loaded.pattern == "custom_op"


def test_a_device_assert_on_a_value_is_no_index_out_of_bounds() -> None:
    # binary_cross_entropy's target range in eager training: a value check, which the policy keeps no class for
    assert classify_case("balajiselvaraj1601/RCF_Pytorch_Updated#8-1").pattern == "unknown"
    nan_check = ("/home/tristanr/pytorch/torch/csrc/distributed/c10d/NanCheck.cu:217: checkForNaN: block: [0,0,0], "
                 "thread: [0,0,0] Assertion `!isnan(tailPtr[threadIdx.x])` failed.")
    assert classify_text(nan_check).pattern == "unknown"
    # an assert on a class index (nll_loss2d) is an index's, eager or not
    cls = ("/pytorch/aten/src/ATen/native/cuda/Loss.cu:180: nll_loss_forward_no_reduce_cuda_kernel: block: [0,0,0], "
           "thread: [3,0,0] Assertion `cur_target >= 0 && cur_target < n_classes` failed.")
    assert classify_text(cls).pattern == "triton_index_out_of_bounds"


def test_an_android_tombstone_is_a_crash_report_beside_an_exported_program_only() -> None:
    # debuggerd's frame in ExecuTorch's runtime (torch::executor shows the exported program)
    r = classify_case("pytorch/executorch#4237-1")
    assert r.pattern == "segfault_no_message" and r.confidence == 0.5
    bionic = ("2024-11-15 12:18:06.547 28737-28810 libc                    com.example.executorchllamademo      A  "
              "Fatal signal 11 (SIGSEGV), code 2 (SEGV_ACCERR), fault addr 0xb400007343057000 in tid 28819 (Thread-2)")
    assert classify_text(bionic).pattern == "unknown" and rule_alternatives(bionic)[0] == "segfault_no_message"
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + bionic).pattern == "segfault_no_message"
    # a frame of some other program's tombstone, with no compiled model in view, stays unknown
    other = "07-12 10:11:23.542 11569 11569 F DEBUG   :       #12 pc 00000000031345c4  /data/local/tmp/app (foo+380)"
    assert classify_text(other).pattern == "unknown"


def test_lldb_stopping_on_a_signal_reads_like_the_shells_report_of_it() -> None:
    run = "TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n"
    segv = classify_text(run + "* thread #1, name = 'python3', stop reason = signal SIGSEGV: invalid address")
    assert segv.pattern == "segfault_no_message" and segv.confidence >= 0.5
    # an abort is weak, as the shell's Aborted: the message before it is the cause when there is one
    abort = classify_text(run + "* thread #1, name = 'mtk_llama_execu', stop reason = signal SIGABRT")
    assert (abort.pattern, abort.confidence) == ("segfault_no_message", 0.4)
    assert classify_text(run + "* thread #1, name = 'python3', stop reason = breakpoint 1.1").pattern == "unknown"


def test_a_quoted_dlerror_cut_before_its_reason_is_still_a_missing_library() -> None:
    assert classify_case("pytorch/executorch#17632-1").pattern == "native_abi"
    assert classify_text("OSError: libfoo.so: cannot open shared object file: Permission denied").pattern \
        == "native_abi"
    # the driver's library beside a compiled model stays the device's
    libcuda = "TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\nImportError: libcuda.so.1: cannot open shared object file"
    assert classify_text(libcuda).pattern == "device_mismatch_load"


def test_nccls_cuda_check_names_the_fault_it_found() -> None:
    ima = "enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'"
    assert classify_text(ima).pattern == "cuda_illegal_memory_access"
    # a negative of the new regex, which lists no OOM: NCCL's out of memory stays the allocator's (the OOM rule's)
    assert classify_text("include/alloc.h:316 NCCL WARN Cuda failure 'out of memory'").pattern == "out_of_memory"


@pytest.mark.parametrize("case_id", ["tinygrad/tinygrad#11442-1", "NVIDIA/TensorRT#2926-1"])
def test_tinygrad_and_tensorrts_error_format_name_another_engine(case_id) -> None:
    r = classify_case(case_id)
    assert (r.pattern, r.outsider) == ("unknown", "engine")


def test_tensorrts_error_format_beside_torch_keeps_the_class() -> None:
    # Torch-TensorRT: TensorRT's allocator failing in a PyTorch program is out of memory (the policy's first bullet)
    r = classify_case("pytorch/TensorRT#4227-1")
    assert (r.pattern, r.outsider) == ("out_of_memory", None)


def test_r_torch_failing_to_start_is_a_broken_install() -> None:
    r = classify_case("mlverse/torch#866-1")
    assert (r.pattern, r.outsider) == ("unknown", "install")
    # an extension's own old-libstdc++ failure, with no such line, stays native_abi
    ext = ("ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.20' not found "
           "(required by /env/site-packages/myext/_C.so)")
    assert classify_text(ext).pattern == "native_abi"


MEGATRON_NVCC = "0: nvcc fatal   : Unsupported gpu architecture 'compute_90'"


def test_nvcc_too_old_for_the_gpu_decides_only_beside_a_compiled_model() -> None:
    # Triton never runs nvcc: alone, it is an extension's or a project's build (Megatron's fused kernels)
    assert classify_text(MEGATRON_NVCC).pattern == "unknown"
    assert classify_case("NVIDIA/Megatron-LM#278-1").pattern == "unknown"
    cuda_template = "torch._inductor.exc.CUDACompileError: C++ compile error\n"
    assert classify_text(cuda_template + MEGATRON_NVCC).pattern == "toolchain_setup"
    # ptxas, which Triton runs for any kernel, keeps its class whoever launched it
    assert classify_text("ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'").pattern \
        == "toolchain_setup"


XCRUN = ("xcrun: error: invalid active developer path (/Library/Developer/CommandLineTools), missing xcrun at: "
         "/Library/Developer/CommandLineTools/usr/bin/xcrun")


def test_macos_build_tools_missing_decide_only_beside_a_compiled_model() -> None:
    assert classify_text(XCRUN).pattern == "unknown"  # pip building a C extension prints it too
    inductor = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                "CppCompileError: C++ compile error\n")
    assert classify_text(inductor + XCRUN).pattern == "toolchain_setup"


def test_a_relocation_error_of_a_projects_own_link_is_no_compiled_models() -> None:
    own = ("/usr/bin/ld: /tmp/ccjNdJf6.o: relocation R_X86_64_32 against `.text' can not be used when making a "
           "shared object; recompile with -fPIC")
    assert classify_text(own).pattern == "unknown"
    assert classify_case("zai-org/ChatGLM-6B#196-1").pattern == "unknown"
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + own).pattern == "cpp_compile_error"


def test_msvc_named_in_capitals_building_tritons_launcher_is_the_toolchain() -> None:
    cmd = ("subprocess.CalledProcessError: Command '['C:\\\\VS\\\\bin\\\\Hostx64\\\\x64\\\\cl.EXE', "
           "'C:\\\\Users\\\\u\\\\AppData\\\\Local\\\\Temp\\\\tmpiq\\\\{}', '/nologo', '/O2']' "
           "returned non-zero exit status 2.")
    assert classify_text(cmd.format("main.c")).pattern == "toolchain_setup"
    assert classify_case("kijai/ComfyUI-WanVideoWrapper#119-1").pattern == "toolchain_setup"
    # the same compiler on C++ is a C++ compile, not Triton's launcher
    assert classify_text(cmd.format("model.cpp")).pattern != "toolchain_setup"


def test_triton_failing_to_lower_its_own_ops_is_a_generated_kernels_failure_only_beside_a_compiled_model() -> None:
    lines = ("error: failed to legalize operation 'tt.load' that was explicitly marked illegal\n"
             "Pass execution failedLLVM ERROR: Failed to translate TritonGPU to LLVM IR.\n")
    assert classify_text(lines).pattern == "unknown"  # a hand-written kernel fails the same way
    assert classify_case("pytorch/pytorch#101137-1").pattern == "lowering_error"
    # another MLIR project's dialect is not Triton's
    other = "TORCHINDUCTOR_MAX_AUTOTUNE=1 python run.py\n"
    tt_xla = "error: failed to legalize operation 'ttir.scatter' that was explicitly marked illegal"
    assert classify_text(other + tt_xla).pattern != "lowering_error"


def test_llvm_unreachable_in_tritons_compiler_is_a_generated_kernels_failure_only_beside_a_compiled_model() -> None:
    dpas = ("UNREACHABLE executed at /runner/_work/intel-xpu-backend-for-triton/intel-xpu-backend-for-triton/"
            "third_party/intel/lib/Analysis/DPAS.cpp:80!")
    assert classify_text(dpas).pattern == "unknown"
    assert classify_text("TORCHINDUCTOR_MAX_AUTOTUNE=1 python run.py\n" + dpas).pattern == "lowering_error"
    llvm = "UNREACHABLE executed at /build/llvm-project/llvm/lib/CodeGen/SelectionDAG/LegalizeDAG.cpp:1234!"
    assert classify_text("TORCHINDUCTOR_MAX_AUTOTUNE=1 python run.py\n" + llvm).pattern != "lowering_error"


def test_python_failing_to_parse_inductors_generated_module_is_a_codegen_failure() -> None:
    generated = ("SyntaxError: invalid syntax. Perhaps you forgot a comma? "
                 "(c2swhvevsvcfe3t7py66ebm444p2oq4p5iw2ywffmxngsqmqnok6.py, line 85)")
    assert classify_text(generated).pattern == "lowering_error"
    assert classify_case("pytorch/pytorch#135954-1").pattern == "lowering_error"
    assert classify_text("SyntaxError: invalid syntax. Perhaps you forgot a comma? (train.py, line 85)").pattern \
        == "unknown"


def test_a_metal_shader_a_program_compiles_itself_is_no_generated_kernel() -> None:
    assert classify_case("pytorch/pytorch#144648-1").pattern == "unknown"  # torch.mps.compile_shader by hand
    metal = "program_source:1:5: error: expected unqualified-id"
    assert classify_text(metal).pattern == "unknown"
    assert classify_text("python test/inductor/test_torchinductor.py -k test_cat_unbacked_2d_mps\n" + metal).pattern \
        == "lowering_error"


def test_a_compiled_models_result_printed_under_its_name_shows_a_compiled_model() -> None:
    # pytorch/pytorch#183768: the printed inf is the compiled model's, so the weak printed-NaN line decides
    eager = "eager:    [52.959457 60.454998 50.993343  1.316958]\n"
    compiled = "compiled: [     inf      inf      inf 1.316958]\n"
    assert classify_text(eager + compiled).pattern == "nan_inf"
    assert classify_text("Mode B (Inductor) -> Min: 0.0000e+00, Max: 0.0000e+00, HasNaN: True").pattern == "nan_inf"
    # a label that merely starts like one, or a config line, is no compiled result: the printed NaN stays eager's
    assert classify_text("Compiling kernels : 3\ntensor([nan, 1.])").pattern == "unknown"
    assert classify_text("model: resnet50\ncompile = 0\nloss: nan\ntensor([nan, nan])").pattern == "unknown"
    assert classify_text("tensor([nan, 1.])\ncompile: 1").pattern == "unknown"


def test_an_eager_programs_printed_nan_is_unknown() -> None:
    assert classify_text("CUDA result: tensor([[[nan, nan, nan, nan, nan, nan],").pattern == "unknown"
    assert classify_text("# torch out: array([inf,  0.,  2.], dtype=float32)").pattern == "unknown"
    assert classify_case("pytorch/pytorch#153209-1").pattern == "unknown"
    # beside the code that compiled the model it decides
    assert classify_text("fn = torch.compile(model)\nout: tensor([[nan, 0.5]])").pattern == "nan_inf"


def test_a_max_abs_error_written_as_an_identifier_is_a_comparison() -> None:
    line = "AssertionError: Compilation check MaxAbsError: 1.24863 (tol: 5e-05) for field `atomic_energy`."
    assert classify_text(line).pattern == "wrong_output"
    assert classify_text("rows=3 max_abs_error=0.25 tol=1e-06").pattern == "wrong_output"
    assert classify_text("model.layers.0.mlp | GptOssMLP  max|diff| 33.50   rel 0.39").pattern == "wrong_output"
    # the name of the setting, with no value, is not one
    assert classify_text("    max_abs_error = None").pattern == "unknown"


def test_torch_testings_older_messages_and_pytest_approx_are_comparisons() -> None:
    old = ("AssertionError: With rtol=1.3e-06 and atol=1e-05, found 2 element(s) (out of 4) whose difference(s) "
           "exceeded the margin of error (including {n} nan comparisons). The greatest difference was {d} "
           "({a} vs. 22.0), which occurred at index (1, 1).")
    assert classify_text(old.format(n=0, d="13.0", a="9.0")).pattern == "wrong_output"
    assert classify_text(old.format(n=1, d="nan", a="nan")).pattern == "nan_inf"
    assert classify_text("AssertionError: False is not true : Tensors failed to compare as equal!").pattern \
        == "wrong_output"
    approx = ("E       assert array([[200.,... 200., 200.]]) == approx([[300....0 ± 2.0e+00]])\n"
              "E         comparison failed. Mismatched elements: 1 / 9:\n")
    r = classify_text(approx)
    assert (r.pattern, r.fields.get("mismatched")) == ("wrong_output", "1 / 9")
    assert classify_text("E       assert approx_equal(a, b)").pattern == "unknown"


def rule_alternatives(text: str) -> list[str]:
    """The patterns the rules rank behind the winner, best first, with no public report to rank any."""
    with mock.patch.object(similar, "nearest", return_value=([], [])):
        return [a.pattern for a in classify_text(text).alternatives]


def test_a_cubin_the_driver_refuses_ranks_another_gpus_build_behind_the_toolchain() -> None:
    # CUDA_ERROR_INVALID_IMAGE through Triton's load_binary: a driver older than Triton's ptxas (decides), or a cubin
    # built for another GPU by a cache or generated code carried from another host (ranks)
    inductor = 'File "/x/torch/_inductor/runtime/triton_heuristics.py", line 520, in _precompile_config\n'
    line = "RuntimeError: Triton Error [CUDA]: device kernel image is invalid"
    r = classify_text(inductor + line)
    assert r.pattern == "toolchain_setup"
    assert "device_mismatch_load" in rule_alternatives(inductor + line)
    assert "device_mismatch_load" in [r.pattern, *(a.pattern for a in classify_case("pytorch/pytorch#141744-1")
                                                   .alternatives[:2])]
    other = "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered"
    assert "device_mismatch_load" not in rule_alternatives(inductor + other)


def test_an_error_that_only_names_the_compiler_ranks_the_toolchain_before_a_cpp_compile_error() -> None:
    # a compiler's own diagnostic decides cpp_compile_error; an error line that only names the compiler (ptxas exiting
    # with a code, gcc not found) is more often the toolchain (27 toolchain_setup against 11 on dev)
    ptxas = "RuntimeError: `ptxas` failed with error code 4294967295: "  # kijai/ComfyUI-WanVideoWrapper#88
    run = "TORCHINDUCTOR_MAX_AUTOTUNE=1 python run.py\n"
    assert classify_text(run + ptxas).pattern == "toolchain_setup"  # Windows' ptxas exit decides (toolchain_setup.md)
    # Linux's form of the same exit (Triton's make_cubin maps 255 to this) with no diagnostic: the toolchain still first
    ranked = rule_alternatives(run + "RuntimeError: Internal Triton PTX codegen error: \n")
    assert ranked[0] == "toolchain_setup"
    diagnostic = ("/tmp/torchinductor_u/ab/cabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxy.cpp:12:5: error: "
                  "'tmp3' was not declared in this scope")
    assert classify_text(diagnostic).pattern == "cpp_compile_error"


def test_backend_compiler_failed_with_its_cause_cut_ranks_the_toolchain_too() -> None:
    # triton-ascend#2104: a Triton install without what Inductor looks for, cut before the final line
    r = classify_case("triton-lang/triton-ascend#2104-1")
    assert "toolchain_setup" in [r.pattern, *(a.pattern for a in r.alternatives[:2])]
    lowering = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                "LoweringException: AssertionError: \n  target: aten.index_put.default")
    assert classify_text(lowering).pattern == "lowering_error"


def test_an_error_naming_a_fake_tensor_ranks_the_tracing_failures() -> None:
    fake_add = "TypeError: unsupported operand type(s) for +: 'FakeTensor' and 'FakeTensor'"  # pytorch#101066
    # two fake modes that disagree (torch/_guards.py, detect_fake_mode; pytorch#171674)
    modes = "AssertionError: fake mode (...) from tracing context 0 doesn't match mode (...) from fake tensor input 0"
    for line in (fake_add, modes):
        assert classify_text(line).pattern == "unknown"
        assert "export_failure" in rule_alternatives(line), line
    for case_id in ("pytorch/pytorch#171674-1", "pytorch/pytorch#101066-1"):  # their own threads left out
        r = classify_case(case_id)
        assert "export_failure" in [r.pattern, *(a.pattern for a in r.alternatives[:2])], case_id
    assert "export_failure" not in rule_alternatives("TypeError: unsupported operand type(s) for +: 'Tensor' and 'str'")


def test_a_failure_surfacing_at_cuda_synchronize_ranks_an_earlier_kernels_illegal_access() -> None:
    frames = ('File "/x/triton/testing.py", line 118, in do_bench\n    di.synchronize()\n'
              'File "/x/torch/cuda/__init__.py", line 985, in synchronize\n    return torch._C._cuda_synchronize()')
    assert classify_text(frames).pattern == "unknown"
    assert "cuda_illegal_memory_access" in rule_alternatives(frames)
    r = classify_case("vllm-project/vllm#17344-1")
    assert "cuda_illegal_memory_access" in [r.pattern, *(a.pattern for a in r.alternatives[:2])]
    launch = 'File "/x/torch/cuda/__init__.py", line 319, in _lazy_init\n    torch._C._cuda_init()'
    assert "cuda_illegal_memory_access" not in rule_alternatives(launch)


def test_a_crash_in_the_sources_of_tritons_compiler_ranks_a_lowering_error() -> None:
    frame = (" 4 0x000000000101252b MMA16816SmemLoader::loadX4()  /opt/openai/triton/third_party/nvidia/lib/"
             "TritonNVIDIAGPUToLLVM/ConvertLayoutOpToLLVM/SharedToDotOperandMMAv2.cpp:418")
    assert "lowering_error" in rule_alternatives("Segmentation fault (core dumped)\n" + frame)
    assert classify_text(frame).pattern == "unknown"  # a hand-written kernel crashes the compiler too
    llvm = " 3 0x00000000015db7ea llvm::SelectionDAG::Legalize()  /build/llvm-project/llvm/lib/CodeGen/Legalize.cpp:12"
    assert "lowering_error" not in rule_alternatives("Segmentation fault (core dumped)\n" + llvm)


def test_the_cuda_libraries_allocation_statuses_are_out_of_memory() -> None:
    for line in ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
                 "RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED",
                 "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`"):
        assert classify_text(line).pattern == "out_of_memory", line
    assert classify_text("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED").pattern != "out_of_memory"


def test_torch_compile_refusing_the_platform_is_no_compiled_models_failure_but_ranks_the_toolchain() -> None:
    # torch/_dynamo/eval_frame.py check_if_dynamo_supported: raised before anything is compiled (a platform gate)
    for line in ("RuntimeError: Windows not yet supported for torch.compile",
                 "RuntimeError: Python 3.12+ not yet supported for torch.compile"):
        r = classify_text(line)
        assert r.pattern == "unknown", line
        assert rule_alternatives(line)[0] == "toolchain_setup", line
    r = classify_case("ostris/ai-toolkit#28-1")
    assert r.pattern == "unknown"
    assert "toolchain_setup" in [a.pattern for a in r.alternatives]
    assert "toolchain_setup" not in rule_alternatives("RuntimeError: torch.compile is not supported on this model")


# TensorFlow's TPU runtime out of HBM, quoted from https://github.com/DifferentiableUniverseInitiative/flowpm/issues/27
TF_TPU_OOM = ("E1111 07:35:00.272763 140408571025152 error_handling.py:81] Closing session due to error From "
              "/job:worker/replica:0/task:0:\n"
              "Compilation failure: Ran out of memory in memory space hbm. Used 41.74G of 16.00G hbm. Exceeded hbm "
              "capacity by 25.74G.\n")


def test_tensorflows_device_names_with_no_word_of_torch_are_another_engines_log() -> None:
    r = classify_text(TF_TPU_OOM)
    assert (r.pattern, r.outsider) == ("unknown", "engine")
    assert rule_alternatives(TF_TPU_OOM)[0] == "out_of_memory"
    assert classify_case("DifferentiableUniverseInitiative/flowpm#27-1").pattern == "unknown"
    # torch_xla's XRT runtime prints the same device names next to torch's own frames: ours, its OOM stands
    assert classify_case("huggingface/transformers#22328-1").pattern == "out_of_memory"
    frame = '  File "/v/site-packages/torch_xla/core/xla_model.py", line 1093, in mark_step\n'
    assert classify_text(frame + TF_TPU_OOM).pattern == "out_of_memory"


# Torch-TensorRT's TorchScript runtime rejecting a CPU input, quoted from https://github.com/pytorch/TensorRT/issues/1446
TS_DEVICE = (
    "RuntimeError: The following operation failed in the TorchScript interpreter.\n"
    "Traceback of TorchScript (most recent call last):\n"
    "RuntimeError: [Error thrown at core/runtime/execute_engine.cpp:87] Expected inputs[pyt_idx].is_cuda() to be "
    "true but got false\n"
    "Expected input tensors to have device cuda, found device cpu\n")


def test_a_torchscript_programs_failure_is_no_compiled_models_but_its_out_of_memory_stands() -> None:
    r = classify_text(TS_DEVICE)
    assert (r.pattern, r.outsider, r.next_steps) == ("unknown", "torchscript", [])
    assert rule_alternatives(TS_DEVICE)[0] == "input_device_mismatch"
    assert r.summary.startswith("A TorchScript program's failure")
    # the same check under torch.compile (a Dynamo frame above it) is ours
    frame = '  File "/v/site-packages/torch/_dynamo/eval_frame.py", line 655, in _fn\n'
    assert classify_text(frame + TS_DEVICE.splitlines()[-1] + "\n").pattern == "input_device_mismatch"
    assert classify_text(frame + TS_DEVICE).pattern == "input_device_mismatch"
    # the allocator's class keeps its class in a scripted program, as in eager code
    assert classify_case("pytorch/TensorRT#603-1").pattern == "out_of_memory"


# libtorch running a TorchScript model, quoted from https://github.com/aiqm/torchani/issues/609
LAZY_NVRTC = (
    "terminate called after throwing an instance of 'c10::Error'\n"
    "  what():  Error in dlopen or dlsym: libnvrtc-f4909b87.so.11.0: cannot open shared object file: No such file "
    "or directory\n"
    "Exception raised from checkDL at /home/nazanin/programs/pytorch/aten/src/ATen/DynamicLibrary.cpp:23 (most "
    "recent call first):\n")


def test_torchs_own_nvrtc_missing_is_a_broken_install_and_an_aoti_so_failing_dlopen_is_not() -> None:
    r = classify_text(LAZY_NVRTC)
    assert (r.pattern, r.outsider) == ("unknown", "install")
    assert r.summary.startswith("torch itself failed to import or to load one of its own libraries")
    assert "native_abi" in [a.pattern for a in r.alternatives]
    # the same loader failing on a compiled kernel's .so (AOTI eager) is the package's native mismatch
    assert classify_case("pytorch/pytorch#125308-1").pattern == "native_abi"
    other = ("RuntimeError: Error in dlopen: /tmp/x/aoti_eager/aten/cpu/lib/c45k/cawb.so: cannot open shared object "
             "file: No such file or directory")
    assert classify_text(other).pattern == "native_abi"


def test_a_program_too_new_for_the_hosts_libstdcxx_is_no_library_load() -> None:
    tool = ("/home/dli/.triton/llvm/llvm-4017f04e-ubuntu-x64/bin/mlir-tblgen: /lib64/libstdc++.so.6: version "
            "'GLIBCXX_3.4.26' not found (required by /home/dli/.triton/llvm/llvm-4017f04e-ubuntu-x64/bin/mlir-tblgen)")
    assert classify_text(tool).pattern == "unknown"
    assert classify_case("triton-lang/triton#3397-1").pattern == "unknown"
    # a library that needs it is native_abi, with or without the object named
    assert classify_case("RenYurui/PIRender#21-1").pattern == "native_abi"
    assert classify_case("triton-lang/triton#1543-1").pattern == "native_abi"
    assert classify_text("ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found").pattern \
        == "native_abi"


# OpenCV's import failing on a missing system library, quoted from https://github.com/chenfei-wu/TaskMatrix/issues/262
CV2_LIBGL = """\
  File "/home/xx/miniconda3/envs/visgpt/lib/python3.8/site-packages/cv2/__init__.py", line 153, in bootstrap
    native_module = importlib.import_module("cv2")
ImportError: libGL.so.1: cannot open shared object file: No such file or directory
"""


def test_opencvs_own_import_with_no_word_of_torch_is_not_a_native_mismatch_of_ours() -> None:
    r = classify_text(CV2_LIBGL)
    assert (r.pattern, r.outsider) == ("unknown", "engine")
    assert rule_alternatives(CV2_LIBGL)[0] == "native_abi"
    # in a PyTorch program's log (a torch frame) the missing library is the policy's native_abi again
    frame = '  File "/v/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl\n'
    assert classify_text(frame + CV2_LIBGL).pattern == "native_abi"


def test_the_items_of_a_draft_export_report_pasted_without_its_header_are_an_export_failure() -> None:
    # torch/export/_draft_export.py FailureReport.print (Guard Added, Data dependent error);
    # https://github.com/pytorch/pytorch/issues/151094 quotes a Guard Added item alone
    guard = ("1. Guard Added.\n"
             "    A guard was added during tracing, which might've resulted in some incorrect\n"
             "    tracing or constraint violation error.\n"
             "    Specifically, this guard was added: Eq(Mod(s21*s5*s89, 2560), 0), where {'s5': \"L['x'].size()[0]\"}"
             ".")
    assert classify_text(guard).pattern == "export_failure"
    data_dep = ("2. Data dependent error.\n"
                "    When exporting, we were unable to evaluate the value of `u306`.\n"
                "    Please add `torch._check(...)` to the original code to assert this data-dependent assumption.")
    r = classify_text(data_dep)
    assert r.pattern == "export_failure"
    assert r.fields.get("expression") == "u306"
    # the symbolic-shapes INFO log of a guard is no report of a failed export
    log = ("I0215 10:11:12.345000 123 torch/fx/experimental/symbolic_shapes.py:6328] [0/0] "
           "eval Eq(s0, 3) [guard added] (_refs/__init__.py:3698 in _reshape_view_helper)")
    assert classify_text(log).pattern != "export_failure"


def test_tritons_cpu_tensor_check_decides_only_beside_a_compiled_model() -> None:
    # Triton's launcher raises it for any kernel: a hand-written one given a CPU tensor is the program's own
    # (state-spaces/mamba#699); beside Inductor's launcher it is a compiled model's input on the wrong device
    line = "ValueError: Pointer argument (at 1) cannot be accessed from Triton (cpu tensor?)"
    bare = classify_text(line)
    assert bare.pattern == "unknown"
    assert rule_alternatives(line)[0] == "input_device_mismatch"
    frame = '  File "/x/torch/_inductor/runtime/triton_heuristics.py", line 1100, in run\n'
    assert classify_text(frame + line).pattern == "input_device_mismatch"


def test_torch_init_importing_torch_c_and_torchs_own_library_missing_a_symbol_are_a_broken_install() -> None:
    # torch/__init__.py's line, quoted under its frame (pytorch#4518's title), and torch/lib's own library with an
    # undefined symbol of its own (ziyangwang007/Mamba-UNet#13): `import torch` failed, nothing was compiled
    title = "from torch._C import * (ImportError: DLL load failed: The specified module could not be found."
    own_lib = ("from torch._C import *  # noqa: F403\n"
               "ImportError: .../python3.10/site-packages/torch/lib/libtorch_cpu.so: "
               "undefined symbol: _ZNSt15__exception_ptreqERKNS_13exception_ptrES2_, version CXXABI_1.3.3")
    for text in (title, own_lib, own_lib.split("\n")[1]):
        r = classify_text(text)
        assert (r.pattern, r.outsider) == ("unknown", "install"), text
    # an extension's library needing torch's symbol is the extension's (version_skew), and a program's own
    # `from torch._C import _foo` is no import of torch
    ext = ("ImportError: /x/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: "
           "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs")
    assert (classify_text(ext).pattern, classify_text(ext).outsider) == ("version_skew", None)
    assert classify_text("from torch._C import _cuda_getDeviceCount\nImportError: cannot import name").outsider is None


def test_unified_runtimes_out_of_resources_is_out_of_memory_not_code_generation() -> None:
    # intel/torch-xpu-ops#1170, intel/intel-xpu-backend-for-triton#2042: UR's status for an allocation that threw
    line = "RuntimeError: UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)"
    assert classify_text(line).pattern == "out_of_memory"
    # UR's other failures of a kernel build stay code generation next to Inductor
    build = ("torch._inductor.exc.InductorError: RuntimeError: UR backend failed. "
             "UR backend returns:45 (UR_RESULT_ERROR_INVALID_KERNEL_NAME)")
    assert classify_text(build).pattern == "lowering_error"


def test_a_compiler_missing_its_own_cxx_standard_headers_is_the_toolchain() -> None:
    # https://github.com/ModelCloud/GPTQModel/issues/1568, https://github.com/ClownsharkBatwing/RES4LYF/issues/194
    msvc = ("torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"
            "C:/Temp/torchinductor_u/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h(3): "
            "fatal error C1083: Cannot open include file: 'algorithm': No such file or directory")
    assert classify_text(msvc).pattern == "toolchain_setup"
    clang = "re2/re2.h:207:10: fatal error: 'algorithm' file not found"
    assert classify_text("torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n" + clang).pattern == (
        "toolchain_setup")
    # any build prints it: alone, or in an extension's build, it is that build's, not a compiled model's
    assert classify_text(clang).pattern == "unknown"
    assert classify_text("x.cpp:3:10: fatal error: vector: No such file or directory").pattern == "unknown"
    # a header of the program's own, or one the generated code misnames, is the compile's, not the toolchain's
    own = ("torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"
           "/tmp/torchinductor_u/ab/cabcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop.main.cpp:3:10: "
           "fatal error: 'algorithms' file not found")
    assert classify_text(own).pattern != "toolchain_setup"


def test_a_compiler_error_in_atens_source_tree_is_pytorch_being_built_not_a_compiled_model() -> None:
    # https://github.com/pytorch/pytorch/issues/91936: clang on ppc64le building PyTorch itself
    src = ("/builddir/build/BUILD/pytorch-v2.0.1/aten/src/ATen/cpu/vec/vec256/vsx/vsx_helpers.h:58:10: "
           "error: use of undeclared identifier 'vec_vsubuhm'")
    assert classify_text(src).pattern == "unknown"
    # the same header as torch installs it, which Inductor's generated C++ includes, still shows a compiled model
    installed = ("/home/u/.venv/lib/python3.12/site-packages/torch/include/ATen/cpu/vec/vec256/vsx/"
                 "vsx_helpers.h:58:10: error: use of undeclared identifier 'vec_vsubuhm'")
    assert classify_text(installed).pattern == "cpp_compile_error"


def test_dynamos_footer_shows_a_compiled_model_so_a_generated_kernels_compile_error_decides() -> None:
    # https://github.com/pytorch/pytorch/issues/164700 (torch/_dynamo/exc.py's footer; the older one up to 2.5)
    error = ("triton.compiler.errors.CompilationError: at 23:31:\n"
             "    tmp14 = tl.load(in_ptr0 + (tl.broadcast_to(1 + (31), [XBLOCK])), tmp13, other=0.0)\n")
    assert classify_text(error).pattern == "unknown"  # a hand-written kernel raises the same
    for footer in ("Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're "
                   "reporting a bug to PyTorch). For even more developer context, set TORCH_LOGS=\"+dynamo\"",
                   'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information'):
        assert classify_text(error + "\n" + footer).pattern == "lowering_error", footer
    assert classify_text(error + "\nSet TORCH_LOGS=+inductor for more information").pattern == "unknown"


def test_a_compile_package_built_for_a_cpu_vector_isa_the_host_lacks_is_a_device_mismatch_not_a_version_skew() -> None:
    # https://github.com/pytorch/pytorch/pull/195354 (torch/_dynamo/package.py, SystemInfo.check_compatibility)
    cpu = ("RuntimeError: Compile package was created for a CPU codegen target this host cannot run: "
           "cached=('x86_64', 'avx512', 512, ('CPU_CAPABILITY_AVX512',), 512, None), "
           "current=('x86_64', 'avx2', 256, ('CPU_CAPABILITY_AVX2',), 256, None). avx512 kernels need avx512")
    result = classify_text(cpu)
    assert result.pattern == "device_mismatch_load"
    assert result.fields.get("load_host_value", "").startswith("('x86_64', 'avx2'")
    # the same check's release mismatch is the package's torch version, not the host's hardware
    assert classify_text("RuntimeError: Compile package was created with a different PyTorch version: "
                         "2.9.0+cu128").pattern == "version_skew"


def test_dynamos_older_inline_in_skipfiles_break_is_an_export_failure_but_not_any_skipfiles_word() -> None:
    # https://github.com/pytorch/torchdynamo/issues/1737: torchdynamo.export, the 2022 package's prefix and
    # 2.0-2.2's wording of "Attempted to inline function marked as skipped" (torch/_dynamo/symbolic_convert.py)
    old = ("torchdynamo.exc.Unsupported: inline in skipfiles: add /mnt/x/torch/ao/nn/quantized/modules/"
           "functional_modules.py")
    assert classify_text(old).pattern == "export_failure"
    # the words without Dynamo's Unsupported in front (a log line that merely mentions skipfiles) decide nothing
    assert classify_text("INFO: counted 3 frames to inline in skipfiles of the profiler").pattern == "unknown"


def test_the_dispatchers_older_different_schemas_refusal_is_a_custom_op_registration_error() -> None:
    # https://github.com/pytorch/pytorch/issues/32549
    # (aten/src/ATen/core/dispatch/Dispatcher.cpp, checkSchemaCompatibility)
    line = ("Tried to register multiple operators with the same name and the same overload name but different "
            "schemas: aten::mv(Tensor _0, Tensor _1) -> (Tensor _0) vs aten::mv(Tensor self, Tensor vec) -> (Tensor) "
            "(findOrRegisterSchema_ at ../aten/src/ATen/core/dispatch/Dispatcher.cpp:64)")
    assert classify_text(line).pattern == "custom_op"
    # the same schema registered with other options (its alias analysis) is another check, which no rule names
    options = ("Tried to register multiple operators with the same schema but different options: "
               "test::foo(Tensor x) -> Tensor")
    assert classify_text(options).pattern != "custom_op"


def test_inductors_compile_command_decides_a_cpp_compile_error_only_where_nothing_else_does() -> None:
    # https://github.com/intel/torch-xpu-ops/issues/2608: the Command: section of a CppCompileError, cut after Output:
    command = ("Command:\n"
               "g++ /tmp/tmpi0jd5w2r/cj/cg4vrulhr4fzqhzt.wrapper.cpp -D TORCH_INDUCTOR_CPP_WRAPPER "
               "-D STANDALONE_TORCH_HEADER -D C10_USING_CUSTOM_GENERATED_MACROS -D CPU_CAPABILITY_AVX512 -O1 "
               "-fPIC -std=c++17 -c -o /tmp/tmpi0jd5w2r/cj/cg4vrulhr4fzqhzt.wrapper.o\n\nOutput:\n")
    assert classify_text(command).pattern == "cpp_compile_error"
    # where the compiler's output says the toolchain is missing a header, that line decides
    omp = command + "/tmp/torchinductor_u/6o/c6om.h:8:10: fatal error: 'omp.h' file not found"
    assert classify_text(omp).pattern == "toolchain_setup"
    # a CMake or hand-written build spells the define without a space: not Inductor's builder
    cmake = "c++ -DC10_USING_CUSTOM_GENERATED_MACROS -I/opt/executorch/runtime/core -c runner.cpp -o runner.o"
    assert classify_text(cmake).pattern == "unknown"


def test_a_nan_reported_in_prose_is_a_compiled_models_only_beside_one() -> None:
    # https://github.com/LTH14/mar/issues/69: an eager training loop's own check (MAE's engine prints it)
    eager_loop = ("[11:41:59.064379] Loss is nan, stopping training\n"
                  "E1030 11:42:16.325000 140014536193856 torch/distributed/elastic/multiprocessing/api.py:833] "
                  "failed (exitcode: 1) local_rank: 0 (pid: 155690) of binary: /data/envs/vae/bin/python3.10")
    assert classify_text(eager_loop).pattern == "unknown"
    # https://github.com/apple-aiml-research/ml-depth-pro/issues/74: eager inference, the user's words
    eager_words = "Hi,  the model runs on cpu(i7-14700F) or RTX 4060 Ti outputs nan value."
    result = classify_text(eager_words)
    assert result.pattern == "unknown"
    assert "nan_inf" in [a.pattern for a in result.alternatives]
    # the same words beside the compiled model are its NaN
    assert classify_text("model = torch.compile(model)\n" + eager_words).pattern == "nan_inf"
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n"
                         "[11:41:59.064379] Loss is nan, stopping training").pattern == "nan_inf"


def test_results_said_to_differ_are_a_compiled_models_wrong_output_only_beside_one() -> None:
    # https://github.com/iree-org/iree/issues/14934: another compiler's CPU and CUDA backends
    line = "Different Results for CPU and CUDA backend"
    result = classify_text(line)
    assert result.pattern == "unknown"
    assert "wrong_output" in [a.pattern for a in result.alternatives]
    assert classify_text("compiled = torch.compile(model)\n" + line).pattern == "wrong_output"


def test_a_notebooks_out_of_memory_header_and_the_users_oom_are_out_of_memory() -> None:
    # https://github.com/unslothai/unsloth/issues/3373: IPython's header (IPython/core/ultratb.py), message cut
    notebook = ("---------------------------------------------------------------------------\n"
                "OutOfMemoryError                          Traceback (most recent call last)\n"
                "/tmp/ipykernel_36/773422404.py in <cell line: 0>()\n"
                "----> 1 trainer_stats = trainer.train()")
    assert classify_text(notebook).pattern == "out_of_memory"
    # another exception's header is not an OOM
    other = notebook.replace("OutOfMemoryError", "KeyError        ")
    assert classify_text(other).pattern != "out_of_memory"
    # https://github.com/pytorch/pytorch/issues/148165: the user's abbreviation, weak but alone
    words = "but I encounter OOM errors even when accum_tensor is very small."
    assert classify_text(words).pattern == "out_of_memory"
    # the letters inside a word (BLOOM) are not the abbreviation; a decisive line outranks the weak word
    assert classify_text('model = BloomForCausalLM.from_pretrained("bigscience/bloom-560m")').pattern != (
        "out_of_memory")
    ima = ("To avoid OOM, set a smaller batch size.\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered")
    assert classify_text(ima).pattern == "cuda_illegal_memory_access"


def test_a_lowering_failure_in_2022s_standalone_torchinductor_package_reads_as_one() -> None:
    # https://github.com/pytorch/torchdynamo/issues/927 (the torchdynamo repository's torchinductor package, 2022)
    log = ('Traceback (most recent call last):\n'
           '  File "/scratch/u/torchdynamo/torchinductor/graph.py", line 227, in call_function\n'
           '    return lowerings[target](*args, **kwargs)\n'
           '  File "/scratch/u/torchdynamo/torchinductor/lowering.py", line 172, in wrapped\n'
           '    return decomp_fn(*args, **kwargs)\n')
    r = classify_text(log)
    assert (r.pattern, r.phase) == ("lowering_error", "compile")
    # A project's own folder that only ends in the name is not the package, and names no compiled model.
    assert classify_text('  File "/src/mytorchinductor/graph.py", line 3, in call_function\n'
                         'ValueError: bad graph\n').pattern == "unknown"


def test_a_graph_break_dynamo_logged_and_went_on_from_is_no_export_failure() -> None:
    # https://github.com/pytorch/pytorch/issues/160757: TORCH_LOGS=graph_breaks under torch.compile(backend='eager');
    # symbolic_convert.py logs a break only after the check that raises under export and fullgraph=True
    prefix = "V0812 15:05:52.194000 1848694 torch/_dynamo/symbolic_convert.py:556] [4/0] [__graph_breaks] "
    logged = "\n".join(prefix + line for line in (
        "Graph break in user code at /usr/local/lib/python3.12/dist-packages/torch/_dynamo/polyfills/__init__.py:241",
        "Graph Break Reason: Unsupported method call",
        "  Explanation: Dynamo does not know how to trace method `__eq__` of class `<unknown type>`",
        "  Hint: Avoid calling `<unknown type>.__eq__` in your code.",
        "  Developer debug context: call_method GetAttrVariable(AutogradFunctionVariable(), setup_context) __eq__"))
    assert classify_text(logged).pattern != "export_failure"
    # https://github.com/pytorch/pytorch/issues/138689: the break's reason reads like export's own error
    cond = ("V1023 16:11:40.698000 139837258437760 torch/_dynamo/symbolic_convert.py:534] [0/0] [__graph_breaks] "
            "torch._dynamo.exc.UserError: Dynamic control flow is not supported at the moment. Please use "
            "functorch.experimental.control_flow.cond to explicitly capture the control flow.")
    assert classify_text(cond).pattern != "export_failure"
    # the same error raised (export, fullgraph=True) is export's
    raised = cond.split("[__graph_breaks] ", 1)[1]
    assert classify_text(raised).pattern == "export_failure"
    assert classify_text(
        "  Explanation: Dynamo does not know how to trace method `__eq__` of class `<unknown type>`\n"
        "  Developer debug context: call_method GetAttrVariable(AutogradFunctionVariable(), setup_context) __eq__"
    ).pattern == "export_failure"


def test_executorchs_older_set_input_words_are_an_input_outside_the_exported_shape() -> None:
    # https://github.com/pytorch/torchchat/issues/841: ExecuTorch's Method::set_input
    # (runtime/executor/method.cpp) when resize_tensor refuses the input's sizes
    line = "E 00:00:05.929516 executorch:method.cpp:820] Error setting input 0: 0x10"
    assert classify_text(line).pattern == "input_shape_mismatch"
    # https://github.com/pytorch/executorch/issues/2163: with the resize refusal above it, in Android's log
    android = ("05-12 16:50:23.542: E/ExecuTorch(12402): Error setting input 0: 0x10\n"
               "05-12 16:50:23.542: A/ExecuTorch(12402): In function execute_method(), assert failed (result.ok()): "
               "Execution of method forward failed with status 0x12")
    assert classify_text(android).pattern == "input_shape_mismatch"
    # the data pointer failing after the resize worked is not the shape; nor is another program's
    # "Error setting input" with no ExecuTorch status code after it
    assert classify_text("E 00:00:05.9296 executorch:method.cpp:829] Error setting data_ptr 0: 0x10").pattern != (
        "input_shape_mismatch")
    assert classify_text("Error: Error setting input open: unexpected EOF").pattern != "input_shape_mismatch"


def test_triton_launcher_build_command_without_its_exception_type_is_toolchain_setup() -> None:
    # https://github.com/Comfy-Org/ComfyUI/issues/9418: ComfyUI's dialog prints str() of the CalledProcessError only
    line = ("Command '['C:\\\\comfyui\\\\python_embeded\\\\Lib\\\\site-packages\\\\triton\\\\runtime"
            "\\\\tcc\\\\tcc.exe', 'C:\\\\Users\\\\bibig\\\\AppData\\\\Local\\\\Temp\\\\tmponymwj7r"
            "\\\\cuda_utils.c', '-O3', '-shared', '-Wno-psabi', '-o', 'C:\\\\Users\\\\bibig\\\\AppData"
            "\\\\Local\\\\Temp\\\\tmponymwj7r\\\\cuda_utils.cp312-win_amd64.pyd']' returned non-zero exit status 1.")
    assert classify_text(line).pattern == "toolchain_setup"
    # https://github.com/lum3on/comfyui_HiDream-Sampler/issues/87: MSVC building Triton's main.c, same form
    msvc = ("Command '['C:\\\\Program Files\\\\Microsoft Visual Studio\\\\2022\\\\Community\\\\VC\\\\Tools\\\\MSVC\\\\"
            "14.40.33807\\\\bin\\\\Hostx64\\\\x64\\\\cl.exe', "
            "'C:\\\\Users\\\\user\\\\AppData\\\\Local\\\\Temp\\\\tmpwx2nt3_a\\\\main.c', "
            "'/nologo', '/O2', '/LD']' returned non-zero exit status 2.")
    assert classify_text(msvc).pattern == "toolchain_setup"
    # the same command on a project's own C file is no Triton launcher: it does not decide toolchain_setup
    own = ("Command '['/usr/bin/gcc', '/home/u/proj/src/fastops.c', '-O3', '-shared', '-o', "
           "'/home/u/proj/build/fastops.so']' returned non-zero exit status 1.")
    assert classify_text(own).pattern != "toolchain_setup"


def test_cpp_extensions_error_building_extension_is_the_programs_own_build() -> None:
    # https://github.com/ninja-build/ninja/issues/1657: PyTorch-Encoding's JIT build via torch.utils.cpp_extension
    log = ("RuntimeError: Error building extension 'enclib_cpu': [1/4] c++ -MMD -MF nms_cpu.o.d "
           "-DTORCH_EXTENSION_NAME=enclib_cpu -fPIC -std=c++11 -c /home/lulu/encoding/lib/cpu/nms_cpu.cpp "
           "-o nms_cpu.o\n"
           "FAILED: nms_cpu.o \n"
           "/home/lulu/encoding/lib/cpu/nms_cpu.cpp:1:29: fatal error: torch/extension.h: No such file or directory\n"
           "compilation terminated.")
    result = classify_text(log)
    assert result.pattern == "unknown"
    assert "cpp_compile_error" in [a.pattern for a in result.alternatives]
    # an Inductor compile in the same log is a compiled model's: the outsider does not apply
    inductor = ("torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"
                "/tmp/torchinductor_u/ab/cabcd.cpp:12:5: error: 'tmp3' was not declared in this scope")
    assert classify_text(inductor).pattern == "cpp_compile_error"


def test_thcs_old_wording_and_the_users_words_name_an_illegal_memory_access() -> None:
    # https://github.com/amdegroot/ssd.pytorch/issues/113: torch 0.x THC (__THCudaCheck), beside a prose "out of memory"
    thc = ('If I try batch_size=4, I get a "out of memory" error.\n'
           "Also, I get random `RuntimeError: cuda runtime error (77) : an illegal memory access was encountered at "
           "/pytorch/torch/lib/THC/generated/../THCReduceAll.cuh:334`")
    assert classify_text(thc).pattern == "cuda_illegal_memory_access"
    # THC's wording of an allocation failure stays out_of_memory's
    oom = "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510"
    assert classify_text(oom).pattern == "out_of_memory"
    # https://github.com/vllm-project/vllm/issues/19631: the fault named in prose decides, weakly, alone
    words = "gives a CUDA Illegal Memory Access, as well as some errors:"
    assert classify_text(words).pattern == "cuda_illegal_memory_access"
    # a decisive error line outranks the weak words
    assert classify_text("I thought this was an illegal memory access at first.\n"
                         "torch.AcceleratorError: CUDA error: device-side assert triggered").pattern == (
        "triton_index_out_of_bounds")


def test_wrong_results_and_a_failed_allclose_are_wrong_output_only_beside_a_compiled_model() -> None:
    # https://github.com/pytorch/pytorch/issues/86527: TorchScript's optimize_for_inference, no compiled model
    script = ("wrong results after `optimize_for_inference`\n"
              "    exported = torch.jit.optimize_for_inference(exported)\n"
              "    assert torch.allclose(out[0], eout[0])")
    result = classify_text(script)
    assert result.pattern == "unknown"
    assert "wrong_output" in [a.pattern for a in result.alternatives]
    assert classify_text("compiled = torch.compile(model)\n" + script).pattern == "wrong_output"
    # https://github.com/pytorch/pytorch/issues/163449: a divergence of the compiled result, in the title
    assert classify_text("[Fuzzer][Eager/Compile Divergence] 8+% numerical difference between eager and "
                         "compile").pattern == "wrong_output"


def test_numpys_invalid_cast_warning_is_a_nan_only_beside_a_compiled_model() -> None:
    # https://github.com/kijai/ComfyUI-KJNodes/issues/184: a black video; numpy casting NaN to uint8
    line = ("/workspace/ComfyUI/custom_nodes/ComfyUI-VideoHelperSuite/videohelpersuite/nodes.py:96: "
            "RuntimeWarning: invalid value encountered in cast return tensor_to_int(tensor, 8).astype(np.uint8) .")
    result = classify_text(line)
    assert result.pattern == "unknown"
    assert "nan_inf" in [a.pattern for a in result.alternatives]
    assert classify_text("model = torch.compile(model)\n" + line).pattern == "nan_inf"
    # numpy's warning for a comparison is not a cast
    assert classify_text("model = torch.compile(model)\n"
                         "intervals.py:538: RuntimeWarning: invalid value encountered in less_equal").pattern != (
        "nan_inf")


def test_a_demangled_torch_symbol_is_version_skew_and_a_pybind11_one_stays_native_abi() -> None:
    # https://github.com/sgl-project/sglang/pull/30562: the libtorch ABI mismatch, symbol written demangled
    line = "`import sgl_kernel` fails with `undefined symbol: c10::MessageLogger...`."
    assert classify_text(line).pattern == "version_skew"
    assert classify_text("ImportError: /x/_C.so: undefined symbol: c10::cuda::c10_cuda_check_implementation"
                         ).pattern == "version_skew"
    # https://github.com/pytorch/pytorch/issues/136664: pybind11's caster of at::Tensor is not torch's C++ API
    pybind = ("ImportError: /path/to/lib/my_pytorch_extension.so: undefined symbol: _ZN8pybind116detail11type_"
              "casterIN2at6TensorEvE4castERKS3_NS_19return_value_policyENS_6handleE")
    assert classify_text(pybind).pattern == "native_abi"
    # a linker's undefined reference is a build's, not this rule's
    assert classify_text("main.cpp:(.text+0x2a): undefined reference to `c10::detail::torchCheckFail'"
                         ).pattern != "version_skew"


def test_fake_tensor_device_propagation_cut_to_its_head_is_input_device_mismatch() -> None:
    # https://github.com/pytorch/pytorch/issues/184841 (the title)
    title = ("`torch.export.export` raises `RuntimeError: Unhandled FakeTensor Device Propagation` for CUDA/MPS "
             "example inputs instead of a clear user-facing error")
    assert classify_text(title).pattern == "input_device_mismatch"
    # the full message wrapped inside Inductor's LoweringException stays lowering_error's (torch-pme#219)
    lowering = ("torch._inductor.exc.InductorError: LoweringException: RuntimeError:\n"
                "Unhandled FakeTensor Device Propagation for aten.pow.Tensor_Tensor,\n"
                "found two different devices cpu, cuda:0")
    assert classify_text(lowering).pattern == "lowering_error"


def test_a_bare_assert_inside_inductor_is_a_lowering_error_by_its_own_line() -> None:
    # torch/_inductor/exc.py words both wrappers f"{type(exc).__name__}: {exc}": an assert with no message
    # leaves "AssertionError: ", a bare colon once the cleaner drops the trailing space
    # (https://github.com/pytorch/pytorch/issues/181624, https://github.com/pytorch/pytorch/issues/173053)
    result = classify_text("torch._inductor.exc.InductorError: AssertionError: ")
    assert result.pattern == "lowering_error"
    assert result.confidence >= 0.5
    assert result.fields.get("exception") == "AssertionError"
    lowered = classify_text("torch._inductor.exc.LoweringException: AssertionError: \n  target: aten.embedding.default")
    assert lowered.pattern == "lowering_error"
    assert lowered.confidence >= 0.9
    # the same bare assert under Dynamo's generic wrapper names no Inductor stage: only the weak wrapper cue
    wrapped = classify_text("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nAssertionError:")
    assert wrapped.confidence < 0.5
    # a C++ compile error under InductorError stays cpp_compile_error
    assert classify_text("torch._inductor.exc.InductorError: CppCompileError: C++ compile error").pattern == (
        "cpp_compile_error")


def test_exports_signature_check_naming_an_unplaceable_input_is_export_failure() -> None:
    # https://github.com/pytorch/pytorch/issues/150926: module.compile() then torch.export.export (torch 2.6)
    assert classify_text("AssertionError: Unexpectedly found a <class 'torch.Tensor'> in the inputs.\n"
                         "Please file an issue along with a paste of the logs from TORCH_LOGS=\"+export\"").pattern == (
        "export_failure")
    # https://github.com/pytorch/pytorch/issues/111693: the torch 2.1 wording of the same check
    assert classify_text("AssertionError: graph-captured input # 2, of type <class 'torch.nn.parameter.Parameter'>, "
                         "is not among original inputs of types: (<class 'torch.Tensor'>)").pattern == "export_failure"
    # https://github.com/meta-pytorch/captum/issues/1066: another library's check naming a class, no export
    assert classify_text("AssertionError: `inputs` must have type torch.Tensor but <class 'list'> found: "
                         "error happened").pattern != "export_failure"


def test_a_cuda_error_pasted_on_one_line_with_torchs_hint_is_not_dropped_as_the_hint() -> None:
    # https://github.com/Comfy-Org/ComfyUI/issues/10662: a reflowed quote keeps the message and the hint on one line
    one_line = ("!!! Exception during processing !!! CUDA error: out of memory Search for "
                "`cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/"
                "group__CUDART__TYPES.html for more information. CUDA kernel errors might be asynchronously "
                "reported at some other API call, so "
                "the stacktrace below might be incorrect. For debugging consider passing CUDA_LAUNCH_BLOCKING=1 "
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    assert classify_text(one_line).pattern == "out_of_memory"
    # the hint alone, behind a prefix no rule strips, is still boilerplate
    hint = ("05-08 19:06:38 [multiproc_executor.py:962] CUDA kernel errors might be asynchronously reported at some "
            "other API call, so the stacktrace below might be incorrect.")
    assert classify_text(hint).pattern == "unknown"


def test_garbled_or_degenerate_text_with_torch_compile_is_wrong_output() -> None:
    # https://github.com/sgl-project/sglang/issues/3944
    assert classify_text("In commit(71ed018), --enable-torch-compile will cause garbled output. Without "
                         "--enable-torch-compile, the output is normal.").pattern == "wrong_output"
    # https://github.com/vllm-project/vllm/issues/56900: the compiled model named after the symptom
    assert classify_text("Qwen/Qwen1.5-MoE-A2.7B-Chat produces degenerate output with torch.compile (VLLM_COMPILE) "
                         "but correct output without it").pattern == "wrong_output"
    # garbage collection and a degenerate case are not output
    assert classify_text("torch.compile triggers garbage collection of the cached graphs").pattern != "wrong_output"
    # garbled text with no compiled model in the sentence is not
    assert classify_text("The model produces garbled output after loading the LoRA.").pattern != "wrong_output"


def test_a_framework_launched_with_its_torch_compile_flag_shows_a_compiled_model() -> None:
    # https://github.com/pytorch/torchtitan/issues/1056: NaN loss in prose counts beside torchtitan's compile flag
    prose = "I tried running llama3_8b with rowwise fp8 quantization and get NaN loss."
    assert classify_text(prose).pattern == "unknown"
    run = ('./run_train.sh --training.steps=100 --training.batch_size=2 --training.compile '
           '--model.converters="float8" --float8.recipe_name rowwise\n')
    assert classify_text(run + prose).pattern == "nan_inf"
    assert classify_text(run.replace("--training.compile", "--compile.enable") + prose).pattern == "nan_inf"
    # the flag set to false shows none
    assert classify_text(run.replace("--training.compile", "--training.compile=False") + prose).pattern == "unknown"


def test_inductors_autotuner_finding_a_choice_computes_a_wrong_result_is_wrong_output_alone() -> None:
    # torch/_inductor/select_algorithm.py (VERIFY mode): only Inductor prints it, so it needs no compiled-model line
    assert classify_text("AssertionError: Incorrect result from choice 2 triton_mm_3\n").pattern == "wrong_output"
    # a program's own wording of an incorrect result stays a user's prose, not Inductor's check
    assert classify_text("ValueError: incorrect result from the solver\n").pattern != "wrong_output"


def test_oom_in_the_users_words_counts_only_as_something_that_happened() -> None:
    assert classify_text("I encounter OOM errors even when accum_tensor is very small.\n").pattern == "out_of_memory"
    assert classify_text("memory usage grows until reaching OOM.\n").pattern == "out_of_memory"
    # torch.cuda.memory_summary()'s count (torch/cuda/memory.py), advice and negations name no OOM that happened
    for line in ["|           CUDA OOMs: 0            |        cudaMalloc retries: 0         |",
                 "UserWarning: Unlimited buffer size is set for `fork`, please be aware of OOM at random places",
                 "To avoid OOM, reduce max_num_seqs.", "This is not an OOM issue; the process hangs forever.",
                 "we did not hit OOM with the smaller batch"]:
        assert classify_text(f"{line}\nKeyError: 'model.layers.0'\n").pattern == "unknown", line


def test_garbled_text_or_a_divergence_is_wrong_output_only_under_torch_compile_named_as_such() -> None:
    assert classify_text("--enable-torch-compile will cause garbled output\n").pattern == "wrong_output"
    # another engine's build ("compiled with TensorRT", llama.cpp) and a KL divergence between two policies
    for line in ["llama.cpp compiled with -DGGML_CUDA=ON outputs gibberish text on my 4090",
                 "When the engine is compiled with TensorRT, the model returns garbage output.",
                 "KL divergence: compiled policy vs reference KL divergence 0.013"]:
        assert classify_text(line + "\n").pattern != "wrong_output", line


def test_an_illegal_memory_access_denied_in_the_users_words_is_none() -> None:
    assert classify_text("running with batchsize=2 will cause illegal memory access\n").pattern == \
        "cuda_illegal_memory_access"
    for line in ["This is not a misaligned address problem", "it runs without illegal memory access now"]:
        r = classify_text(line + "\n")
        # at most the phase's and a CUDA word's best guess (below 0.45), never the words as a fault that happened
        assert r.pattern == "unknown" or r.confidence < 0.45, (line, r.pattern, r.confidence)


def test_a_build_command_of_a_projects_own_main_c_is_not_triton_s_launcher() -> None:
    assert classify_text("Command '['gcc', 'src/main.c', '-o', 'build/app']' returned non-zero exit status 1.\n"
                         ).pattern == "unknown"
    assert classify_text("Command '['/usr/bin/gcc', '/tmp/tmpa1b2c3d4/cuda_utils.c', '-O3', '-shared', '-fPIC', "
                         "'-o', '/tmp/tmpa1b2c3d4/cuda_utils.so']' returned non-zero exit status 1.\n"
                         ).pattern == "toolchain_setup"


def test_exports_signature_check_needs_its_own_words_not_any_unexpected_class() -> None:
    assert classify_text("AssertionError: Unexpectedly found a <class 'torch.Tensor'> in the inputs.\n"
                         ).pattern == "export_failure"
    assert classify_text("AssertionError: Unexpectedly found a <class 'int'> in the config\n").pattern == "unknown"


def test_rusts_cudarc_reports_another_frameworks_fault_unless_torch_is_in_the_log() -> None:
    # https://github.com/EricLBuehler/mistral.rs/issues/1542: cudarc's DriverError(...) under a Rust panic, no torch
    rust = ("thread '<unnamed>' panicked at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
            "cudarc-0.13.9/src/driver/safe/core.rs:257:76:\n"
            "called `Result::unwrap()` on an `Err` value: DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, "
            "\"an illegal memory access was encountered\")\n")
    r = classify_text(rust)
    assert r.pattern == "unknown"
    assert "cuda_illegal_memory_access" in [a.pattern for a in r.alternatives]
    # PyTorch's own wording of the same fault keeps its class
    assert classify_text("RuntimeError: CUDA error: an illegal memory access was encountered\n"
                         ).pattern == "cuda_illegal_memory_access"


def test_caffes_frames_make_a_cublas_failure_caffes_but_caffe2_symbols_do_not() -> None:
    # https://github.com/chengyangfu/caffe/issues/6: glog check failure with caffe:: frames
    caffe = ("F0421 09:02:45.161278  7233 math_functions.cu:52] Check failed: status == CUBLAS_STATUS_SUCCESS "
             "(13 vs. 0)  CUBLAS_STATUS_EXECUTION_FAILED\n*** Check failure stack trace: ***\n"
             "    @     0x7f2f6f1d36a5  caffe::caffe_gpu_gemv<>()\n"
             "    @     0x7f2f6f17a51a  caffe::BiasLayer<>::Backward_gpu()\n")
    assert classify_text(caffe).pattern == "unknown"
    # PyTorch's cuBLAS check, and a caffe2:: frame (torch's own C++ namespace), stay an illegal access
    torch_line = ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, "
                  "opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, "
                  "CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`\n")
    assert classify_text(torch_line).pattern == "cuda_illegal_memory_access"
    assert classify_text(caffe.replace("caffe::", "caffe2::")).pattern == "cuda_illegal_memory_access"


def test_deepspeeds_gemm_status_13_is_a_failed_kernel_but_other_statuses_are_not() -> None:
    # DeepSpeed's cublas_wrappers.cu prints the cuBLAS status as a number; https://github.com/index-tts/index-tts/issues/424
    assert classify_text("!!!! kernel execution error. (m: 1280, n: 3075, k: 5120, error: 13) \n"
                         ).pattern == "cuda_illegal_memory_access"
    assert classify_text("!!!! kernel execution error. (batch: 60, m: 1025, n: 1025, k: 64, error: 13) \n"
                         ).pattern == "cuda_illegal_memory_access"
    # 14 is CUBLAS_STATUS_INTERNAL_ERROR, 7 an invalid value: not a fault
    for status in (14, 7):
        assert classify_text(f"!!!! kernel execution error. (m: 3840, n: 3075, k: 1280, error: {status}) \n"
                             ).pattern != "cuda_illegal_memory_access", status


def test_dynamos_wrap_it_as_a_custom_op_advice_is_custom_op_only_for_a_third_party_builtin() -> None:
    advice = (" This function is either a Python builtin (e.g. _warnings.warn) or a third-party C/C++ Python extension"
              " (perhaps created with pybind). If it is a Python builtin, please file an issue on GitHub so the PyTorch"
              " team can add support for it and see the next case for a workaround. If it is a third-party C/C++"
              " Python extension, please either wrap it into a PyTorch-understood custom operator (see"
              " https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html for more details) or, if it is"
              " traceable, use torch.compiler.allow_in_graph.\n")
    # pytorch#144540: a pybind kernel (FlashAttention 3) Dynamo cannot trace, to be wrapped as a custom op
    assert classify_text("[rank7]: torch._dynamo.exc.Unsupported: Graph break due to unsupported builtin "
                         "flash_attn_3_cuda.PyCapsule.fwd." + advice).pattern == "custom_op"
    # NVIDIA/torch-harmonics#73: torch's own builtin under torch.export is Dynamo's gap, not a kernel to register
    r = classify_text("E       torch._dynamo.exc.Unsupported: Graph break due to unsupported builtin "
                      "torch._VariableFunctionsClass.sparse_coo_tensor." + advice)
    assert r.pattern == "export_failure", r.pattern
    # the Explanation form (torch >= 2.8) puts the builtin and the advice on separate lines: the builtin still decides
    explained = ("torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
                 "  Explanation: Dynamo does not know how to trace the builtin `{}.` This function is either a "
                 "Python builtin (e.g. _warnings.warn) or a third-party C/C++ Python extension (perhaps created "
                 "with pybind).\n  Hint: If it is a third-party C/C++ Python extension, please either wrap it into a"
                 " PyTorch-understood custom operator (see https://pytorch.org/tutorials/advanced/"
                 "custom_ops_landing_page.html for more details) or, if it is traceable, use "
                 "torch.compiler.allow_in_graph.\n")
    assert classify_text(explained.format("flash_attn_3_cuda.PyCapsule.fwd")).pattern == "custom_op"
    for builtin in ("torch._VariableFunctionsClass.sparse_coo_tensor", "posix.stat", "_hashlib.openssl_sha1"):
        assert classify_text(explained.format(builtin)).pattern == "export_failure", builtin


def test_a_jit_built_extensions_own_so_missing_is_its_failed_build_not_a_missing_dependency() -> None:
    # torch.utils.cpp_extension imports <dir>/<name>/<name>.so from its build directory; glibc names that file itself
    # when the build never wrote it (https://github.com/databrickslabs/dolly/issues/119): the build's failure
    missing_output = ("ImportError: /root/.cache/torch_extensions/py310_cu117/fused_adam/fused_adam.so: "
                      "cannot open shared object file: No such file or directory\n")
    r = classify_text(missing_output)
    assert r.pattern == "unknown"
    assert "native_abi" in [a.pattern for a in r.alternatives]
    # a dependency the loader cannot find is named by its soname, and a library at a path of another name stays one
    for line in ["ImportError: libc10.so: cannot open shared object file: No such file or directory",
                 "OSError: /usr/local/lib/python3.12/dist-packages/torch/build/lib/libaoti_custom_ops.so: "
                 "cannot open shared object file: No such file or directory"]:
        assert classify_text(line + "\n").pattern == "native_abi", line


def test_torchvisions_cuda_check_is_version_skew_even_when_wrapped_after_its_opening_words() -> None:
    # torchvision/extension.py _check_cuda_version; a notebook wrapped it after "different"
    # (https://github.com/acheong08/Diffusion-ColabUI/issues/108)
    wrapped = ("RuntimeError: Detected that PyTorch and torchvision were compiled with different\n"
               "CUDA versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA \n"
               "Version=11.8. Please reinstall the torchvision that matches your PyTorch \ninstall.\n")
    assert classify_text(wrapped).pattern == "version_skew"
    # another package's build compiled with different flags is not torchvision's check
    assert classify_text("The wheels were compiled with different compiler flags.\n").pattern != "version_skew"


def test_triton_windows_failed_to_compile_cc_cmd_is_the_launcher_build_only_for_triton_s_c_file() -> None:
    # triton-windows' build.py prints the command list before it re-raises
    # (https://github.com/triton-lang/triton-windows/issues/30)
    assert classify_text("Failed to compile. cc_cmd: ['C:\\\\VS\\\\bin\\\\Hostx64\\\\x64\\\\cl.exe', "
                         "'C:\\\\Users\\\\user\\\\AppData\\\\Local\\\\Temp\\\\tmpyijnwzhf\\\\cuda_utils.c', "
                         "'/nologo', '/O2', '/LD']\n").pattern == "toolchain_setup"
    assert classify_text("Failed to compile. cc_cmd: ['/usr/bin/gcc', '/home/user/proj/src/main.c', '-O3']\n"
                         ).pattern == "unknown"


def test_the_metal_compiler_on_a_generated_shader_is_lowering_not_a_cpp_compile_error() -> None:
    # MPSInductor's shader rejected by Metal (https://github.com/pytorch/pytorch/issues/144630)
    metal = ("program_source:19:9: error: expected ')'\n        auto tmp10 = tmp8 ? tmp9 : 0.0;\n"
             "program_source:21:29: error: use of undeclared identifier 'tmp10'\n")
    assert classify_text(metal).pattern == "lowering_error"
    # the same diagnostic quoted inside the runtime's error line
    assert classify_text("RuntimeError: Failed to create pipeline state: program_source:21:29: error: use of "
                         "undeclared identifier 'tmp10'\n").pattern == "lowering_error"
    # gcc's same words on Inductor's C++ stay cpp_compile_error
    assert classify_text("torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"
                         "error: use of undeclared identifier 'tmp10'\n").pattern == "cpp_compile_error"


def test_backend_compiler_failed_for_another_engines_backend_is_not_inductor_s_lowering() -> None:
    # Torch-TensorRT's own converter under Dynamo (https://github.com/pytorch/TensorRT/issues/2356)
    trt = ("torch._dynamo.exc.BackendCompilerFailed: backend='torch_tensorrt' raised:\n"
           "TypeError: torch.int64 is not a supported dtype\n")
    assert classify_text(trt).pattern == "unknown"
    assert classify_text(trt.replace("torch_tensorrt", "inductor")).pattern == "lowering_error"
    # IPEX's backend, and the older wording that names the backend bare (torch 2.0: "BackendCompilerFailed: X raised")
    assert classify_text(trt.replace("torch_tensorrt", "ipex")).pattern == "unknown"
    old = "torch._dynamo.exc.BackendCompilerFailed: {} raised TypeError: torch.int64 is not a supported dtype\n"
    assert classify_text(old.format("tensorrt")).pattern == "unknown"
    assert classify_text(old.format("inductor")).pattern == "lowering_error"


def test_aoti_as_letters_inside_a_user_name_is_not_a_compiled_model() -> None:
    # a pip build of flash-attn under /home/fanghaotian (https://github.com/Dao-AILab/flash-attention/issues/1921)
    build = ('  File "/home/fanghaotian/conda/envs/verl/lib/python3.10/site-packages/torch/utils/cpp_extension.py", '
             "line 2506, in _run_ninja_build\n"
             "subprocess.CalledProcessError: Command '['ninja', '-v', '-j', '64']' returned non-zero exit status 1.\n")
    assert classify_text(build).pattern == "unknown"
    # AOTI's own identifiers still show a compiled model
    aoti = build.replace("_run_ninja_build", "_run_ninja_build\n  runner = aoti_load_package(path)")  # no other word
    assert classify_text(aoti).outsider is None


def test_compiled_with_a_different_cuda_is_a_build_said_to_differ_not_results() -> None:
    # torchvision/extension.py's check: no line of it is wrong output's evidence (the phase may still rank it)
    skew = ("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\nRuntimeError: Detected that PyTorch and torchvision were "
            "compiled with different CUDA major versions. PyTorch has CUDA Version=11.8\n")
    result = classify_text(skew)
    assert result.pattern == "version_skew"
    assert not [e for a in result.alternatives if a.pattern == "wrong_output" for e in a.evidence]
    # compiled results said to differ stay the user's words of wrong output
    words = "TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\nThe compiled model gives different results than eager.\n"
    assert classify_text(words).pattern == "wrong_output"


def test_an_inductor_kernel_name_shows_a_compiled_model_for_a_nan_said_in_prose() -> None:
    # LeRobot's compile_model=true training (https://github.com/huggingface/lerobot/issues/4178)
    nan = ("- **Why**: inductor fuses these ops into a generated triton **split-scan kernel** "
           "(`triton_spl_fused__to_copy_cat_cumsum_...`) that is **miscompiled at small dynamic shapes**.\n"
           "- **Worst part**: in `compile_mode=default` the run *looks successful* - loss is NaN from step 1, "
           "**no error raised**.\n")
    assert classify_text(nan).pattern == "nan_inf"
    # every category Inductor names a kernel by (wrapper_benchmark.py: foreach ... template, or unknown)
    for category in ("for", "per", "poi", "red", "tem", "unk"):
        assert classify_text(nan.replace("triton_spl_", f"triton_{category}_")).pattern == "nan_inf", category
    # the same words without the generated kernel's name show no compiled model
    assert classify_text(nan.replace("triton_spl_fused__to_copy_cat_cumsum_", "my_scan")).pattern == "unknown"
    # a hand-written kernel's name is no Inductor kernel
    assert classify_text(nan.replace("triton_spl_fused_", "triton_scan_kernel_")).pattern == "unknown"


def test_msvc_cannot_open_file_decides_the_toolchain_only_for_a_compiled_model_or_the_cuda_driver_library() -> None:
    # any MSVC build prints LNK1181 (a C project's resource file, https://github.com/xaitax/Chrome-App-Bound-Encryption-Decryption/issues/171)
    project = "LINK : fatal error LNK1181: cannot open input file 'build\\resource.res'\n[FAIL] Build failed.\n"
    assert classify_text(project).pattern == "unknown"
    # after cl.exe echoes Triton's launcher the link error ranks as that build's, but the echo shows no compiled
    # model (https://github.com/woct0rdho/triton-windows/issues/164: a hand-written Triton test)
    launcher = "__triton_launcher.c\nLINK : fatal error LNK1181: cannot open input file 'C:\\Program.obj'\n"
    result = classify_text(launcher)
    assert result.pattern == "unknown" and result.alternatives[0].pattern == "toolchain_setup"
    # beside a compiled model it decides
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + launcher).pattern == "toolchain_setup"
    # a project's main.c echoed the same way is no launcher: nothing ranks the toolchain from the echo
    assert classify_text(launcher.replace("__triton_launcher.c", "main.c")).pattern == "unknown"
    # cuda.lib, the driver library Triton's launcher links, decides alone; python3X.lib, which every CPython extension
    # links (a setuptools build), does not
    assert classify_text("LINK : fatal error LNK1181: cannot open input file 'cuda.lib'\n").pattern == "toolchain_setup"
    assert classify_text("LINK : fatal error LNK1104: cannot open file 'python311.lib'\n").pattern == "unknown"
    # ld's cannot find -l<lib> of any build is no compiled model's (PyTorch's own build,
    # https://github.com/pytorch/pytorch/issues/66030)
    ld = "/usr/bin/ld: cannot find -laot_compiler\ncollect2: error: ld returned 1 exit status\n"
    assert classify_text(ld).pattern == "unknown"


def test_a_compiler_rejecting_inductors_isa_flag_beside_a_compiled_model_is_the_toolchain() -> None:
    # RISC-V gcc takes no -march=native (https://github.com/pytorch/pytorch/pull/167071, vLLM on CPU)
    riscv = ("g++: error: ‘-march=native’: ISA string must begin with rv32 or rv64\n"
             '  File "/usr/local/lib64/python3.11/site-packages/torch/_inductor/cpp_builder.py", line 396, '
             "in _run_compile_cmd\n"
             "    raise exc.CppCompileError(cmd, output) from e\n"
             "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n")
    assert classify_text(riscv).pattern == "toolchain_setup"
    # the same words from a native build of other code (no compiled model) are not the toolchain Inductor needs
    other = ("g++ -O3 -march=native -c ggml.c -o ggml.o\n"
             "g++: error: ‘-march=native’: ISA string must begin with rv32 or rv64\n"
             "make: *** [Makefile:12: ggml.o] Error 1\n")
    assert classify_text(other).pattern != "toolchain_setup"


def test_tensorrt_10s_namespaced_error_format_is_another_engine_unless_torch_is_in_view() -> None:
    # TensorRT 10 names nvinfer1::<class>::<method> inside its [file::function::line] format
    # (https://github.com/yuvraj108c/ComfyUI-Upscaler-Tensorrt/issues/49)
    trt = ("[E] [virtualMemoryBuffer.cpp::nvinfer1::StdVirtualMemoryBufferImpl::resizePhysical::154] Error Code 2: "
           "OutOfMemory (Requested size was 4194304000 bytes.)\n")
    result = classify_text(trt)
    assert result.pattern == "unknown"
    assert result.outsider is not None
    # the same line beside a torch frame (Torch-TensorRT) is ours again
    torch_frame = '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
    assert classify_text(torch_frame + trt).outsider is None


def test_a_cuda_c_programs_own_error_check_is_not_a_compiled_models_illegal_access() -> None:
    # the CUDA samples' helper_cuda.h check() (https://github.com/HPCLab-933/Vina-CUDA/issues/3)
    # and the CUDA SDK's cutil cudaSafeCall (https://github.com/niessner/BundleFusion/issues/77)
    samples = ('CUDA error at ./inc/cuda/kernel2.cu:596 code=700(cudaErrorIllegalAddress) "cudaDeviceSynchronize()"\n'
               "terminate called without an active exception\nAborted (core dumped)\n")
    cutil = ("BundleFusion-master/FriedLiver/Source/SiftGPU/ProgramCU.cu(1571) : cudaSafeCall() Runtime API error "
             "700: an illegal memory access was encountered.\n")
    windows = samples.replace("./inc/cuda/kernel2.cu", "C:\\src\\kernel2.cu")  # a drive letter's colon
    for text in (samples, cutil, windows):
        result = classify_text(text)
        assert result.pattern == "unknown"
        assert result.outsider is not None
    # PyTorch's own words of the same fault stay cuda_illegal_memory_access
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\nRuntimeError: CUDA error: an illegal memory "
                         "access was encountered\n").pattern == "cuda_illegal_memory_access"


def test_resource_exhausted_error_and_pjrt_log_lines_are_other_frameworks() -> None:
    # PaddlePaddle's allocator (https://github.com/PaddlePaddle/Paddle/issues/42228)
    paddle = ("RuntimeError: ResourceExhaustedError:\n\nOut of memory error on GPU 0. Cannot allocate 98.000244MB "
              "memory on GPU 0, 6.000000GB memory has been allocated and available memory is only 0.000000B.\n")
    assert classify_text(paddle).pattern == "unknown"
    # XLA's PJRT glog line (https://github.com/jax-ml/jax/issues/25002)
    pjrt = ("E1120 10:59:55.894873   35984 pjrt_stream_executor_client.cc:3067] Execution of replica 0 failed: "
            "INTERNAL: CUDA error: Could not synchronize CUDA stream: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal "
            "memory access was encountered.\n")
    assert classify_text(pjrt).pattern == "unknown"
    # a GPU client's file (se_gpu_pjrt_client.cc), and a prefix spaced as torch's own log prefix, which cleaning strips
    assert classify_text(pjrt.replace("   35984 pjrt_stream_executor_client", " 35984 se_gpu_pjrt_client")
                         ).pattern == "unknown"
    # PyTorch's own out of memory keeps its class
    assert classify_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; "
                         "23.70 GiB total capacity)\n").pattern == "out_of_memory"


def test_inductors_own_words_for_a_dead_compile_worker_decide_without_a_command_line() -> None:
    # torch/_inductor/async_compile.py (https://github.com/pytorch/pytorch/pull/135120) and
    # compile_worker/subproc_pool.py (https://github.com/pytorch/torchtitan/issues/3944)
    async_compile = ("RuntimeError: A compilation subprocess exited unexpectedly. This is likely due to a crash. To "
                     "facilitate debugging, you can re-run with TORCHINDUCTOR_COMPILE_THREADS=1 to cause compilation "
                     "to occur in the main process.\n")
    closed = ('    raise RuntimeError("Attempting to use a closed pool")\n'
              "RuntimeError: Attempting to use a closed pool\n")
    unclean = ("W0717 10:02:11.123000 4242 torch/_inductor/compile_worker/subproc_pool.py:213] "
               "SubprocPool unclean exit\n")
    for text in (async_compile, closed, unclean):
        assert classify_text(text).pattern == "segfault_no_message"
    # the warning yields to a cause that decides in the same log
    cause = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
             "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
             "might be incorrect.\n")
    assert classify_text(unclean + cause).pattern == "cuda_illegal_memory_access"
    # they show a compiled model, so a compiler the OOM killer stopped, printed beside them, decides
    killed = "c++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n"
    assert classify_text(killed).pattern == "unknown"
    assert classify_text(killed + async_compile).pattern == "cpp_compile_error"


def test_a_broken_process_pools_submit_wording_is_a_crash_only_beside_a_compiled_model() -> None:
    # CPython's concurrent/futures/process.py submit() on a broken pool
    # (https://github.com/Lightning-AI/pytorch-lightning/issues/17211, its title)
    line = ("concurrent.futures.process.BrokenProcessPool: A child process terminated abruptly, the process pool is "
            "not usable anymore\n")
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + line).pattern == "segfault_no_message"
    # any program's process pool prints it (https://github.com/epam/ai-dial-rag/issues/11): alone it is unknown
    result = classify_text(line)
    assert result.pattern == "unknown"
    assert "segfault_no_message" in [a.pattern for a in result.alternatives]


def test_a_compiler_killed_for_memory_in_another_programs_build_is_not_a_compiled_models_compile_error() -> None:
    # gigahorse compiling its own generated C++ (https://github.com/nevillegrech/gigahorse-toolchain/issues/95): the gcc
    # driver's lines read the same for any build
    gigahorse = ('  File "/root/work/gig/gigahorse-toolchain/./gigahorse.py", line 337, in compile_datalog\n'
                 '    assert not(process.returncode), f"Compilation for {spec} failed. Stopping."\n'
                 "AssertionError: Compilation for /root/work/gig/gigahorse-toolchain/clientlib/function_inliner.dl "
                 "failed. Stopping.\nc++: fatal error: Killed signal terminated program cc1plus\n"
                 "compilation terminated.\n")
    assert classify_text(gigahorse).pattern == "unknown"
    # beside a compiled model the same lines are Inductor's compile, killed
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\ng++: fatal error: Killed signal terminated "
                         "program cc1plus\ncompilation terminated.\n").pattern == "cpp_compile_error"


def test_a_setup_py_builds_failing_compiler_and_cpp_extensions_missing_ninja_are_builds_not_compiled_models() -> None:
    # Pyrit's setup.py build (https://github.com/JPaulMora/Pyrit/issues/390): distutils' spawn failure marks a build
    pyrit = ("/usr/bin/ld: cannot find -lcuda \ncollect2: ld returned l exit status \n"
             "error: command 'gcc' failed with exit status 1\n")
    result = classify_text(pyrit)
    assert result.pattern == "unknown"
    assert result.outsider is not None
    # Triton's launcher build (subprocess, not distutils) keeps the environment's class
    assert classify_text("/usr/bin/ld: cannot find -lcuda: No such file or directory\ncollect2: error: ld returned "
                         "1 exit status\n").pattern == "toolchain_setup"
    # a project's cpp_extension without ninja (https://github.com/CSAILVision/unifiedparsing/issues/12)
    ninja = ('raise RuntimeError("Ninja is required to load C++ extensions")\n'
             "RuntimeError: Ninja is required to load C++ extensions\n")
    assert classify_text(ninja).pattern == "unknown"
    # beside a compiled model (torch 2.0's cpp_wrapper built with cpp_extension.load_inline) it is the toolchain's
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + ninja).pattern == "toolchain_setup"


def test_a_numeric_divergence_between_eager_and_compiled_is_wrong_output() -> None:
    # the difference named before the pair (https://github.com/pytorch/pytorch/issues/168126, /168186)
    for text in ("I'm observing large numeric divergence (max rtol=117924) between torch.compile and eager "
                 "execution when running the code below with bfloat16.\n",
                 "Here's another smaller example where I'm seeing a significant difference (rtol 1.0) between eager "
                 "and compiled when running under bf16.\n"):
        assert classify_text(text).pattern == "wrong_output"
    # a NaN named after the pair is not a finite difference; a difference between other things is nobody's
    assert classify_text("There is a NaN mismatch between eager and compiled: nan at index 3\n"
                         ).pattern != "wrong_output"
    assert classify_text("The difference between eager and graph mode is explained in the docs.\n"
                         ).pattern == "unknown"
    # a difference of speed or memory between them, named before or after, or a question about them, is no wrong result
    for text in ("There is a big difference between eager and compiled mode performance on this GPU.\n",
                 "The difference between eager and torch.compile latency is 2x.\n",
                 "There is a big performance difference between eager and torch.compile on this GPU.\n",
                 "The memory usage difference between eager and compiled mode is 3 GB.\n",
                 "What is the difference between eager and compiled mode?\n"):
        assert classify_text(text).pattern == "unknown"


def test_compiled_code_that_generated_nan_is_nan_inf() -> None:
    # past tenses of the verb (https://github.com/ROCm/pytorch/issues/3150)
    text = ("This is a reproduce in isolation of code generated by torch compile for the function _get_attn_scale.\n"
            "(run1) The compiled code generated nan.\n")
    assert classify_text(text).pattern == "nan_inf"
    # an eager program's NaN in the same words stays unknown
    assert classify_text("(run1) The model generated nan.\n").pattern == "unknown"


def test_the_autotuners_incorrect_result_wrapped_in_inductor_error_is_wrong_output() -> None:
    # select_algorithm.py's accuracy check, wrapped by compile_fx (https://github.com/pytorch/pytorch/issues/154222)
    line = ("torch._inductor.exc.InductorError: AssertionError: Incorrect result from choice TritonTemplateCaller("
            "/tmp/tmpd5ty9eu6/zo/czom7ivpgy4waqgdcbnc73aemkry2vrptfg3qkr466ongqb3s4qs.py, BLOCK_K=256, num_warps=1)\n")
    assert classify_text(line).pattern == "wrong_output"
    # any other assertion inside Inductor's compile stays lowering_error
    assert classify_text("torch._inductor.exc.InductorError: AssertionError: buf3 is not a ComputedBuffer\n"
                         ).pattern == "lowering_error"


def test_the_cuda_arch_probe_on_a_torch_without_cuda_is_no_toolchain_failure() -> None:
    # Inductor's arch probe logs this while a CPU model compiles on (github.com/pytorch/pytorch/pull/151528, #151650)
    cpu_only = ("E0416 23:39:55.953000 418833 torch/_inductor/codegen/cuda/cuda_env.py:22] Error getting cuda arch: "
                "Torch not compiled with CUDA enabled.\n")
    assert classify_text(cpu_only).pattern != "toolchain_setup"
    assert classify_text("Error getting cuda arch: Torch not compiled with CUDA enabled\n").pattern == "unknown"
    # the probe failing for another reason still says what the CUDA backend needs from the host
    other = "Error getting cuda arch: CUDA driver initialization failed, you might not have a CUDA gpu.\n"
    assert classify_text(other).pattern == "toolchain_setup"


def test_a_cuda_programs_checker_naming_its_cu_file_and_dr_jit_are_other_programs_faults() -> None:
    # a checker printing the CUDA error's text, then the .cu file it was called from
    # (https://github.com/mp3guy/ICPCUDA/issues/33)
    checker = ("Error: an illegal memory access was encountered "
               "/workspaces/d435i_depth/libs/ICPCUDA/Cuda/containers/device_memory.cu:121\n")
    # Dr.Jit's cuda_check() under its fatal-error prefix (https://github.com/mitsuba-renderer/drjit/issues/120)
    drjit = ('Critical Dr.Jit compiler failure: cuda_check(): API error 0700 (CUDA_ERROR_ILLEGAL_ADDRESS): "an illegal '
             'memory access was encountered" in /src/mitsuba3/ext/drjit/ext/drjit-core/src/util.cpp:203.\n'
             "Aborted (core dumped)\n")
    # the gpuErrchk macro many CUDA programs copy: "GPUassert: %s %s %d" (the error's text, the file, the line)
    gpuerrchk = "GPUassert: an illegal memory access was encountered /home/u/src/kernels/scan.cu 87\n"
    for text in (checker, drjit, gpuerrchk):
        result = classify_text(text)
        assert result.pattern == "unknown"
        assert result.outsider is not None
    # AOTI's own "Error: CUDA driver error: ..." names no .cu file and stays an illegal access
    aoti = ("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n"
            "Error: CUDA driver error: an illegal memory access was encountered\n")
    assert classify_text(aoti).pattern == "cuda_illegal_memory_access"
    # and the same checker's line beside a torch frame is ours again
    torch_frame = '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
    assert classify_text(torch_frame + checker).outsider is None


def test_tritons_older_ptxas_search_failure_is_toolchain_setup() -> None:
    # Triton's path_to_ptxas before "Cannot find ptxas" (https://github.com/pytorch/pytorch/issues/90136), under
    # torch.compile's wrapper, which alone would say lowering_error
    text = ("torch._dynamo.exc.BackendCompilerFailed: _compile_fn raised RuntimeError: `ptxas` was searched in "
            "TRITON_PTXAS_PATH, /usr/local/cuda/bin/ or PATH but a working version could not be found.\n")
    assert classify_text(text).pattern == "toolchain_setup"


def test_get_first_attr_finding_no_known_triton_attribute_is_version_skew() -> None:
    # torch's shim across Triton releases raised: the traceback quotes its raise line
    # (https://github.com/pytorch/pytorch/issues/117185), before or without the printed message
    text = ('  File "/data/users/xmfan/core/pytorch/torch/_inductor/triton_heuristics.py", line 369, '
            'in _precompile_config\n'
            '    cluster_dims = get_first_attr(binary, "cluster_dims", "clusterDims")\n'
            '  File "/data/users/xmfan/core/pytorch/torch/_dynamo/utils.py", line 2428, in get_first_attr\n'
            '    raise AssertionError(f"{obj} does not has any of the attributes: {attrs}")\n')
    assert classify_text(text).pattern == "version_skew"
    # the printed form names the attribute names torch looked for
    printed = ("AssertionError: <triton.compiler.compiler.CompiledKernel object at 0x7f3c2c1e5f90> "
               "does not has any of the attributes: ('cluster_dims', 'clusterDims')\n")
    assert classify_text(printed).pattern == "version_skew"
    # the same frames without the failed lookup stay Inductor's, and the raise line in grep output is no failure
    assert classify_text("\n".join(text.splitlines()[:2]) + "\n").pattern != "version_skew"
    assert classify_text('torch/_dynamo/utils.py:5305:    raise AssertionError(f"{obj} does not has any of the '
                         'attributes: {attrs}")\n').pattern == "unknown"


def test_the_tracing_call_of_torch_dynamo_export_shows_an_export() -> None:
    # torch/_dynamo/eval_frame.py export() -> inner: the code line under its frame
    # (github.com/pytorch/pytorch/issues/175520)
    head = ("Traceback (most recent call last):\n"
            '  File "/home/jason/Documents/DLCTestingv2/issue.py", line 28, in <module>\n'
            "    exported = dynamo.export(model)(sample_input)\n"
            '  File "/home/jason/miniconda3/envs/fuzz_new/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py", '
            "line 2002, in inner\n")
    assert classify_text(head + "    result_traced = opt_f(*args, **kwargs)\n").pattern == "export_failure"
    # the frame alone says nothing (explain() has an inner too), nor does a user's own variable of that name
    assert classify_text(head).pattern != "export_failure"
    assert classify_text("    result_traced = opt_f(x)\n").pattern == "unknown"
    # a specific cause printed under it decides
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert classify_text(head + "    result_traced = opt_f(*args, **kwargs)\n" + oom).pattern == "out_of_memory"


def test_cuda_by_examples_handle_error_macro_is_a_cuda_programs_own_fault() -> None:
    # book.h's HandleError, copied by many CUDA programs: printf("%s in %s at line %d\n", cudaGetErrorString(err),
    # file, line), with the user's own words after it on the line (https://github.com/GhiXu/ACMM/issues/3)
    handle_error = "an illegal memory access was encountered in /mnt/dev/acmm/ACMM.cu at line 1211, GTX 1080ti\n"
    result = classify_text(handle_error)
    assert result.pattern == "unknown"
    assert result.outsider is not None
    # torch's own CUDA error names no .cu file of the call and stays an illegal access
    torch_error = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    assert classify_text(torch_error).pattern == "cuda_illegal_memory_access"
    # and the macro's line beside a torch frame is ours again
    torch_frame = '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
    assert classify_text(torch_frame + handle_error).outsider is None


def test_a_failure_inside_an_aot_compiled_function_vllm_loaded_ranks_a_device_mismatch() -> None:
    # vllm/compilation/decorators.py logs the cached artifact's path, then runs it as self.aot_compiled_fn
    # (github.com/noonghunna/club-3090/pull/572: a torch.compile artifact built on sm_86, loaded on sm_120); the log
    # line is printed on every warm start, so only the frame of a failure inside the artifact ranks the pattern
    loaded = ("(EngineCore pid=3380462) INFO 06-25 17:21:56 [decorators.py:305] Directly load AOT compilation from "
              "path /home/darius/.cache/vllm/torch_compile_cache/torch_aot_compile/2cd01a1244334c3ed688a9a378065a03"
              "f678ea66021bf9cf5f7c5851c7cf2a1a/rank_0_0/model\n")
    frame = ("(Worker_TP1 pid=132) ERROR 07-03 18:48:16 [multiproc_executor.py:1000]     output = "
             "self.aot_compiled_fn(self, *args, **kwargs)\n")
    for text in (frame, loaded + frame):
        result = classify_text(text)
        assert result.pattern == "unknown"
        assert "device_mismatch_load" in [a.pattern for a in result.alternatives][:2]

    def rank(text: str) -> float:
        alts = classify_text(text).alternatives
        return next((a.confidence for a in alts if a.pattern == "device_mismatch_load"), 0.0)
    assert rank(loaded) < rank(loaded + frame)  # the log line alone is no evidence of its own
    # a stated failure after the load still decides its own class
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert classify_text(loaded + oom).pattern == "out_of_memory"
    # a program's own function of that name is no cached artifact
    own = classify_text("    output = aot_compiled_fn(x)\n")
    assert "device_mismatch_load" not in [a.pattern for a in own.alternatives]


def test_error_in_op_names_a_custom_op_only_when_the_op_is_not_one_of_torchs_own() -> None:
    # assert_size_stride's "Error in op: <op>" names whatever op produced the buffer (torch/_inductor/ir.py
    # get_op_name; vLLM's moe_forward in pytorch/pytorch#182328; aten ops in pytorch/pytorch#156658)
    custom = classify_text("AssertionError: expected size 16384==16384, stride 2880==3072 at dim=0\n"
                           "Error in op: torch.ops.vllm.moe_forward.default\n")
    assert custom.pattern == "custom_op"
    assert any(e.text.startswith("Error in op: torch.ops.vllm") for e in custom.evidence)
    # a built-in ATen op's line is no custom op's evidence, and names no op
    builtin = classify_text("AssertionError: expected size 3==3, stride 3==1 at dim=0\n"
                            "Error in op: torch.ops.aten.linalg_cholesky_ex.default\n")
    assert not any(e.text.startswith("Error in op:") and e.pattern == "custom_op" for e in builtin.evidence)
    assert builtin.fields.get("op") != "torch.ops.aten.linalg_cholesky_ex.default"
    # nor is another of torch's own namespaces', nor the name Inductor gives a buffer with no FX node
    for op in ("torch.ops._c10d_functional.all_gather_into_tensor.default",
               "torch.ops.quantized.linear_dynamic.default", "unknown_op"):
        own = classify_text(f"AssertionError: expected size 3==3, stride 3==1 at dim=0\nError in op: {op}\n")
        assert own.pattern != "custom_op" and own.fields.get("op") != op


def test_cpp_extensions_cuda_version_check_only_ranks_toolchain_setup_as_a_projects_own_build() -> None:
    # torch/utils/cpp_extension.py's _check_cuda_version, which only BuildExtension runs (a project's own setup.py:
    # github.com/boschresearch/DroidCalib/issues/5, unknown by the policy); Inductor and AOTI never do
    check = ("RuntimeError:\nThe detected CUDA version (12.1) mismatches the version that was used to compile "
             "PyTorch (11.3).\nPlease make sure to use the same CUDA versions.\n")
    alone = classify_text(check)
    assert alone.pattern == "unknown"
    assert [a.pattern for a in alone.alternatives][:1] == ["toolchain_setup"]
    assert alone.alternatives[0].confidence < 0.5
    # it marks no compiled model: a line that decides only beside one (device_mismatch_load's) stays undecided
    kernel_image = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + kernel_image).pattern == "device_mismatch_load"
    assert classify_text(check + kernel_image).pattern == "unknown"
    # nor does it decide beside one: the build is still the project's, whatever else the log compiled
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + check).pattern == "unknown"


def test_onnx_runtimes_own_provider_library_failing_to_load_is_another_engines_failure() -> None:
    # github.com/fudan-generative-vision/hallo/issues/203: ORT's message without its logger's prefix
    ort = ("FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot "
           "open shared object file: No such file or directory.\n")
    result = classify_text(ort)
    assert result.pattern == "unknown" and result.outsider is not None
    assert "native_abi" in [a.pattern for a in result.alternatives]
    # Windows names the provider without the lib prefix
    dll = "Failed to load library onnxruntime_providers_cuda.dll with error: the specified module could not be found\n"
    assert classify_text(dll).outsider == "engine"
    # the same line beside a torch frame (torch.onnx running the model through ORT) is torch's log: native_abi
    beside = classify_text('  File "/usr/lib/python3/site-packages/torch/onnx/utils.py", line 12, in export\n' + ort)
    assert beside.outsider is None and beside.pattern == "native_abi"


def test_setuptools_easy_install_wrapping_a_failed_compiler_is_a_build_of_other_code() -> None:
    # setuptools/command/easy_install.py run_setup: DistutilsError("Setup script exited with %s")
    # (github.com/xybu/onedrive-d/issues/36: psutil's C file without Python's headers)
    build = ("psutil/_psutil_linux.c:12:20: fatal error: Python.h: No such file or directory\n"
             "compilation terminated.\n"
             "error: Setup script exited with error: command 'x86_64-linux-gnu-gcc' failed with exit status 1\n")
    result = classify_text(build)
    assert result.pattern == "unknown" and result.outsider is not None
    # the same header missing in Triton's launcher, with no build tool's line, is still Triton's environment
    launcher = ("/tmp/tmps1rkq3y3/main.c:5:10: fatal error: Python.h: No such file or directory\n"
                "compilation terminated.\n")
    assert classify_text(launcher).pattern == "toolchain_setup"


def test_a_dynamo_error_with_torch_compiles_suppress_errors_footer_is_no_export_failure() -> None:
    # torch/_dynamo/exc.py (2.0-2.5) adds the footer only when not exporting: a Dynamo Unsupported above it is
    # torch.compile's tracing limit, `unknown` (github.com/drisspg/transformer_nuggets/pull/5)
    unsupported = ("E       torch._dynamo.exc.Unsupported: torch.* op returned non-Tensor _SDPAParams call_function "
                   "<class 'torch._C._SDPAParams'>\n")
    footer = ("E       You can suppress this exception and fall back to eager by setting:\n"
              "E           import torch._dynamo\n"
              "E           torch._dynamo.config.suppress_errors = True\n")
    result = classify_text(unsupported + footer)
    assert result.pattern == "unknown"
    assert result.outsider == "compile_dynamo"
    assert "export_failure" in [a.pattern for a in result.alternatives]
    # without the footer the same line still reads as export's
    assert classify_text(unsupported).pattern == "export_failure"
    # an Inductor failure under torch.compile prints the footer too and keeps its class
    lowering = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                "LoweringException: TypeError: 'NoneType' object is not callable\n  target: aten.mean.default\n")
    assert classify_text(lowering + footer).pattern == "lowering_error"
    # and a word of torch.export in the log makes the Dynamo error export's again
    export_frame = ('  File "/usr/lib/python3.10/site-packages/torch/export/_trace.py", line 512, '
                    "in _export_to_torch_ir\n")
    assert classify_text(export_frame + unsupported + footer).pattern == "export_failure"


def test_an_xpu_index_add_assert_that_names_its_member_with_a_trailing_underscore_is_an_index_assert() -> None:
    # torch-xpu-ops' SYCL index_add kernel asserts SYCL_KERNEL_ASSERT(dstIndex < dstAddDimSize_), and XPU prints
    # the file on the line above the assertion (github.com/intel/torch-xpu-ops/issues/4284, eager XPU)
    xpu = ("AssertHandler::printMessage\n"
           "/__w/pytorch/pytorch/third_party/torch-xpu-ops/src/ATen/native/xpu/sycl/Indexing.cpp:914:\n"
           "operator(): Assertion `dstIndex < dstAddDimSize_` failed.\n")
    assert classify_text(xpu).pattern == "triton_index_out_of_bounds"
    # the handler's header and the file alone state no assertion
    assert classify_text("AssertHandler::printMessage\n"
                         "/__w/pytorch/pytorch/third_party/torch-xpu-ops/src/ATen/native/xpu/sycl/Indexing.cpp:914:\n"
                         ).pattern != "triton_index_out_of_bounds"


def test_ipex_refusing_one_block_over_4gb_is_out_of_memory_but_its_test_naming_the_message_is_not() -> None:
    # intel-extension-for-pytorch csrc/gpu/runtime/CachingDeviceAllocator.cpp (kStatefulLimit), as ComfyUI printed it
    # (github.com/Comfy-Org/ComfyUI/issues/7004)
    refused = ("!!! Exception during processing !!! Current platform can NOT allocate memory block with size larger "
               "than 4GB! Tried to allocate 5.46 GiB (GPU  0; 15.56 GiB total capacity; 556.67 MiB already allocated; "
               "2.70 GiB reserved in total by PyTorch)\n")
    assert classify_text(refused).pattern == "out_of_memory"
    # IPEX's own unit test quotes the message without an allocation that failed
    test_line = ("        with self.assertRaisesRegex(RuntimeError, 'Current platform can NOT allocate memory block "
                 "with size larger than 4GB!.*'):\n")
    assert classify_text(test_line).pattern != "out_of_memory"


def test_a_relative_difference_of_inf_alone_is_a_finite_mismatch_not_an_inf() -> None:
    # torch/testing/_comparison.py divides the absolute difference by abs(expected): an expected 0 gives inf
    # (github.com/ROCm/triton/issues/505, argmax indices compared by Inductor's unit test)
    finite = ("AssertionError: Tensor-likes are not equal!\n"
              "Mismatched elements: 636 / 1028 (61.9%)\n"
              "Greatest absolute difference: 530 at index (901,)\n"
              "Greatest relative difference: inf at index (1,)\n")
    assert classify_text(finite).pattern == "wrong_output"
    # an absolute difference of nan or inf is a NaN or Inf in the output, and so is a relative nan
    for line in ("Greatest absolute difference: inf at index (2,) (up to 1e-05 allowed)\n",
                 "Greatest absolute difference: nan at index (0, 1) (up to 1e-05 allowed)\n",
                 "Greatest relative difference: nan at index (0, 1) (up to 1.3e-06 allowed)\n"):
        assert classify_text("AssertionError: Tensor-likes are not close!\n" + line).pattern == "nan_inf"


def test_the_benchmark_harness_fail_accuracy_status_is_a_wrong_output_wherever_it_is_quoted() -> None:
    # benchmarks/dynamo/common.py's status, in a CI summary (github.com/intel/torch-xpu-ops/issues/1222)
    # and a table cell (github.com/intel/torch-xpu-ops/issues/4905)
    summary = ("Real failed models: 14 [['timm_nfnet', 'fail_accuracy'], "
               "['shufflenet_v2_x1_0', 'fail_accuracy']]\n")
    cell = "| `torchbench` | `float32` | inference | `detectron2_maskrcnn` | 4 | `fail_accuracy` | uint8 mismatch |\n"
    for text in (summary, cell, "fail_accuracy\n"):
        assert classify_text(text).pattern == "wrong_output"
    # the eager baseline differing from itself is not the compiled model's, nor is another program's metric
    assert classify_text("eager_two_runs_differ\n").pattern != "wrong_output"
    assert classify_text("final_eval_fail_accuracy: 0.93\n").pattern != "wrong_output"


def test_a_dynamo_error_under_torch_compiles_convert_frame_is_no_export_failure() -> None:
    # torch/_dynamo/convert_frame.py: ConvertFrame.__call__ wraps torch.compile's tracing to fall back to eager; export
    # (torch._dynamo.export, strict torch.export) calls convert_frame_assert without it
    # (github.com/kijai/ComfyUI-WanVideoWrapper/issues/851, torch 2.7)
    frame = ('  File "/root/miniconda3/envs/comfyui/lib/python3.12/site-packages/torch/_dynamo/convert_frame.py", '
             "line 1213, in __call__\n    result = self._inner_convert(\n             ^^^^^^^^^^^^^^^^^^^^\n")
    fake = ("torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: call_function "
            "<built-in function mul>(*(FakeTensor(..., device='cuda:0', size=(1, 14040, 1, 64, 2)), "
            "FakeTensor(..., device='cuda:0', size=(1, 32760, 40, 64, 1))), **{}): got RuntimeError('Attempting to "
            "broadcast a dimension of length 32760 at -4!')\n")
    result = classify_text(frame + fake)
    assert result.pattern == "unknown"
    assert result.outsider == "compile_dynamo"
    assert "export_failure" in [a.pattern for a in result.alternatives]
    # 2.0-2.4 wrote the same frame in convert_frame()'s closure (github.com/pytorch/pytorch/issues/128161)
    old = ('  File "/env/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py", line 786, in _convert_frame\n'
           "    result = inner_convert(\n")
    assert classify_text(old + fake).outsider == "compile_dynamo"
    # ConvertFrameAssert's own frames, which export goes through too, are no sign of torch.compile
    assert_frame = ('  File "/env/lib/python3.10/site-packages/torch/_dynamo/convert_frame.py", line 565, in __call__\n'
                    "    return _compile(\n")
    assert classify_text(assert_frame + fake).pattern == "export_failure"
    # a word of torch.export in the log makes it export's again
    export_frame = ('  File "/usr/lib/python3.10/site-packages/torch/export/_trace.py", line 667, '
                    "in _export_to_torch_ir\n")
    assert classify_text(export_frame + frame + fake).pattern == "export_failure"


def test_tensorflows_own_shared_libraries_by_name_are_another_engines_loader_failure() -> None:
    # github.com/tensorflow/rust/issues/375 and github.com/intel/analytics-zoo/issues/1092, as the loader prints them
    missing = ("error while loading shared libraries: libtensorflow_framework.so.2: cannot open shared object file: "
               "No such file or directory\n")
    old_libstdcxx = ("./libtensorflow_framework.so: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.21' not found "
                     "(required by ./libtensorflow_framework.so)\n")
    for text in (missing, old_libstdcxx):
        r = classify_text(text)
        assert (r.pattern, r.outsider) == ("unknown", "engine")
        assert "native_abi" in [a.pattern for a in r.alternatives]
    # a library of another name stays the loader's class, and a torch extension next to TensorFlow's name is ours
    assert classify_text(missing.replace("libtensorflow_framework", "libcudart")).pattern == "native_abi"
    ext = "import torch\nImportError: libtensorflow_framework.so.2: cannot open shared object file\n"
    assert classify_text(ext).outsider is None


def test_jaxs_traceback_framing_marks_its_errors_as_another_engines() -> None:
    # github.com/google-deepmind/dm-haiku/issues/204: jax/_src/source_info_util.py and traceback_util.py's framing
    jax = ("JaxStackTraceBeforeTransformation: RuntimeError: Internal: Failed to load in-memory CUBIN: "
           "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered\n"
           "The stack trace below excludes JAX-internal frames.\n"
           "The preceding is the original exception that occurred, unmodified.\n")
    r = classify_text(jax)
    assert (r.pattern, r.outsider) == ("unknown", "engine")
    assert r.alternatives[0].pattern == "cuda_illegal_memory_access"
    # the same driver error with no JAX framing is the hardware's class, whoever raised it
    assert classify_text(jax.splitlines()[0].split(": ", 1)[1] + "\n").pattern == "cuda_illegal_memory_access"


def test_paddles_phi_kernel_library_in_an_error_location_is_another_engine() -> None:
    # github.com/PaddlePaddle/Paddle/issues/43211: PADDLE_ENFORCE's location under paddle/phi
    paddle = ("OSError: (External) CUDA error(2), out of memory.\n"
              "  [Hint: 'cudaErrorMemoryAllocation'. The API call failed because it was unable to allocate enough "
              "memory to perform the requested operation. ] (at /paddle/paddle/phi/backends/gpu/gpu_context.cc:359)\n")
    r = classify_text(paddle)
    assert (r.pattern, r.outsider) == ("unknown", "engine")
    assert r.alternatives[0].pattern == "out_of_memory"
    # without Paddle's location its error format ("CUDA error(2), ") still names it; PyTorch's words for the same
    # allocator failure are out_of_memory
    assert classify_text(paddle.splitlines()[0] + "\n").pattern == "unknown"
    assert classify_text("RuntimeError: CUDA error: out of memory\n").pattern == "out_of_memory"


def test_torch_2_0s_dynamo_export_with_the_suppress_errors_footer_is_still_an_export_failure() -> None:
    # torch 2.0's augment_exc_message had no `export` flag (pytorch/pytorch#105767 added it in 2.1), so an error of
    # torch._dynamo.export carried torch.compile's footer too; its call or its frame in eval_frame.py is a word of
    # export
    footer = ("\n\nYou can suppress this exception and fall back to eager by setting:\n"
              "    torch._dynamo.config.suppress_errors = True\n")
    error = "torch._dynamo.exc.Unsupported: dynamic control flow is not supported at the moment\n"
    frame = '  File "/usr/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py", line 601, in export\n'
    call = "    gm, guards = dynamo.export(model, x)\n"
    assert classify_text(error + footer).outsider == "compile_dynamo"
    for words in (frame, call):
        result = classify_text(words + error + footer)
        assert result.outsider is None and result.pattern == "export_failure"


def test_android_studio_logcat_columns_before_a_tombstone_frame_are_a_crash_report() -> None:
    # github.com/software-mansion/react-native-executorch/issues/200: Android Studio's logcat prints the tag (DEBUG),
    # the process (crash_dump64) and the level (A) in columns before debuggerd's "#05 pc ..." frame
    frame = ("2025-04-19 21:01:30.156  7074-7074  DEBUG                   crash_dump64                         A"
             "        #05 pc 0000000000bef424  /data/app/~~RHJTJ8ZPrHtbWKVqE7VtiA==/com.anonymous.wowapp/base.apk"
             "!libexecutorch_jni.so (offset 0x1c68000) (executorch::extension::Module::load("
             "executorch::runtime::Program::Verification)+108) (BuildId: ab699bec7f81cd3e7c39e734041cb491e075261d)\n")
    assert classify_text(frame).pattern == "segfault_no_message"
    # github.com/flutter/flutter/issues/106464: the same columns (process pid-N) in an app with no exported program
    # are an eager program's crash, unknown with the crash first among the alternatives
    flutter = ("2023-11-23 19:36:23.817 21182-21182 DEBUG                   pid-21182                            A"
               "        #35 pc 000000000062f4d8  /data/app/~~aPynvFA3dmYvN-ymEU2ZJw==/com.estim.cims/lib/arm64/"
               "libapp.so (BuildId: bf30dce9add86bfe1e5a787790ee8ea3)\n")
    r = classify_text(flutter)
    assert r.pattern == "unknown"
    assert "segfault_no_message" in [a.pattern for a in r.alternatives]
    # a tombstone line in those columns that is no frame (the command line) is no crash report
    cmdline = ("2024-07-03 11:43:55.533 21622-21622 DEBUG                   crash_dump64                         A"
               "  Cmdline: com.example.app\n")
    assert classify_text(cmdline).pattern == "unknown"
    # (no rule ranks the crash; the nearest public reports, an app's crash among them, may)
    assert not any(a.pattern == "segfault_no_message" and a.source == "rules"
                   for a in classify_text(cmdline).alternatives)


def test_a_triton_diagnostic_at_a_projects_own_kernel_source_is_a_hand_written_kernel() -> None:
    # github.com/fla-org/hybrid-distillation/issues/2: Triton's MLIR diagnostic names the @triton.jit function's own
    # source (FLA's wy_fast.py), then the pass manager fails: the library's kernel, no compiled model
    loc = ("loc(\"/mnt/.../fla/ops/gated_delta_rule/wy_fast.py\":223:23): error: 'arith.mulf' op requires the same"
           " encoding for all operands and results\n")
    fail = "RuntimeError: PassManager::run failed\n"
    r = classify_text(loc + fail)
    assert r.pattern == "unknown" and r.outsider == "triton"
    assert "lowering_error" in [a.pattern for a in r.alternatives]
    # the same failure with no source location, or a kernel in Inductor's cache, stays Inductor's
    assert classify_text(fail).pattern == "lowering_error"
    cached = ("loc(\"/tmp/tmpab12/cz/czjqxyzk2lmn3opq4rst5uvw6xyz7abc8def9ghi0jkl1mno2pqr.py\":30:20): error: "
              "'arith.mulf' op requires the same encoding for all operands and results\n")
    assert classify_text(cached + fail).pattern == "lowering_error"


def test_a_missing_op_of_torchs_own_c10d_namespaces_is_no_custom_op_but_another_namespace_is():
    # https://github.com/pytorch/torchtitan/issues/1185: torch registers symm_mem itself
    # (torch/csrc/distributed/c10d/SymmetricMemory.cpp); an op missing there is torch's build, not a library to load
    line = "AttributeError: '_OpNamespace' 'symm_mem' object has no attribute 'fused_all_gather_matmul'"
    assert classify_text(line).pattern != "custom_op"
    line = "AttributeError: '_OpNamespace' '_c10d_functional' object has no attribute 'all_gather_into_tensor'"
    assert classify_text(line).pattern != "custom_op"
    # the same namespaces as assert_size_stride's "Error in op:" (the torch_op_namespace fragment): quantized's too
    line = "AttributeError: '_OpNamespace' 'quantized' object has no attribute 'linear_prepack'"
    assert classify_text(line).pattern != "custom_op"
    # a project's namespace still reads as its library not loaded (executorch#6050)
    line = "AttributeError: '_OpNamespace' 'llama' object has no attribute 'sdpa_with_kv_cache'"
    assert classify_text(line).pattern == "custom_op"


def test_a_dynamo_error_cut_after_the_footers_first_line_is_still_torch_compiles() -> None:
    # github.com/bitsandbytes-foundation/bitsandbytes/issues/1184: the excerpt ends inside torch.compile's footer
    # (torch/_dynamo/exc.py augment_exc_message), before its `suppress_errors = True` line
    unsupported = ("Unsupported: setattr(UserDefinedObjectVariable) <function Module.__setattr__ at 0x7c67c77f6f80>\n\n"
                   "from user code:\n"
                   '  File "/usr/local/lib/python3.10/dist-packages/bitsandbytes/nn/modules.py", line 415, '
                   "in set_compute_type\n    self.compute_dtype = x.dtype\n\n")
    cut = ("You can suppress this exception and fall back to eager by setting:\n"
           "    import torch._dynamo\n")
    result = classify_text(unsupported + cut)
    assert result.pattern == "unknown" and result.outsider == "compile_dynamo"
    # without the footer Dynamo's Unsupported reads as strict export's; an export's own frame beside the cut footer
    # keeps it export's
    dynamo = "torch._dynamo.exc.Unsupported: setattr(UserDefinedObjectVariable) <function Module.__setattr__>\n"
    assert classify_text(dynamo).pattern == "export_failure"
    assert classify_text(dynamo + cut).outsider == "compile_dynamo"
    call = '  File "/x/torch/export/_trace.py", line 1129, in _export\n'
    assert classify_text(call + dynamo + cut).pattern == "export_failure"
    # an Inductor failure under the same line keeps its class
    lowering = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                "LoweringException: TypeError: 'NoneType' object is not callable\n  target: aten.mean.default\n")
    assert classify_text(lowering + cut).pattern == "lowering_error"


def test_a_kernel_fault_alone_leaves_no_aoti_failure_second_but_a_compiled_models_frame_does_not() -> None:
    # https://github.com/jax-ml/jax/issues/3017: JAX's illegal address. Every CUDA program prints the fault, so it
    # says the phase but shows no compiled model: that the log is no AOTI failure stays the first alternative
    fault = ('> Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to "an illegal memory access was encountered"'
             " on CUDA API call to cuMemcpyDtoHAsync_v2\n")
    r = classify_text(fault)
    assert (r.pattern, r.phase) == ("cuda_illegal_memory_access", "run")
    assert rule_alternatives(fault)[0] == "unknown"
    # the same fault under a compiled model's frame is an AOTI failure: no such alternative behind a strong winner
    inductor = 'File "/tmp/torchinductor_u/ab/cabc.py", line 120, in call\n'
    assert classify_text(inductor + fault).pattern == "cuda_illegal_memory_access"
    assert "unknown" not in rule_alternatives(inductor + fault)
    # a kernel Inductor generated asserting on the device shows its model by its own words (its cache folder, tmpN)
    generated = ("/tmp/torchinductor_u/ab/cabc.py:25: unknown: block: [0,0,0], thread: [0,0,0] Assertion `index out "
                 "of bounds: 0 <= tmp4 < 50257` failed.\n")
    assert classify_text(generated).pattern == "triton_index_out_of_bounds"
    assert "unknown" not in rule_alternatives(generated)
    # and AOTI's C shim failing is a compiled model's: `unknown` is no more than the second alternative there
    shim = ("[E1127 c_shim_cuda.cpp:1273] Exception in aoti_torch: Expected all tensors to be on the same device, but "
            "found at least two devices, cuda:0 and cpu!\n")
    assert classify_text(shim).pattern == "input_device_mismatch"
    assert rule_alternatives(shim)[0] != "unknown"


def test_an_error_glued_to_chinese_prose_is_read_as_if_a_space_stood_between_them() -> None:
    # https://www.iiask.com/34l58572.html: Chinese writing puts no space between the pasted error and its own words, so
    # "out of memory错误" had no word boundary for the out-of-memory rule
    glued = "开发者经常会遇到RuntimeError: CUDA out of memory错误。这种内存不足(OOM)问题在GPU加速计算中尤为常见"
    assert classify_text(glued).pattern == "out_of_memory"
    # the space goes in only where Latin meets CJK text: a Latin word running on into another is still no boundary
    assert classify_text("RuntimeError: CUDA out of memoryless错误").pattern != "out_of_memory"
    # a path or a file name is one token to the rules and is shown as written: a Windows folder named in Chinese, a
    # package named in Chinese
    from aoti_debug.common.logread import clean_line
    frame = 'File "D:\\AI绘画\\ComfyUI\\torch\\_inductor\\codecache.py", line 12, in load'
    assert "\\AI绘画\\" in (clean_line(frame) or "")
    assert "'model权重.pt2'" in (clean_line("FileNotFoundError: No such file or directory: 'model权重.pt2'") or "")


def test_an_onnx_export_suites_assert_close_against_onnx_runtime_is_not_a_compiled_models_wrong_output() -> None:
    # github.com/microsoft/onnxscript/issues/1056: PyTorch's test/onnx compares ONNX Runtime's output with eager's
    mismatch = ("AssertionError: Tensor-likes are not close!\n\n"
                "Mismatched elements: 15 / 25 (60.0%)\n"
                "Greatest absolute difference: 2.037109375 at index (2, 3) (up to 1e-05 allowed)\n")
    frame = ('  File "/home/justinchu/dev/pytorch/test/onnx/onnx_test_common.py", line 431, '
             "in _compare_pytorch_onnx_with_ort\n    torch.testing.assert_close(\n")
    result = classify_text(frame + mismatch)
    assert result.pattern == "unknown" and result.outsider == "onnx"
    # the same comparison failing beside a compiled model stays wrong_output, and alone it still reads as one
    compiled = "compiled = torch.compile(model, backend='inductor')\n"
    assert classify_text(compiled + frame + mismatch).pattern == "wrong_output"
    assert classify_text(mismatch).pattern == "wrong_output"
    # a torch.onnx module frame (no test suite) is no such comparison, nor a project's own test in a folder named onnx
    export = '  File "/x/site-packages/torch/onnx/utils.py", line 1612, in _export\n'
    assert classify_text(export + mismatch).outsider is None
    own = '  File "/home/u/proj/onnx/test_compiled.py", line 12, in test_compiled\n'
    assert classify_text(own + mismatch).outsider is None
    # onnxscript's op test as pytest prints it (relative to the checkout, github.com/microsoft/onnxscript/pull/993)
    pytest_frame = "onnxscript/tests/function_libs/torch_lib/ops_test.py:259: in run_test_output_match\n"
    assert classify_text(pytest_frame + mismatch).outsider == "onnx"


def test_a_ptxas_that_exits_minus_one_on_windows_with_nothing_on_stderr_is_the_toolchain() -> None:
    # triton/backends/nvidia/compiler.py make_cubin: "`ptxas` failed with error code {e.returncode}"; on Windows -1
    # reads 4294967295 (github.com/woct0rdho/triton-windows/issues/66, github.com/unslothai/unsloth/issues/1830),
    # under Inductor too (github.com/kijai/ComfyUI-WanVideoWrapper/issues/392)
    inductor = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                "RuntimeError: `ptxas` failed with error code 4294967295:\n\n")
    assert classify_text(inductor).pattern == "toolchain_setup"
    newer = ("RuntimeError: `ptxas` failed with error code 4294967295\n`ptxas` stderr:\n\n"
             "Repro command: C:\\CUDA\\v12.6\\bin\\ptxas.exe -lineinfo -v --gpu-name=sm_75 "
             "C:\\Temp\\tmp7w.ptx -o C:\\Temp\\tmp7w.ptx.o\n")
    assert classify_text(newer).pattern == "toolchain_setup"
    # Linux prints the same exit (255) as Triton's "Internal Triton PTX codegen error", with ptxas's stderr under it:
    # that stays lowering_error's rule, whatever the diagnostic says
    linux = inductor.replace("`ptxas` failed with error code 4294967295:", "Internal Triton PTX codegen error:")
    linux += "ptxas error   : Feature '.bf16' requires .target sm_80 or higher\n"
    assert classify_text(linux).pattern == "lowering_error"


def test_a_missing_python_h_is_the_toolchain_beside_a_compiled_model_or_in_tritons_launcher_but_alone_a_build() -> None:
    # every C extension includes Python.h (a pybind11 module, a package built from source by pip): alone it is that
    # build's (github.com/davisking/dlib/issues/1269, github.com/digitalbrain79/pyyolo/issues/58)
    pybind = ("/tmp/pip-install-yr9exavp/dlib/dlib/external/pybind11/include/pybind11/detail/common.h:111:20: "
              "fatal error: Python.h: No such file or directory")
    assert classify_text(pybind).pattern == "unknown"
    assert classify_text("module.c:2:10: fatal error: Python.h: No such file or directory").pattern == "unknown"
    # Triton's launcher, built at the first launch of any Triton kernel (github.com/pytorch/pytorch/issues/97146)
    launcher = "/tmp/tmpn8c04nql/main.c:4:10: fatal error: Python.h: No such file or directory"
    assert classify_text(launcher).pattern == "toolchain_setup"
    msvc = ("C:\\Users\\u\\AppData\\Local\\Temp\\tmp_z9f6r7d\\cuda_utils.c(12): fatal error C1083: Cannot open include "
            "file: 'Python.h': No such file or directory")
    assert classify_text(msvc).pattern == "toolchain_setup"
    # beside a compiled model, the header alone, in gcc's and clang's words; pyconfig.h, which Python.h includes, alike
    r = classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + pybind)
    assert (r.pattern, r.fields.get("missing_header")) == ("toolchain_setup", "Python.h")
    clang = "/x/torch/include/torch/csrc/inductor/cpp_wrapper/common.h:6:10: fatal error: 'Python.h' file not found"
    assert classify_text("TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + clang).pattern == "toolchain_setup"
    assert classify_text("module.c:2:10: fatal error: pyconfig.h: No such file or directory").pattern == "unknown"


def test_tgis_warmup_reraising_the_allocators_oom_as_not_enough_memory_for_prefill_tokens_is_out_of_memory() -> None:
    # text-generation-inference's warmup catches torch.cuda.OutOfMemoryError and re-raises it in its own words
    # (flash_causal_lm.py; github.com/huggingface/text-generation-inference/issues/1067)
    tgi = ('  File "/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py", '
           'line 755, in warmup\n    raise RuntimeError(\nRuntimeError: Not enough memory to handle 4096 prefill '
           'tokens. You need to decrease `--max-batch-prefill-tokens`\n')
    assert classify_text(tgi).pattern == "out_of_memory"
    # other programs' "not enough memory to handle" (OpenJPEG's header check) name no prefill tokens
    assert classify_text("[ERROR] Not enough memory to handle image header (ihdr)\n").pattern != "out_of_memory"


def test_lmdeploys_turbomind_logger_marks_its_engines_own_faults_as_another_engines() -> None:
    # TurboMind's logger prefixes [TM][LEVEL] (src/turbomind/utils/logger.h); its CUDA check's illegal access and
    # the crash after it are that engine's (github.com/InternLM/lmdeploy/issues/2195)
    tm = (" terminate called after throwing an instance of 'std::runtime_error'\n"
          "   what():  [TM][ERROR] CUDA runtime error: an illegal memory access was encountered "
          "/lmdeploy/src/turbomind/models/llama/LlamaBatch.h:143 \n"
          " [qwen2-72b:1    :0:289] Caught signal 11 (Segmentation fault: Sent by the kernel at address (nil))\n")
    r = classify_text(tm)
    assert (r.pattern, r.outsider) == ("unknown", "engine")
    # newer releases' logger (core/logger.cc: [TM][WARN][<time>][<file>:<line>]) and check (core/check.cc: [TM][FATAL])
    newer = "[TM][FATAL] CUDA runtime error: an illegal memory access was encountered\n"
    assert classify_text(newer).outsider == "engine"
    warn = "[TM][WARN][0412.10:11:12.123456][llama_batch.cc:88] CUDA runtime error: an illegal memory access\n"
    assert classify_text(warn).outsider == "engine"
    # the same fault beside a torch frame is a PyTorch program's
    torch_run = ('  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1747, in _call_impl\n'
                 "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert classify_text(torch_run).pattern == "cuda_illegal_memory_access"
    assert classify_text("[TM][INFO] Set logger level by INFO\n" + torch_run).pattern == "cuda_illegal_memory_access"


def test_llama_cpp_libraries_and_its_cuda_builds_are_another_engine_but_an_aoti_llama_so_is_not():
    # llama.cpp's own libraries named by the loader (https://github.com/netdur/llama_cpp_dart/issues/2) and
    # text-generation-webui's llama_cpp_cuda build of llama-cpp-python (https://github.com/oobabooga/textgen/issues/6785)
    dart = ("Failed to load dynamic library 'libllama.so': dlopen failed: library \"libggml.so\" not found: needed by "
            "/data/app/com.example.llama_cpp_app/base.apk!/lib/arm64-v8a/libllama.so in namespace "
            "classloader-namespace")
    webui = ('  File "C:\\Users\\Peter\\AI\\text-generation-webui\\installer_files\\env\\Lib\\site-packages'
             '\\llama_cpp_cuda'
             '\\_ctypes_extensions.py", line 67, in load_shared_library\n'
             "    return ctypes.CDLL(str(lib_path), **cdll_args)  # type: ignore\n"
             "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed")
    for text in (dart, webui, webui.replace("llama_cpp_cuda", "llama_cpp_binaries")):
        r = classify_text(text)
        assert (r.pattern, r.outsider) == ("unknown", "engine")
    # a package a user named llama.so, failing to load: not llama.cpp's library
    aoti = "RuntimeError: Error in dlopen: /tmp/exportedModels/llama.so: undefined symbol: aoti_torch_get_data_ptr"
    assert classify_text(aoti).pattern == "native_abi"


def test_dgls_missing_per_torch_library_is_version_skew_but_a_library_that_fails_to_load_is_not() -> None:
    # DGL ships graphbolt and sparse once per torch release and raises this when none matches the installed torch
    # (dgl/graphbolt/__init__.py; https://github.com/dmlc/dgl/issues/7835, https://github.com/dmlc/dgl/issues/7791)
    graphbolt = ('  File "/u/.venv/lib/python3.12/site-packages/dgl/graphbolt/__init__.py", line 26, '
                 'in load_graphbolt\n'
                 "    raise FileNotFoundError(\n"
                 "FileNotFoundError: Cannot find DGL C++ graphbolt library at "
                 "/u/.venv/lib/python3.12/site-packages/dgl/graphbolt/libgraphbolt_pytorch_2.4.1.so\n")
    sparse = ("FileNotFoundError: Cannot find DGL C++ sparse library at /opt/conda/envs/torch124/lib/python3.11/"
              "site-packages/dgl/dgl_sparse/libdgl_sparse_pytorch_2.4.0.post301.so\n")
    for text in (graphbolt, sparse):
        assert classify_text(text).pattern == "version_skew"
    # the library is there but its loader failed on a missing CUDA dependency (https://github.com/dmlc/dgl/issues/7247)
    loader = ("OSError: libnvrtc.so.12: cannot open shared object file: No such file or directory\n"
              "ImportError: Cannot load Graphbolt C++ library\n")
    assert classify_text(loader).pattern == "native_abi"


def test_a_custom_ops_schema_that_lies_about_mutation_is_custom_op_but_one_of_torchs_own_namespaces_is_not() -> None:
    # torch/_library/utils.py MutationChecker under torch.export (https://github.com/pytorch/pytorch/issues/176148)
    fbgemm = ("RuntimeError: fbgemm::int_nbit_split_embedding_codegen_lookup_function: for argument 'indice_weights': "
              "the operator's schema fbgemm::int_nbit_split_embedding_codegen_lookup_function(Tensor dev_weights, "
              "Tensor? indice_weights, int output_dtype=1) -> Tensor specified that the operator does not mutate "
              "the argument, but this seems to be empirically wrong. Please make the schema and operator behavior "
              "consistent.\n")
    assert classify_text(fbgemm).pattern == "custom_op"
    # the same check on an op of torch's own namespaces (checked: only aten and prims are skipped) is torch's schema
    own = ("RuntimeError: _c10d_functional::all_reduce_: for argument 'input': the operator's schema "
           "_c10d_functional::all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!) specified "
           "that the operator mutates the argument, but this seems to be empirically wrong.\n")
    assert classify_text(own).pattern != "custom_op"


def test_paddles_nvidia_error_format_marks_its_cuda_faults_as_another_engines_even_without_a_paddle_path() -> None:
    # Paddle formats every NVIDIA library error as "<LIB> error(<code>), <text>." (paddle/phi/core/enforce.h,
    # build_nvidia_error_msg; "Cuda error(" before 2.0), often pasted alone
    # (https://github.com/PaddlePaddle/Paddle/issues/45434)
    paddle = ("最近在用solov2模型进行摄像头实时检测分割，运行python deploy/python/infer.py "
              "-model_dir=./inference_model/solov2_r50_fpn_3x_coco --device=GPU --camera_id=0\n"
              "会报(External) Cuda error(700), an illegal memory access was encountered.\n")
    r = classify_text(paddle)
    assert (r.pattern, r.outsider) == ("unknown", "engine")
    newer = "OSError: (External) CUDA error(700), an illegal memory access was encountered.\n"
    assert classify_text(newer).pattern == "unknown"
    # PyTorch's own words ("CUDA error: <text>", THC's "cuda runtime error (77) : <text>") are not that format
    torch_run = ('  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1747, in _call_impl\n'
                 "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert classify_text(torch_run).pattern == "cuda_illegal_memory_access"
    thc = ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=265 error=77 : "
           "an illegal memory access was encountered\n"
           "RuntimeError: cuda runtime error (77) : an illegal memory access was encountered at "
           "/pytorch/aten/src/THC/generic/THCTensorCopy.c:20\n")
    assert classify_text(thc).pattern == "cuda_illegal_memory_access"


def test_apple_clangs_unsupported_fopenmp_is_a_toolchain_problem_only_beside_a_compiled_model() -> None:
    # clang's err_drv_unsupported_opt is printed for any build passing -fopenmp to Apple clang: a project's CMake or
    # setup.py build on macOS (https://github.com/OPM/opm-common/issues/1872,
    # https://github.com/autonomousvision/occupancy_networks/issues/113) is another program's build
    project = ("I am trying to compile opm-common on MacOS activating the python bindings. I get the following error:\n"
               "clang: error: unsupported option '-fopenmp'\n")
    assert classify_text(project).pattern == "unknown"
    setup_py = ("When I try to execute `python setup.py build_ext --inplace` it fails with the error "
                "`clang: error: unsupported option '-fopenmp'`.\n")
    assert classify_text(setup_py).pattern == "unknown"
    # under Inductor's C++ build it is the host compiler Inductor needs (https://github.com/pytorch/pytorch/issues/91537)
    inductor = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                "CppCompileError: C++ compile error\n\nOutput:\n"
                "clang: error: unsupported option '-fopenmp'\n")
    assert classify_text(inductor).pattern == "toolchain_setup"


def test_comfyuis_sage_attention_fallback_marks_a_triton_crash_as_sageattentions_own_kernel() -> None:
    # ComfyUI's attention_sage logs every exception of SageAttention's own kernels in one format
    # (comfy/ldm/modules/attention.py: "Error running sage attention: {}, using pytorch attention instead.");
    # a Triton pass crash under it is the hand-written kernel's, not Inductor's
    # (https://github.com/patientx/ComfyUI-Zluda/issues/410)
    sage = ("error: 'tt.load' op operation destroyed but still has uses\n"
            "LLVM ERROR: operation destroyed but still has uses\n"
            "Pipeline failed while executing TritonAMDGPUStreamPipeline\n"
            "Error running sage attention: PassManager::run failed, using pytorch attention instead.\n")
    r = classify_text(sage)
    assert (r.pattern, r.outsider) == ("unknown", "triton")
    # its out of memory keeps its class (the allocator's, whoever launched the kernel)
    oom = ("Error running sage attention: CUDA out of memory. Tried to allocate 748.00 MiB. GPU 0 has a total "
           "capacity of 23.99 GiB of which 113.56 MiB is free, using pytorch attention instead.\n")
    assert classify_text(oom).pattern == "out_of_memory"
    # the same pass crash with Inductor in view is a compiled model's
    inductor = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                "error: 'tt.load' op operation destroyed but still has uses\n"
                "LLVM ERROR: operation destroyed but still has uses\n"
                "Error running sage attention: PassManager::run failed, using pytorch attention instead.\n")
    assert classify_text(inductor).pattern == "lowering_error"


def test_an_error_inside_a_header_that_tritons_launcher_includes_is_the_toolchain_by_clangs_include_chain() -> None:
    # the HIP SDK's clang building Triton's main.c in its tmpXXXXXXXX directory: the error line names only the header,
    # the include chain above it names Triton's C file (https://github.com/patientx/ComfyUI-Zluda/issues/189)
    triton = ("  ::  Running Triton kernel test...\n"
              "Using HIP SDK Clang.\n"
              "In file included from C:\\Users\\John\\AppData\\Local\\Temp\\tmpebjwqxit\\main.c:4:\n"
              "In file included from E:\\ComfyUI\\ComfyUI-Zluda\\venv\\Lib\\site-packages\\triton\\backends"
              "\\amd\\include\\hip/hip_runtime.h:49:\n"
              "C:\\Program Files\\AMD\\ROCm\\6.2\\lib\\clang\\19\\include\\llvm_libc_wrappers\\stdio.h:10:2: error: "
              "\"This file is for GPU\n      offloading compilation only\"\n")
    assert classify_text(triton).pattern == "toolchain_setup"
    # a project's own main.c in the same chain is that project's build
    project = ("In file included from /home/user/proj/src/main.c:4:\n"
               "/home/user/proj/include/util.h:10:2: error: unknown type name 'foo_t'\n")
    assert classify_text(project).pattern != "toolchain_setup"


def test_ctranslate2s_modules_logger_and_cuda_error_format_mark_faster_whispers_failures_as_another_engines() -> None:
    # CTranslate2's CUDA_CHECK throws "CUDA failed with error " + cudaGetErrorString (src/cuda/utils.h); faster-whisper
    # runs on it (https://github.com/Purfview/whisper-standalone-win/issues/50)
    oom = ("Standalone Faster-Whisper r141.3 running on: CUDA\n\n"
           "Traceback (most recent call last):\n"
           'File "D:\\whisper-fast_main_.py", line 529, in cli\n'
           'File "faster_whisper\\transcribe.py", line 125, in init\n'
           "RuntimeError: CUDA failed with error out of memory\n")
    r = classify_text(oom)
    assert (r.pattern, r.outsider) == ("unknown", "engine")
    # its logger before cuDNN's own loader message (https://github.com/SYSTRAN/faster-whisper/issues/297)
    logged = ("INFO:faster_whisper:Processing audio with duration 00:29.466\n"
              "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared "
              "object file: No such file or directory\n"
              "Please make sure libcudnn_ops_infer.so.8 is in your library path!\n")
    r = classify_text(logged)
    assert (r.pattern, r.outsider) == ("unknown", "engine")
    # PyTorch's own allocator, in a log that names torch, keeps its class
    torch_oom = ('  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1747, in _call_impl\n'
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total "
                 "capacity of 31.37 GiB of which 15.88 MiB is free.\n")
    assert classify_text(torch_oom).pattern == "out_of_memory"
    # a whisperX log with torch frames beside faster_whisper's is not another engine's alone
    mixed = ('  File "/venv/lib/python3.11/site-packages/faster_whisper/transcribe.py", line 130, in __init__\n'
             '  File "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1747, in _call_impl\n'
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n")
    assert classify_text(mixed).pattern == "out_of_memory"


def test_a_nan_rmse_of_the_compiled_result_in_the_accuracy_check_is_nan_inf_a_finite_one_wrong_output() -> None:
    # torch/_dynamo/utils.py same() formats the compiled result's RMSE with %.5f, so NaN in it prints "nan"
    # (https://github.com/intel/torch-xpu-ops/issues/708, benchmarks/dynamo --accuracy on XPU)
    nan = ("E0804 00:49:00.458000 519441 torch/_dynamo/utils.py:1558] RMSE (res-fp64): nan, (ref-fp64): 0.00512 and "
           "shape=torch.Size([128]). res.dtype: torch.float16, multiplier: 3.000000, tol: 0.010000\n"
           "E0804 00:49:00.458000 519441 torch/_dynamo/utils.py:1450] Accuracy failed for key name stem.0.bias.grad\n"
           "fail_accuracy\n")
    assert classify_text(nan).pattern == "nan_inf"
    # a finite RMSE over the tolerance is a drift, not a NaN (https://github.com/intel/torch-xpu-ops/issues/493)
    finite = ("E0626 13:14:09.343000 139963949791040 torch/_dynamo/utils.py:1478] RMSE (res-fp64): 0.00150, "
              "(ref-fp64): 0.00032 and shape=torch.Size([224]). res.dtype: torch.float16, multiplier: 3.000000, "
              "tol: 0.001000\n"
              "E0626 13:14:09.343000 139963949791040 torch/_dynamo/utils.py:1392] Accuracy failed for key name "
              "s3.b4.se.fc1.bias.grad\nfail_accuracy\n")
    assert classify_text(finite).pattern == "wrong_output"


def test_a_frame_of_torch_export_load_or_save_is_not_a_trace_failure() -> None:
    # torch.export.load / save (torch/export/__init__.py) only (de)serialize a finished program; their frames are
    # not export's trace (https://github.com/pytorch/TensorRT/issues/2791: loading a torch_tensorrt.save'd program)
    load = ("Traceback (most recent call last):\n"
            '  File "C:\\Users\\u\\test.py", line 38, in <module>\n'
            '    loaded_trt = torch.export.load("trt.ep").module()\n'
            '  File "C:\\Python312\\Lib\\site-packages\\torch\\export\\__init__.py", line 299, in load\n')
    assert classify_text(load).pattern != "export_failure"
    # the same file's export() frame still shows a failure while exporting
    export = ("Traceback (most recent call last):\n"
              '  File "/w/run.py", line 18, in <module>\n'
              "    exported_program = export(model, example_args)\n"
              '  File "/venv/lib/python3.11/site-packages/torch/export/__init__.py", line 368, in export\n'
              "    return _export(\n")
    assert classify_text(export).pattern == "export_failure"


def test_torch_own_library_behind_an_elided_path_is_an_install_error() -> None:
    # https://github.com/pytorch/pytorch/issues/196073: the reporter elided the folder torch is installed in as `...`
    text = (
        "ImportError: .../torch/lib/libtorch_cuda.so: undefined symbol: "
        "cublasLtGroupedMatrixLayoutCreate, version libcublasLt.so.13"
    )
    assert classify_text(text).pattern == "unknown"
    # an extension's own library behind the same elision, in a folder whose name starts with torch, is not torch's
    # install: its undefined torch C++ symbol is the extension built against another torch
    other = (
        "ImportError: .../torch_scatter/_scatter_cuda.so: undefined symbol: "
        "_ZN3c104cuda9SetDeviceEi"
    )
    assert classify_text(other).pattern == "version_skew"


def test_cpython_fatal_error_beside_a_compiled_model_is_a_silent_crash() -> None:
    # CPython's own fatal error, "Fatal Python error: <function>: <message>" (Python/pylifecycle.c), in compiled
    # training (https://github.com/pytorch/torchtitan/issues/1066, https://github.com/pytorch/pytorch/issues/150757)
    text = ("TORCHINDUCTOR_COMPILE_THREADS=1 python train.py\n"
            "[rank0]:Fatal Python error: none_dealloc: deallocating None\n"
            "[rank0]:Python runtime state: initialized\n")
    assert classify_text(text).pattern == "segfault_no_message"
    # with no compiled model it decides nothing: any C extension corrupts the interpreter this way
    bare = "Fatal Python error: none_dealloc: deallocating None\nPython runtime state: initialized\n"
    assert classify_text(bare).pattern == "unknown"
    # the interpreter failing to start is a broken install, not a crash, even beside a compiled model
    for line in ("Fatal Python error: init_fs_encoding: failed to get the Python codec of the filesystem encoding",
                 "Fatal Python error: initfsencoding: Unable to get the locale encoding",
                 "Fatal Python error: pyinit_main: can't initialize time"):
        start = f"TORCHINDUCTOR_COMPILE_THREADS=1 python train.py\n{line}\n"
        assert classify_text(start).pattern != "segfault_no_message", line


def test_aotinductor_mps_shim_marks_a_compiled_model_for_a_metal_shader_error() -> None:
    # https://github.com/pytorch/executorch/issues/16984: the Metal shader AOTInductor generated fails to compile;
    # ExecuTorch's Metal backend logging from its shim (shim_mps.mm, et_metal.mm) is what shows a compiled model
    text = (
        "E 00:00:13.059103 executorch:et_metal.mm:246] ETMetalShaderLibrary: Failed to compile shader library: "
        "program_source:3813:29: error: assigning to 'bfloat' from incompatible type 'float'\n"
        "E 00:00:13.059127 executorch:shim_mps.mm:105] aoti_torch_mps_get_kernel_function: "
        "Failed to get kernel function 'generated_kernel'\n"
    )
    assert classify_text(text).pattern == "lowering_error"
    # a shader a program compiles itself (torch.mps.compile_shader) prints the same Metal words without the shim
    own = ("SyntaxError: program_source:1:1: error: unknown type name 'What'\nWhat\n^\n"
           "program_source:1:5: error: expected unqualified-id\n")
    assert classify_text(own).pattern != "lowering_error"
    # torchvision's stable-ABI MPS kernel failing to build names the shim's handle type: an extension's build
    tv = ("/src/torchvision/csrc/ops/mps/nms_kernel.mm:42:18: error: unknown type name "
          "'AOTIMetalKernelFunctionHandle'\n")
    assert classify_text(tv).pattern not in ("lowering_error", "cpp_compile_error")
    # the shim's function names alone are torch's stable ABI, which an extension's own MPS kernels call too
    # (torchvision's nms and deform_conv2d): no compiled model
    ext = ("RuntimeError: aoti_torch_mps_get_kernel_function(handle, &fn) API call failed\n"
           "program_source:12:5: error: use of undeclared identifier 'idx'\n")
    assert classify_text(ext).pattern != "lowering_error"


def test_triton_xpu_driver_utils_build_from_main_cpp_is_toolchain_setup() -> None:
    # https://github.com/intel/intel-xpu-backend-for-triton/issues/3064: icpx building Triton XPU's spirv_utils
    text = (
        "E   subprocess.CalledProcessError: Command '['C:\\\\Program Files (x86)\\\\Intel\\\\oneAPI\\\\compiler"
        "\\\\latest\\\\bin\\\\icpx.EXE', 'C:\\\\Users\\\\sdp\\\\AppData\\\\Local\\\\Temp\\\\tmpr3g8gym8\\\\main.cpp', "
        "'-O3', '-shared', '-Wno-psabi', '-lze_loader', '-o', "
        "'C:\\\\Users\\\\sdp\\\\AppData\\\\Local\\\\Temp\\\\tmpr3g8gym8\\\\spirv_utils.cp310-win_amd64.pyd', '-fsycl']"
    )
    assert classify_text(text).pattern == "toolchain_setup"
    # the same build of a kernel's launcher, by a versioned g++ (compile_module_from_src builds it from main.cpp too)
    launcher = ("subprocess.CalledProcessError: Command '['/usr/bin/g++-12', '/tmp/tmpab12cd34/main.cpp', '-O3', "
                "'-shared', '-fPIC', '-lze_loader', '-o', "
                "'/tmp/tmpab12cd34/__triton_launcher.cpython-310-x86_64-linux-gnu.so']' "
                "returned non-zero exit status 1.")
    assert classify_text(launcher).pattern == "toolchain_setup"
    # a sandbox compiling a user's main.cpp in a temporary directory is that program's build
    other = ("subprocess.CalledProcessError: Command '['g++', '/tmp/tmpab12cd34/main.cpp', '-std=c++17', "
             "'-o', '/tmp/tmpab12cd34/main']' returned non-zero exit status 1.")
    assert classify_text(other).pattern != "toolchain_setup"


def test_a_python_wrapper_size_assert_naming_a_custom_op_ranks_custom_op_and_yields_to_other_failures() -> None:
    # https://github.com/PrimeIntellect-ai/prime-rl/pull/3567: torch.compile's generated wrapper asserts each output of
    # a fallback kernel with the op's name (torch/_inductor/ir.py codegen_size_asserts); the traceback shows that line
    text = ("assert_size_stride(buf2, (32, 1408, 4096), (5767168, 1, 1408), "
            "'torch.ops.prime_rl.grouped_fp8_gemm_backward.default')\n"
            "AssertionError: expected size 1408==1408, stride 4096==1 at dim=1; "
            "expected size 4096==4096, stride 1==1408 at dim=2\n")
    r = classify_text(text)
    # a line-by-line reader cannot tell this failing line from the same line in a dump of the generated code, so it
    # ranks the custom op beside the bare assert, which decides
    assert r.pattern == "input_shape_mismatch" and "custom_op" in [a.pattern for a in r.alternatives]
    # the same assert on a graph input, or on an op of torch's own namespaces, is no custom op's
    graph_input = ("    assert_size_stride(arg3_1, (10240, 2560), (2560, 1), 'input')\n"
                   "AssertionError: expected size 8192==10240, stride 2560==2560 at dim=0\n")
    assert classify_text(graph_input).pattern == "input_shape_mismatch"
    # the line also stands in a dump of the generated code for every fallback op, failing or not: beside another
    # failure of the log's own it yields
    dump = ("    assert_size_stride(buf3, (8, 16), (16, 1), 'torch.ops.mylib.myop.default')\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "79.19 GiB of which 1.06 GiB is free.\n")
    assert classify_text(dump).pattern == "out_of_memory"
    aten = ("    assert_size_stride(buf26, (2, 12, 4352, 96), (5013504, 417792, 96, 1), "
            "'torch.ops.aten._scaled_dot_product_flash_attention.default')\n"
            "AssertionError: expected size 2==2, stride 96==5013504 at dim=0\n")
    assert classify_text(aten).pattern != "custom_op"


def test_a_count_or_advice_about_ooms_is_no_out_of_memory() -> None:
    # torch.cuda.memory_summary()'s count and advice name OOMs that did not happen
    summary = "|           CUDA OOMs: 0            |        cudaMalloc retries: 0         |"
    assert classify_text(summary).pattern != "out_of_memory"
    assert classify_text("Use gradient checkpointing to avoid OOMs.").pattern != "out_of_memory"


def test_a_traceback_through_tritons_ptxas_version_probe_is_the_toolchain() -> None:
    # triton/backends/nvidia/compiler.py get_ptxas_version finds ptxas and runs `ptxas --version`; a paste that stops
    # at the call under hash() (https://github.com/logtd/ComfyUI-HunyuanLoom/issues/35) still shows a codegen stack,
    # and the probe's frame outranks it: ptxas is missing or does not start
    cut = ('  File "E:\\ComfyUI\\.ext\\Lib\\site-packages\\torch\\_inductor\\codegen\\triton.py", line 2532, '
           'in inductor_meta_common\n'
           '    "backend_hash": torch.utils._triton.triton_hash_with_backend(),\n'
           '  File "E:\\ComfyUI\\.ext\\Lib\\site-packages\\triton\\backends\\nvidia\\compiler.py", line 336, in hash\n'
           '    version = get_ptxas_version()\n')
    assert classify_text(cut).pattern == "toolchain_setup"
    frame = ('  File "/usr/lib/python3.12/site-packages/triton/backends/nvidia/compiler.py", line 49, '
             'in get_ptxas_version\n')
    assert classify_text(frame).pattern == "toolchain_setup"
    # the function's source pasted (a patch script, a diff) is no traceback through it
    source = ("@functools.lru_cache()\ndef get_ptxas_version():\n"
              "    mock_ver = knobs.nvidia.mock_ptx_version\n")
    assert classify_text(source).pattern != "toolchain_setup"


def test_dynamos_custom_op_advice_for_a_python_builtin_is_no_custom_op() -> None:
    # torch/_dynamo/variables/functions.py prints the same advice ("wrap it into a PyTorch-understood custom
    # operator") for every builtin it cannot trace; for Python's own (time.time, sys.audit) no custom op fixes it
    advice = ("This function is either a Python builtin (e.g. _warnings.warn) or a third-party C/C++ Python extension "
              "(perhaps created with pybind). If it is a Python builtin, please file an issue on GitHub so the "
              "PyTorch team can add support for it and see the next case for a workaround. If it is a third-party "
              "C/C++ Python extension, please either wrap it into a PyTorch-understood custom operator (see "
              "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html for more details) or, if it is "
              "traceable, use torch.compiler.allow_in_graph.")
    python_builtin = ("/usr/lib/python3/dist-packages/torch/_dynamo/variables/functions.py:663: UserWarning: Graph "
                      "break due to unsupported builtin time.time. " + advice + "\n")
    assert classify_text(python_builtin).pattern != "custom_op"
    # an extension's pybind11 kernel, named on the same line, is one to wrap as a custom op
    extension = ("[rank7]: torch._dynamo.exc.Unsupported: Graph break due to unsupported builtin "
                 "flash_attn_3_cuda.PyCapsule.fwd. " + advice + "\n")
    assert classify_text(extension).pattern == "custom_op"
    # the advice alone, its builtin on another line, still ranks the custom-op fix
    assert "custom_op" in [classify_text(advice + "\n").pattern] + [
        a.pattern for a in classify_text(advice + "\n").alternatives]


def test_a_segfault_in_the_users_words_decides_only_beside_a_compiled_model_and_never_when_negated() -> None:
    # https://github.com/pytorch/pytorch/issues/192748: the crash said in prose, beside the code that compiled it
    compiled = ('c = torch.compile(M().cuda().eval(), mode="reduce-overhead")\n'
                "a buffer that is first allocated inside the compiled region and then passed back in on later calls "
                "segfaults the process. There is no Python traceback and no message.\n")
    assert classify_text(compiled).pattern == "segfault_no_message"
    # the same words about an eager program are its own crash: unknown, with the crash as an alternative
    eager = "model = MyNet().cuda()\nthe forward pass segfaults the process, with no traceback.\n"
    r = classify_text(eager)
    assert r.pattern == "unknown" and "segfault_no_message" in [a.pattern for a in r.alternatives]
    # a crash avoided, denied or already fixed is none
    for line in ("torch.compile(model) now raises an error instead of segfaulting.",
                 "torch.compile(model) does not segfault any more.",
                 "torch.compile(model) works, we fixed the segfault last week.",
                 "torch.compile(model)\nit fixes the segfault in the cpp wrapper",
                 "torch.compile(model)\nno more segfaults after upgrading",
                 "torch.compile(model)\nthe segfault is gone after upgrading to 2.5"):
        assert classify_text(line).pattern != "segfault_no_message", line
    # beside a stated failure the words only rank
    oom = ("torch.compile(model)\nit segfaults after this:\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    assert classify_text(oom).pattern == "out_of_memory"


def test_inductors_generated_python_wrapper_shows_a_compiled_model() -> None:
    # https://github.com/pytorch/torchdynamo/issues/1942: the output code Inductor wrote (its AsyncCompile header)
    # pasted with the crash in prose: the crash is a compiled model's
    text = ("Also here's the triton code causing the segfault:\n"
            "from torch._inductor.codecache import AsyncCompile\n"
            "async_compile = AsyncCompile()\n")
    assert classify_text(text).pattern == "segfault_no_message"
    # a program's own object of the same name is no generated wrapper
    other = ("the worker segfaults when it starts\n"
             "my_async_compile.wait(jobs)\n")
    assert classify_text(other).pattern == "unknown"


def test_executorchs_reference_comparison_is_a_lowered_programs_wrong_output() -> None:
    # executorch/backends/test/harness/tester.py (https://github.com/pytorch/executorch/pull/19563)
    text = ("AssertionError: Output 2 does not match reference output.\n"
            "\tGiven atol: 0.01, rtol: 0.01.\n"
            "\tOutput tensor shape: torch.Size([3]), dtype: torch.float32\n")
    r = classify_text(text)
    assert r.pattern == "wrong_output" and r.confidence >= 0.8
    # another program's check of its design against a reference names no output index: only the user's-words
    # rule (weak, 0.5) reads it, not the harness's message
    other = "FAILED. Design output does not match reference output.\n"
    assert classify_text(other).confidence < 0.8


def test_results_said_inconsistent_in_a_sentence_starting_with_if_beside_a_compiled_model() -> None:
    # https://github.com/pytorch/pytorch/issues/141317
    text = ("compiled_model = torch.compile(m)\n"
            "If I use Inductor to compile `Conv2d` and `BN2d` **not use** `eval mode`. The results are inconsistent.\n")
    assert classify_text(text).pattern == "wrong_output"
    # without a compiled model the same words are an eager program's, not a compiled model's
    eager = "If I run the model twice on the GPU the results are inconsistent.\n"
    assert classify_text(eager).pattern != "wrong_output"
    # Python's own `if` still excludes a code line
    code = "compiled_model = torch.compile(m)\nif results are inconsistent: raise ValueError('diff value')\n"
    assert classify_text(code).pattern != "wrong_output"
    # nor are results inconsistent with something, across ranks, or between two runs of one kind
    for line in ("Return values are inconsistent with the declared schema",
                 "results are inconsistent across ranks (DDP)",
                 "The results are inconsistent between two eager runs with cudnn.benchmark=True."):
        assert classify_text(f"compiled_model = torch.compile(m)\n{line}\n").pattern != "wrong_output", line


def test_eager_named_as_the_model_not_compiled_in_a_difference_between_the_two() -> None:
    # https://github.com/pytorch/pytorch/issues/120462
    text = ("we are seeing drastic output quality difference between no-torch.compile and torch.compile.\n")
    assert classify_text(text).pattern == "wrong_output"
    # a difference of speed between the two is nobody's
    speed = "There is a large speed difference between uncompiled and compiled models.\n"
    assert classify_text(speed).pattern != "wrong_output"
    # one side is eager or not compiled, the other compiled: two runs that are both not compiled are none
    both = "torch.compile(model)\nthe difference between eager and non-compiled runs is tiny\n"
    assert classify_text(both).pattern != "wrong_output"


def test_an_extension_ops_missing_backend_kernel_is_a_custom_op_only_beside_a_compiled_model() -> None:
    # https://blog.gitcode.com/e919a2c2eee0812bbcbdbfb5af790a7d.html: ipex-llm, eager, an extension's op on the CPU
    eager = ("NotImplementedError: Could not run 'torch_ipex::mul_add' with arguments from the 'CPU' backend. "
             "This could be because the operator doesn't exist for this backend, or was omitted during the "
             "selective/custom build process (if using custom build).\n")
    r = classify_text(eager)
    assert r.pattern == "unknown"
    assert "custom_op" in [a.pattern for a in r.alternatives][:2]
    # the same dispatcher message in a compiled model's run is the op library's
    compiled = "TORCHINDUCTOR_CPP_WRAPPER=1 python run.py\n" + eager
    assert classify_text(compiled).pattern == "custom_op"


def test_tritons_ptxaserror_decides_only_beside_a_compiled_model() -> None:
    # PTXASError is Triton's own exception (python/triton/runtime/errors.py), raised by make_cubin for any kernel
    text = ("TORCHINDUCTOR_MAX_AUTOTUNE=1 python run.py\n"
            "triton.runtime.errors.PTXASError: PTXAS error: `ptxas` failed with error code -2\n")
    assert classify_text(text).pattern == "lowering_error"
    # a hand-written kernel's (vLLM's MoE kernel on sm_120a, https://malidrive.com.tr/blog/vllm-0-11-1-rc4): no
    # compiled model, so the kernel's own code, unknown
    other = ("The error manifests as a PTXASError during the compilation of Triton kernels. The error message clearly "
             "indicates that the .tile::gather4 feature, when used with the .shared::cluster destination state space, "
             "is not supported on the sm_120a target architecture.\n")
    assert classify_text(other).pattern == "unknown"


def test_cuda_home_not_set_decides_only_beside_a_compiled_model_not_in_an_extension_build() -> None:
    # torch/utils/cpp_extension.py (_join_cuda_home): Inductor's cpp_builder takes the CUDA paths from it for an AOTI
    # CUDA package, so beside a compiled model the missing toolkit is the environment's
    text = ("torch._inductor.aoti_compile_and_package(ep)\n"
            "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n")
    assert classify_text(text).pattern == "toolchain_setup"
    # pip building flash-attn prints the same line (http://www.kwkr.cn/news/1282836/,
    # https://github.com/character-ai/Ovi/issues/15): a project's own extension build, unknown by the policy, with
    # the toolchain still ranked as the alternative
    build = ("pip install flash_attn --no-build-isolation\n"
             "      OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n")
    r = classify_text(build)
    assert r.pattern == "unknown"
    assert "toolchain_setup" in [a.pattern for a in r.alternatives][:2]
