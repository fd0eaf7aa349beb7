"""How rules of different patterns settle a log between them (yields_to, aoti_only, the compiled-model cues), on real
reports of the corpus's dev split and on the guides' own source-derived example lines."""

from __future__ import annotations

from aoti_debug.classify.engine import classify_text
from aoti_debug.classify.guides import load_guides
from corpus_cases import classify_dev_case as classify_case


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
