"""The classifier engine: decides by the real cause, survives any input, streams with bounded memory."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from aoti_debug.classify.engine import classify_chunks, classify_file, classify_text
from aoti_debug.classify.guides import Rule, load_guides
from aoti_debug.common.errors import BadInput
from corpus_cases import classify_dev_case
from pydantic import ValidationError

CPU_OOB = "Error: index out of bounds: 0 <= tmp7 < 2L"
RUN_FUNC = ("RuntimeError: run_func_( container_handle_, input_handles.data(), input_handles.size(), "
            "output_handles.data(), output_handles.size(), reinterpret_cast<AOTInductorStreamHandle>(stream_handle), "
            "proxy_executor_handle_) API call failed at "
            "/pytorch/torch/csrc/inductor/aoti_runner/model_container_runner.cpp, line 144")
IMA = "RuntimeError: CUDA error: an illegal memory access was encountered"
ASYNC = ("CUDA kernel errors might be asynchronously reported at some other API call, "
         "so the stacktrace below might be incorrect.")


@pytest.mark.parametrize("text", ["", "   \n\n  \t\n"])
def test_an_empty_log_is_a_clear_error(text) -> None:
    with pytest.raises(BadInput, match="empty"):
        classify_text(text)


def test_a_missing_file_and_a_directory_are_clear_errors(tmp_path) -> None:
    with pytest.raises(BadInput, match="no such log file"):
        classify_file(tmp_path / "nope.log")
    with pytest.raises(BadInput, match="not a regular file"):
        classify_file(tmp_path)


def test_the_generic_run_func_wrapper_alone_is_not_evidence_of_any_pattern() -> None:
    result = classify_text(RUN_FUNC)
    assert result.pattern == "unknown"


def test_the_specific_cause_next_to_the_generic_wrapper_decides() -> None:
    result = classify_text(f"{CPU_OOB}\n\n{RUN_FUNC}\n")
    assert result.pattern == "triton_index_out_of_bounds"
    assert [e.line for e in result.evidence] == [1]
    assert result.fields["tmp_var"] == "tmp7" and result.fields["bound"].startswith("2")


def test_cuda_boilerplate_lines_are_never_evidence() -> None:
    result = classify_text(f"{IMA}\n{ASYNC}\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
    assert result.pattern == "cuda_illegal_memory_access"
    assert all("asynchronously" not in e.text and "CUDA_LAUNCH_BLOCKING" not in e.text for e in result.evidence)


def test_ansi_codes_crlf_timestamps_and_bad_bytes_do_not_hide_the_cause() -> None:
    raw = (b"\xff\xfe junk \x00\x01\r\n2026-11-22T01:00:00Z \x1b[31mError: index out of bounds: "
           b"0 <= tmp7 < 2L\x1b[0m\r\n\xc3\x28 more junk\r\n")
    result = classify_text(raw)
    assert result.pattern == "triton_index_out_of_bounds"
    assert result.evidence[0].line == 2
    assert result.evidence[0].text.startswith("Error: index out of bounds")


def test_binary_junk_without_newlines_is_survived() -> None:
    junk = os.urandom(3 * 2**20).replace(b"\n", b"")
    result = classify_text(junk + b"\n" + CPU_OOB.encode() + b"\n")
    assert result.pattern == "triton_index_out_of_bounds"


def test_a_signal_with_no_printed_cause_is_a_silent_segfault() -> None:
    result = classify_text("loading package...\n", exit_status=-11)
    assert result.pattern == "segfault_no_message"
    assert result.fields["signal"] == "SIGSEGV"


def test_a_printed_cause_beats_the_signal() -> None:
    result = classify_text(f"{CPU_OOB}\n", exit_status=134)
    assert result.pattern == "triton_index_out_of_bounds"
    assert "segfault_no_message" in {a.pattern for a in result.alternatives}


def test_alternatives_are_at_most_three_and_never_the_winner() -> None:
    text = "\n".join([CPU_OOB, IMA, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                      "Error in dlopen: /tmp/x.so: undefined symbol: _ZN3foo3barEv", "Segmentation fault"])
    result = classify_text(text, exit_status=-11)
    assert 1 <= len(result.alternatives) <= 3
    assert result.pattern not in {a.pattern for a in result.alternatives}


def test_a_large_log_is_streamed_with_bounded_memory(tmp_path) -> None:
    path = tmp_path / "big.log"
    block = b"Mean value: -0.0836859\nMin value: -0.724281\nMax value: 1.40921\nDevice: cpu\n" * 2000
    with path.open("wb") as f:
        for _ in range(64 * 2**20 // len(block)):
            f.write(block)
        f.write(CPU_OOB.encode() + b"\n")
    tracemalloc.start()
    result = classify_file(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.pattern == "triton_index_out_of_bounds"
    assert result.evidence[0].line == result.lines_scanned
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_an_error_at_the_end_of_a_20_mb_line_is_found_with_its_text(tmp_path) -> None:
    # The message straddles a 1 MiB read boundary of a line with no newline for 20 MB.
    path = tmp_path / "long.log"
    head = b"=" * (20 * 2**20 - len(IMA) // 2)
    path.write_bytes(head + b" " + IMA.encode() + b"\n")
    tracemalloc.start()
    result = classify_file(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.pattern == "cuda_illegal_memory_access"
    assert result.evidence[0].text.endswith("an illegal memory access was encountered")
    assert result.lines_scanned == 1 and result.bytes_scanned == path.stat().st_size
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_a_progress_bar_redrawn_with_cr_is_a_line_per_redraw() -> None:
    bar = b"".join(b"Loading inputs: %3d%%|####      | %d/95\r" % (i, i) for i in range(200_000))
    result = classify_text(bar + CPU_OOB.encode() + b"\n")
    assert result.pattern == "triton_index_out_of_bounds"
    assert result.evidence[0].text == CPU_OOB


def test_a_log_with_nothing_known_is_unknown_at_half_confidence_and_says_so() -> None:
    result = classify_text("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                           "KeyError: 'lr'\n")
    assert result.pattern == "unknown" and result.confidence == 0.5
    assert result.summary.startswith("Nothing matched")
    # no rule ranks one: the reports fill, or with none near, the last-resort silent failures
    assert all(a.source in ("similar_reports", "silent") and a.evidence == [] for a in result.alternatives)


def test_weak_cues_rank_alternatives_for_unknown_and_lower_its_confidence() -> None:
    # Only frames and a generated kernel name: nothing states the failure, but it looks like Inductor.
    text = ('  File "/venv/lib/python3.11/site-packages/triton/compiler/compiler.py", line 307, in compile\n'
            '    next_module = compile_ir(module, metadata)\n'
            "  triton_poi_fused_add_0.run(buf0, 16, grid=grid(16))\n"
            "RuntimeError: unexpected state\n")
    result = classify_text(text)
    assert result.pattern == "unknown"
    assert result.alternatives and result.alternatives[0].pattern == "lowering_error"
    assert 0 < result.confidence < 0.5
    assert "Seen:" in result.summary and "lowering_error" in result.summary
    assert result.phase == "compile"


def test_a_frame_decides_only_when_no_line_states_the_failure() -> None:
    frame = ('  File "/venv/lib/python3.11/site-packages/torch/export/_trace.py", line 1017, in wrapper\n'
             "    ep = fn(*args, **kwargs)\n")
    alone = classify_text(frame + "NotImplementedError: UserDefinedObjectVariable(MyTensor)\n")
    assert alone.pattern == "export_failure" and alone.evidence[0].line == 1
    stated = classify_text(frame + "torch._dynamo.exc.UserError: Constraints violated (b)!\n")
    assert stated.pattern == "export_failure" and {e.line for e in stated.evidence} == {3}


# github.com/pytorch/FBGEMM/issues/3275: the op library fails to load, then its ops are missing.
LIB_NOT_LOADED = ("site-packages/fbgemm_gpu/fbgemm_gpu_py.so: undefined symbol: "
                  "_ZN3c1015SmallVectorBaseIjE8grow_podEPvmm")
OP_MISSING = "AttributeError: '_OpNamespace' 'fbgemm' object has no attribute 'jagged_2d_to_dense'"


def test_an_op_missing_because_its_library_failed_to_load_is_the_load_failure() -> None:
    r = classify_text(f"{LIB_NOT_LOADED}\n{OP_MISSING}")
    assert r.pattern == "version_skew"
    assert "custom_op" in [a.pattern for a in r.alternatives]  # the consequence still ranks
    assert classify_text(OP_MISSING).pattern == "custom_op"  # alone, the missing op is the finding


# github.com/triton-lang/triton/issues/2596 (a hand-written kernel) and facebookresearch/sam2/issues/592 (Inductor)
TRITON_OOR = ("triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 131072, "
              "Hardware limit: 98304. Reducing block sizes or `num_stages` may help.")
TRITON_FRAME = ('  File "/home/robert/.local/lib/python3.10/site-packages/triton/compiler/compiler.py", line 568, '
                "in _init_handles")
INDUCTOR_AUTOTUNE = "AUTOTUNE mm(16384x128, 128x256)"


def test_a_triton_error_decides_lowering_only_next_to_inductor() -> None:
    alone = classify_text(f"{TRITON_FRAME}\n{TRITON_OOR}")  # Triton's own frames are no sign of Inductor
    assert alone.pattern == "unknown"
    assert alone.alternatives[0].pattern == "lowering_error"
    inductor = classify_text(f"{TRITON_OOR}\n{INDUCTOR_AUTOTUNE}")
    assert (inductor.pattern, inductor.phase) == ("lowering_error", "compile")


LOWERING = "torch._inductor.exc.InductorError: LoweringException: AssertionError: boom"


# https://github.com/pytorch/pytorch/issues/147377 (Triton's bundled LLVM asserting on an Inductor gemm template)
TRITON_LLVM_ASSERT = ("python: /root/.triton/llvm/llvm-1188b1ff-ubuntu-x64/include/llvm/Support/Casting.h:566: "
                      "decltype(auto) llvm::cast(const From&) [with To = mlir::RankedTensorType; From = mlir::Type]: "
                      "Assertion `isa<To>(Val) && \"cast<Ty>() argument of incompatible type!\"' failed.")
# https://github.com/triton-lang/triton/issues/2032 (an MLIR pass of Triton asserting on a hand-written kernel)
TRITON_MLIR_ASSERT = ("triton/lib/Dialect/Triton/Transforms/RewriteTensorPointer.cpp:332: mlir::Operation* "
                      "RewriteTensorPointerPass::rewriteForOp(mlir::OpBuilder&, mlir::scf::ForOp, "
                      "std::stack<mlir::Operation*>&): Assertion \"rewritedInfo.count(newIterOperands[i])\" failed.")


@pytest.mark.parametrize("line", [TRITON_LLVM_ASSERT, TRITON_MLIR_ASSERT], ids=["llvm", "mlir"])
def test_an_assertion_of_tritons_compiler_is_lowering_only_next_to_inductor(line) -> None:
    alone = classify_text(line)  # a host assertion (glibc's `...' quoting) is no kernel running in a package
    assert (alone.pattern, alone.alternatives[0].pattern) == ("unknown", "lowering_error")
    inductor = classify_text(f"{INDUCTOR_AUTOTUNE}\n{line}")
    assert (inductor.pattern, inductor.phase) == ("lowering_error", "compile")


# kijai/ComfyUI-HunyuanVideoWrapper#361: Triton refusing fp8 on an older GPU, under torch.compile's own footer
TRITON_FP8 = ("ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
              "('fp8e4b15', 'fp8e5')\")")
DYNAMO_FOOTER = "You can suppress this exception and fall back to eager by setting:"


def test_a_dtype_triton_cannot_compile_for_the_gpu_is_lowering_only_under_torch_compile() -> None:
    alone = classify_text(TRITON_FP8)
    assert alone.pattern == "unknown" and "lowering_error" in [a.pattern for a in alone.alternatives]
    compiled = classify_text(f"{TRITON_FP8}\n\nSet TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more "
                             f"information\n\n{DYNAMO_FOOTER}\n")
    assert (compiled.pattern, compiled.phase) == ("lowering_error", "compile")


def test_a_device_assert_still_marks_a_running_kernel() -> None:
    device = ("/tmp/ind_cache2/ci/cci377bbxdj2vo4ccghfsft3dsplhi7qene2prtov3nkuflj6bis.py:31: unknown: block: [0,0,0], "
              "thread: [3,0,0] Assertion `index out of bounds: 0 <= tmp4 < ks0` failed.")  # the guide's GPU capture
    assert (classify_text(device).phase, classify_text(f"{INDUCTOR_AUTOTUNE}\n{device}").phase) == ("run", "run")




def test_a_warning_that_compile_was_skipped_for_triton_never_outranks_the_failure() -> None:
    warned = "Warning: torch.compile disabled - triton is not installed"
    assert classify_text(f"{warned}\n{LOWERING}").pattern == "lowering_error"
    assert classify_text("Error: triton is not installed").pattern == "toolchain_setup"


def test_an_undefined_symbolic_size_is_lowering_only_next_to_a_compiled_model() -> None:
    user_typo = "NameError: name 's1' is not defined"
    assert classify_text(user_typo).pattern != "lowering_error"
    generated = '  File "/t/torch/_inductor/codecache.py", line 3011, in load_by_key_path\n' + user_typo
    assert classify_text(generated).pattern == "lowering_error"


def test_a_missing_header_of_ones_own_is_no_missing_c_library() -> None:
    own = "src/app.cpp:3:10: fatal error: mytime.h: No such file or directory"
    assert classify_text(own).pattern != "toolchain_setup"
    libc = "hip/hip_runtime.h(49,10): fatal error: 'stdlib.h' file not found"
    assert classify_text(libc).pattern == "toolchain_setup"


def test_a_wrong_result_is_a_symptom_that_any_cause_outranks() -> None:
    mismatch = "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 400 / 400 (100.0%)\n"
    assert classify_text(mismatch).pattern == "wrong_output"
    resized = ("Warning: An output with one or more elements was resized since it had shape [4, 16], which does "
               "not match the required output shape [6, 16]. This behavior is deprecated\n")
    result = classify_text(resized + mismatch)
    assert result.pattern == "input_shape_mismatch"
    assert "wrong_output" in {a.pattern for a in result.alternatives}
    nan = mismatch + "Greatest absolute difference: nan at index (0, 1) (up to 1e-05 allowed)\n"
    assert classify_text(nan).pattern == "nan_inf"


@pytest.mark.parametrize(("text", "phase"), [
    ('  File "/v/torch/export/_trace.py", line 1017, in wrapper\nRuntimeError: boom\n', "export"),
    ('  File "/v/torch/_inductor/compile_fx.py", line 2010, in compile_fx\nRuntimeError: boom\n', "compile"),
    # Inductor's logger names its source file in the prefix, which rules never see (pytorch/pytorch#164683)
    ("   E1004 21:11:19.113000 467163 torch/_inductor/runtime/triton_heuristics.py:817] [0/0] RuntimeError: boom\n",
     "compile"),
    ("[rank0]:E1004 21:11:19.113000 467163 torch/_inductor/compile_fx.py:817] [0/0] RuntimeError: boom\n", "compile"),
    ('  File "/v/torch/_inductor/package/package.py", line 340, in load_package\n'
     "RuntimeError: create_func_( &container_handle_, num_models) API call failed at x.cpp, line 121\n", "load"),
    ('  File "/v/torch/_inductor/package/package.py", line 340, in load_package\n  File "run.py", line 9\n'
     "RuntimeError: run_func_( container_handle_, input_handles.data()) API call failed at x.cpp, line 144\n", "run"),
    # no marker: the winner's own phase when it has only one (input checks are run-time), else none
    ("RuntimeError: input_handles[0]: unmatched dim value at 1, expected: 8, but got: 12\n", "run"),
    ("KeyError: 'lr'\n", None),
    # a compiler's diagnostic says something is being compiled (the cpu fixture's truncated omp.h)
    ("/tmp/aoti_fixture_cpu_truncated_omp_header_adw4tfdh/include/omp.h:41: error: unterminated #ifndef\n", "compile"),
    # the loader's own words say the phase, in any program (chenfei-wu/TaskMatrix#262)
    ("ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n", "load"),
])
def test_the_phase_is_the_last_marker_of_the_log_else_the_patterns_own(text, phase) -> None:
    assert classify_text(text).phase == phase


@pytest.mark.parametrize(("text", "phase", "basis"), [
    ('  File "/v/torch/export/_trace.py", line 1017, in wrapper\nRuntimeError: boom\n', "export", "marker"),
    ("RuntimeError: input_handles[0]: unmatched dim value at 1, expected: 8, but got: 12\n", "run", "pattern"),
    # no line says where: an OOM (load, compile or run) is reported where it usually happens, and said to be that
    ("RuntimeError: Triton Error [CUDA]: out of memory\n", "run", "usual"),
    ("KeyError: 'lr'\n", None, None),
])
def test_the_phase_says_what_it_rests_on(text, phase, basis) -> None:
    result = classify_text(text)
    assert (result.phase, result.phase_basis) == (phase, basis)


def test_a_usual_phase_outside_the_rules_phases_is_refused() -> None:
    rule = load_guides()["out_of_memory"].rule.model_dump()
    with pytest.raises(ValidationError, match="usual_phase export is not one of phase"):
        Rule.model_validate({**rule, "usual_phase": "export"})


def test_a_library_load_in_a_log_with_no_compiled_model_reports_the_load_phase_but_ranks_no_package_pattern() -> None:
    # the phase (load) is reported, but what a load usually means is said of packages: it does not rank them here
    result = classify_text("ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n")
    ranked = [(a.pattern, a.source) for a in result.alternatives]
    assert result.phase == "load" and result.pattern == "native_abi"
    assert ranked[:2] == [("unknown", "rules"), ("version_skew", "rules")]  # no device_mismatch_load from the phase
    assert all(source == "similar_reports" for _p, source in ranked[2:])
    assert "device_mismatch_load" not in [p for p, source in ranked if source == "rules"]


# https://github.com/SesameAILabs/csm/issues/69: Inductor's failure, cut before what raised it
BACKEND_ASSERT = """\
W0318 17:26:58.812000 281473538087360 torch/_dynamo/convert_frame.py:1009]     raise self._exception
W0318 17:26:58.812000 281473538087360 torch/_dynamo/convert_frame.py:1009] torch._dynamo.exc.BackendCompilerFailed: \
backend='inductor' raised:
W0318 17:26:58.812000 281473538087360 torch/_dynamo/convert_frame.py:1009] AssertionError:
"""


def test_that_the_log_is_no_aoti_failure_ranks_first_without_a_compiled_model_and_second_after_a_weak_winner() -> None:
    eager = classify_text("ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n")
    assert [a.pattern for a in eager.alternatives][0] == "unknown"
    weak = classify_text(BACKEND_ASSERT)
    assert weak.pattern == "lowering_error" and weak.confidence < 0.9 and weak.phase == "compile"
    assert [a.pattern for a in weak.alternatives][1] == "unknown"
    unknown = weak.alternatives[1]
    assert unknown.confidence == round(0.5 * (1 - weak.confidence), 4)
    strong = classify_text(f"{CPU_OOB}\n\n{RUN_FUNC}\n")
    assert strong.confidence >= 0.9 and "unknown" not in [a.pattern for a in strong.alternatives]


def test_a_marker_any_program_prints_does_not_override_the_phase_of_the_failure() -> None:
    # torchvision's import warning names an undefined symbol (a load word), but the failure is an input check
    warning = ("UserWarning: Failed to load image Python extension: '/v/torchvision/image.so: undefined symbol: "
               "_ZN3c1017RegisterOperatorsD1Ev'")
    check = "RuntimeError: input_handles[0]: unmatched dim value at 1, expected: 8, but got: 12"
    result = classify_text(f"{warning}\n{check}\n")
    assert (result.pattern, result.phase) == ("input_shape_mismatch", "run")


# Other engines' own lines, quoted from their threads: a TensorRT engine's input check
# (https://github.com/QwenAudio/CosyVoice/issues/901), ggml's CUDA fault (https://github.com/ollama/ollama/issues/10265)
# and ONNX Runtime's missing provider library
# (https://github.com/freshtechyy/ONNX-Runtime-GPU-image-classifciation-example/issues/1).
TRT_SHAPE = ("[01/18/2025-11:53:18] [TRT] [E] 3: [executionContext.cpp::setInputShape::2037] Error Code 3: API Usage "
             "Error (Parameter check failed at: runtime/api/executionContext.cpp::setInputShape::2037, condition: "
             "engineDims.d[i] == dims.d[i] Static dimension mismatch while setting input shape.)")
GGML_IMA = ("CUDA error: an illegal memory access was encountered\n"
            "  current device: 0, in function ggml_cuda_op_mul_mat at "
            "C:\\a\\ollama\\ollama\\ml\\backend\\ggml\\ggml\\src\\ggml-cuda\\ggml-cuda.cu:1621")
ORT_LIB = ("[E:onnxruntime:Image classifier inference, provider_bridge_ort.cc:937 Ensure] Failed to load library "
           "libonnxruntime_providers_shared.so with error: libonnxruntime_providers_shared.so: cannot open shared "
           "object file: No such file or directory")


@pytest.mark.parametrize(("text", "reads_like"), [
    (TRT_SHAPE, "input_shape_mismatch"), (GGML_IMA, "cuda_illegal_memory_access"), (ORT_LIB, "native_abi")])
def test_another_engines_failure_with_no_word_of_torch_is_unknown_and_names_what_it_reads_like(text, reads_like):
    alone = classify_text(text + "\n")
    assert alone.pattern == "unknown" and alone.confidence == 0.5 and alone.outsider == "engine"
    assert alone.alternatives[0].pattern == reads_like
    assert alone.summary.startswith("Another engine's failure") and alone.evidence[0].pattern == "unknown"
    assert len({e.line for e in alone.evidence}) == len(alone.evidence) and alone.next_steps == []
    # the same lines in a PyTorch process (a torch frame above them) are ours again
    frame = '  File "/v/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl\n'
    ours = classify_text(frame + text + "\n")
    assert (ours.pattern, ours.outsider) == (reads_like, None)


# A Triton kernel a project wrote and launched itself, quoted from https://github.com/triton-lang/triton/issues/5205
# (Liger-Kernel's SwiGLU given a tensor left on the CPU), and Triton's own launcher build failing on Windows, quoted
# from https://github.com/woct0rdho/triton-windows/issues/83.
LIGER_CPU = """\
  File "/home/coder/Liger-Kernel/src/liger_kernel/ops/swiglu.py", line 74, in swiglu_forward
    _swiglu_forward_kernel[(n_rows,)](
  File "/usr/local/lib/python3.11/site-packages/triton/runtime/jit.py", line 345, in <lambda>
    return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)
  File "/usr/local/lib/python3.11/site-packages/triton/runtime/jit.py", line 691, in run
    kernel.run(grid_0, grid_1, grid_2, stream, kernel.function, kernel.packed_metadata, launch_metadata,
ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)
"""
TRITON_NO_PYTHON_H = """\
C:\\Users\\AnY\\AppData\\Local\\Temp\\tmp_z9f6r7d\\cuda_utils.c(12): fatal error C1083: Cannot open include file: \
'Python.h': No such file or directory
  File "H:\\ComfyUI128\\python_embeded\\Lib\\site-packages\\triton\\runtime\\jit.py", line 330, in <lambda>
    return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)
