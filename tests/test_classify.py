"""The classifier engine: decides by the real cause, survives any input, streams with bounded memory."""

from __future__ import annotations

import os
import tracemalloc

import pytest
from aoti_debug.classify import classify_file, classify_text
from aoti_debug.errors import BadInput

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