"""


def test_a_triton_kernel_launched_by_tritons_own_jit_with_no_word_of_inductor_is_not_ours() -> None:
    alone = classify_text(LIGER_CPU)
    assert alone.pattern == "unknown" and alone.confidence == 0.5 and alone.next_steps == []
    assert alone.outsider == "triton"
    assert alone.alternatives[0].pattern == "input_device_mismatch"
    assert alone.evidence[0].pattern == "unknown" and "triton/runtime/jit.py" in alone.evidence[0].text
    assert alone.summary.startswith("A Triton kernel the program launched itself")
    assert f"line {alone.evidence[0].line} is a frame of Triton's JIT" in alone.summary
    # under torch.compile (an Inductor frame above it) the same lines are ours again
    frame = '  File "/v/site-packages/torch/_inductor/runtime/triton_heuristics.py", line 1079, in run\n'
    assert classify_text(frame + LIGER_CPU).pattern == "input_device_mismatch"
    # the toolchain Triton needs is the environment's, whoever launched the kernel
    assert classify_text(TRITON_NO_PYTHON_H).pattern == "toolchain_setup"


# A user's own CMake project against libtorch, quoted from https://github.com/pytorch/pytorch/issues/121287, and an
# extension's wheel built by pip, quoted from https://github.com/oobabooga/textgen/issues/2836.
CMAKE_OPENMP = """\
[ 50%] Building CXX object CMakeFiles/example-app.dir/example-app.cpp.o
clang: error: unsupported option '-fopenmp'
make[2]: *** [CMakeFiles/example-app.dir/example-app.cpp.o] Error 1
"""
PIP_MSVC = """\
  Building wheel for quant-cuda (setup.py) ... error
  error: subprocess-exited-with-error
      building 'quant_cuda' extension
      error: Microsoft Visual C++ 14.0 or greater is required. Get it with "Microsoft C++ Build Tools": \
https://visualstudio.microsoft.com/visual-cpp-build-tools/
"""


@pytest.mark.parametrize("text", [CMAKE_OPENMP, PIP_MSVC])
def test_a_build_of_the_programs_own_native_code_with_no_word_of_inductor_is_not_ours(text) -> None:
    alone = classify_text(text)
    assert alone.pattern == "unknown" and alone.confidence == 0.5 and alone.next_steps == []
    assert alone.outsider == "build" and alone.alternatives[0].pattern == "toolchain_setup"
    assert alone.summary.startswith("A build of the program's own native code")
    # the same compiler failure with Inductor's compile above it is ours
    frame = '  File "/v/site-packages/torch/_inductor/cpp_builder.py", line 341, in run_compile_cmd\n'
    assert classify_text(frame + text).pattern == "toolchain_setup"


# Real output recorded here on 2026-11-26: g++ 12.2.0 (Debian) -Wall linking two files that define one global, and
# GNU Make 4.3 running a target that runs a program (exit 3). A CUDA fault quoted from
# https://github.com/pytorch/pytorch/issues/95542 and an OOM from https://github.com/stochasticai/xTuring/issues/140.
GPP_DUP = """\
a.cpp: In function \u2018int main()\u2019:
a.cpp:2:18: warning: unused variable \u2018y\u2019 [-Wunused-variable]
    2 | int main() { int y; return 0; }
      |                  ^
/usr/bin/ld: /tmp/cczRRBgG.o:(.data+0x0): multiple definition of `x'; /tmp/ccWJkT2A.o:(.data+0x0): first defined here
collect2: error: ld returned 1 exit status
"""
MAKE_RUN = "make: *** [Makefile:2: run] Error 3\n"
MAKE_OBJECT = "make: *** [Makefile2:2: a.o] Error 1\n"  # GNU Make 4.3 here, a rule compiling a.c failing
CLANG_OPENMP = "clang: error: unsupported option '-fopenmp'\n"  # from CMAKE_OPENMP below
INDUCTOR_CPP_ERROR = "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"  # shows a compiled model
# The compiler running out of host memory in a CMake build, quoted from https://github.com/Project-OSRM/osrm-backend/issues/1170
OSRM_HOST_OOM = """\
[ 21%] Building CXX object CMakeFiles/OSRM.dir/Library/OSRM_impl.cpp.o
virtual memory exhausted: Cannot allocate memory
make[2]: *** [CMakeFiles/OSRM.dir/Library/OSRM_impl.cpp.o] Error 1
"""
IMA_95542 = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
OOM_XTURING = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 44.00 MiB (GPU 0; 10.75 GiB total capacity; "
               "9.40 GiB already allocated; 58.62 MiB free; 9.76 GiB reserved in total by PyTorch)\n")


def test_a_plain_gcc_link_failure_shows_no_compiled_model_though_gcc_names_the_function() -> None:
    # gcc's context line ranks the compiler but marks no compiled model, so the linker's aoti_only line only ranks
    plain = classify_text(GPP_DUP)
    assert plain.pattern == "unknown" and "cpp_compile_error" in [a.pattern for a in plain.alternatives]


def test_make_failing_on_an_object_is_a_build_and_a_target_that_runs_a_program_is_not() -> None:
    built = classify_text(CLANG_OPENMP + MAKE_OBJECT)
    assert (built.pattern, built.outsider) == ("unknown", "build")
    # a target that runs a program is no build; the clang line then decides only beside a compiled model (any build
    # passing -fopenmp to Apple clang prints it, so the rule is aoti_only)
    ran = classify_text(CLANG_OPENMP + MAKE_RUN)
    assert ran.outsider is None and ran.pattern == "unknown"
    assert classify_text(INDUCTOR_CPP_ERROR + CLANG_OPENMP + MAKE_RUN).pattern == "toolchain_setup"


def test_a_device_fault_keeps_its_class_in_a_builds_log_and_the_compilers_own_oom_does_not() -> None:
    assert classify_text(CMAKE_OPENMP + IMA_95542).pattern == "cuda_illegal_memory_access"
    host = classify_text(OSRM_HOST_OOM)
    assert (host.pattern, host.outsider) == ("unknown", "build")
    assert classify_text(OOM_XTURING).pattern == "out_of_memory"  # alone, the same OOM pattern decides


def test_the_triton_outsider_decides_however_many_lines_of_another_outsider_follow() -> None:
    frame = '  File "/v/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl\n'
    # TensorRT's and ONNX Runtime's lines, defused by the frame, fill more than the evidence window after the launch
    crowded = classify_text(LIGER_CPU + (TRT_SHAPE + "\n") * 5 + (ORT_LIB + "\n") * 5 + frame)
    assert crowded.pattern == "unknown" and crowded.summary.startswith("A Triton kernel the program launched itself")
    # with no torch word, the outsider whose line comes first names the log
    both = classify_text(TRT_SHAPE + "\n" + LIGER_CPU)
    assert both.pattern == "unknown" and both.summary.startswith("Another engine's failure")


def test_an_outsiders_keeps_are_what_lets_its_pattern_stand(monkeypatch) -> None:
    from aoti_debug.classify import context
    triton = next(o for o in context.outsiders() if o.name == "triton")
    assert classify_text(TRITON_NO_PYTHON_H).pattern == "toolchain_setup"
    monkeypatch.setattr(triton, "keeps", [])
    assert classify_text(TRITON_NO_PYTHON_H).pattern == "unknown"


def test_a_word_of_inductor_cut_by_a_chunk_boundary_still_makes_a_triton_launch_ours() -> None:
    frame = '  File "/v/site-packages/torch/_inductor/runtime/triton_heuristics.py", line 1079, in run\n'
    data = (frame + LIGER_CPU).encode()
    cut = data.index(b"inductor") + 3
    assert classify_chunks([data[:cut], data[cut:]]).pattern == "input_device_mismatch"
    assert classify_chunks([data[data.index(b"  File \"/home"):]]).pattern == "unknown"


# xFormers' import-time warning, quoted from https://github.com/invoke-ai/InvokeAI/issues/4788
XFORMERS_BUILT_FOR = """\
WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.0.1+cu118 with CUDA 1108 (you have 2.0.1+cpu)
    Python  3.10.11 (you have 3.10.11)
"""


def test_xformers_built_for_another_torch_is_the_diagnosis_alone_and_yields_to_any_other_cause() -> None:
    assert classify_text(XFORMERS_BUILT_FOR).pattern == "version_skew"
    # xFormers falls back and the program goes on: a later failure of the compiled model is the diagnosis
    later = XFORMERS_BUILT_FOR + INDUCTOR_CPP_ERROR + CMAKE_OPENMP.splitlines()[1] + "\n"
    assert classify_text(later).pattern == "toolchain_setup"
    assert classify_text(XFORMERS_BUILT_FOR + OOM_XTURING).pattern == "out_of_memory"


def test_a_word_of_torch_cut_by_a_chunk_boundary_still_makes_the_log_pytorchs() -> None:
    frame = '  File "/v/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl\n'
    data = (frame + TRT_SHAPE + "\n").encode()
    cut = data.index(b"torch") + 2
    assert classify_chunks([data[:cut], data[cut:]]).pattern == "input_shape_mismatch"
    # cut in three, or with an empty chunk between the halves
    assert classify_chunks([data[:cut], data[cut:cut + 1], data[cut + 1:]]).pattern == "input_shape_mismatch"
    assert classify_chunks([data[:cut], b"", data[cut:]]).pattern == "input_shape_mismatch"
    assert classify_chunks([data[data.index(b"[01/"):]]).pattern == "unknown"


def test_draft_exports_report_of_fake_kernels_ranks_custom_op_but_never_hides_the_failure() -> None:
    # a draft_export that went on warns of ops with no fake kernel (torch/export/_draft_export.py, log.warning)
    warning = "While tracing we found 1 operator(s) which do not have a fake kernel registered."
    oom = "RuntimeError: Triton Error [CUDA]: out of memory"
    assert classify_text(f"{warning}\n{oom}\n").pattern == "out_of_memory"
    alone = classify_text(warning + "\n")  # alone it is at most a best guess, below a decisive line
    assert "custom_op" in {alone.pattern, *(a.pattern for a in alone.alternatives)} and alone.confidence < 0.5


@pytest.mark.spawns
def test_a_line_two_regexes_capture_gives_the_first_listed_ones_value_under_any_hash_seed() -> None:
    # https://github.com/deepspeedai/DeepSpeed/issues/1852: both the named and the generic CUDA-error regex match;
    # which capture won used to follow the order a hash-seeded set of needles was tried in
    line = "**RuntimeError: CUDA error: an illegal memory access was encountered**"
    code = ("import sys; from aoti_debug.classify.engine import classify_text; "
            "print(classify_text(sys.argv[1]).fields['cuda_error'])")
    server = str(Path(__file__).resolve().parent.parent / "server")
    got = {subprocess.run([sys.executable, "-c", code, line], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": server}).stdout.strip()
           for seed in range(6)}
    assert got == {"an illegal memory access was encountered"}


def test_a_pattern_named_by_agreeing_weak_cues_is_flagged_as_a_best_guess_and_a_decided_one_is_not() -> None:
    # intel/torch-xpu-ops#3187: only Inductor's exception, wrapping a NotImplementedError, and no line of its own
    guessed = classify_dev_case("intel/torch-xpu-ops#3187-1")
    assert guessed.pattern == "lowering_error" and guessed.guess and guessed.confidence <= 0.45, guessed
    assert "Best guess:" in guessed.summary
    # pytorch/pytorch#153955: export's data-dependent guard error decides by its own line
    decided = classify_dev_case("pytorch/pytorch#153955-1")
    assert decided.pattern == "export_failure" and not decided.guess and decided.confidence >= 0.5, decided
