"""The printer-output parser on the committed H200 captures, on real CPU output and on hand-made edge cases."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import pytest
from aoti_debug.kernels.printer_collect import parse_chunks, parse_file, parse_text
from aoti_debug.kernels.printer_parse import CHUNK
from kernel_runs import cpu_dump
from pkgs import ROOT

LOGS = ROOT / "tests" / "fixtures" / "gpu_capture" / "logs"
TRITON_OOB = "triton_poi_fused_add_addmm_embedding_relu_0"
TRITON_DYN = "triton_poi_fused_clamp_index_mul_0"

RECORD = """[  before_launch - cpp_fused_0 - arg4_1  ]:
   3
 500
[ CPULongType{2} ]
Number of elements: 2
Dtype: long int
Mean value: 251.5
Min value: 3
Max value: 500
Device: cpu
Size: [2]
Stride: [1]
Layout: Strided
Is contiguous: 1
Requires grad: 0

"""


class TestH200Captures:
    """The real CUDA printer output (torch 2.11, Triton kernels) committed under tests/fixtures/gpu_capture."""

    def test_level3_names_the_triton_kernel_launched_last_without_finishing(self) -> None:
        log, _ = parse_file(LOGS / "index_oob.printer3.log")
        assert log.levels == [3]
        assert log.failing_kernel == TRITON_OOB
        assert log.last_kernels == ["aoti_torch_cuda_mm_out", TRITON_OOB]
        assert log.level3_launches == 2 and log.unmatched == [TRITON_OOB]
        assert log.index_asserts[0].text == "0 <= tmp9 < 100" and log.index_asserts[0].count == 8

    def test_level3_of_a_run_that_fails_after_the_model_has_no_failing_kernel(self) -> None:
        log, _ = parse_file(LOGS / "nan.printer3.log")
        assert log.failing_kernel is None and log.level3_launches == 3

    def test_level2_reads_model_inputs_and_the_long_int_dtype(self) -> None:
        log, _ = parse_file(LOGS / "index_oob.printer2_filtered.log")
        ids = {r.arg: r for r in log.model_inputs}["arg4_1"]
        assert (ids.dtype, ids.shape, ids.stride, ids.device, ids.numel) == ("int64", [4], [1], "cuda:0", 4)
        assert (ids.min, ids.max, ids.mean) == (3, 500, 130.75)
        assert log.unparsed_lines == 0

    def test_a_scalar_record_ending_in_a_literal_backslash_n_shares_its_line_with_the_next_record(self) -> None:
        log, _ = parse_file(LOGS / "index_oob.printer2_filtered.log")
        launch = log.launches[-1]
        assert launch.kernel == TRITON_OOB and launch.scalars == {"64L": 64}
        after = {a.arg: a.after for a in launch.args}["buf1"]
        assert after is not None and not after.complete  # the print failed after the device assert
        assert not launch.finished and log.unfinished_launch == TRITON_OOB
        assert log.index_asserts[0].kernel_file.endswith("cc4wllq6y2fgltfolmfhs2unzl7ezs3b5hr3qd25txwyyjzbrbgk.py:36")

    def test_a_size_argument_is_read_from_its_scalar_record(self) -> None:
        log, _ = parse_file(LOGS / "dynamic_zero_below_min.printer2_filtered.log")
        assert log.launches[-1].scalars == {"s70": 0, "12L": 12}
        table = {r.arg: r for r in log.model_inputs}["arg1_1"]
        assert table.shape == [0, 4] and table.numel == 0 and table.min is None
        assert log.index_asserts[0].bound == "ks0" and log.index_asserts[0].bound_value is None

    def test_the_first_launch_writing_nan_from_clean_inputs_is_the_producer(self) -> None:
        log, _ = parse_file(LOGS / "nan.printer2.log")
        producer = next(L for L in log.launches if L.ordinal == log.nan_producer)
        assert producer.kernel == "triton_poi_fused_log_0"
        roles = {a.arg: a.role for a in producer.args}
        assert roles == {"arg2_1": "input", "buf0": "output"}
        assert {a.arg: a.after.nan for a in producer.args}["buf0"]
        assert log.kernels == {"triton_poi_fused_log_0": 1, "triton_poi_fused_1": 1, "aoti_torch_cuda_addmm_out": 1}


@pytest.mark.compiles
@pytest.mark.spawns
@pytest.mark.timeout(1200)
class TestRealCpuOutput:
    """Printer output of a real CPU build with the printer compiled in (shared with test_dump_kernels)."""

    def test_cpu_level2_output_parses_without_unparsed_lines_and_reads_minus_nan(self) -> None:
        res, _ = cpu_dump("nan")
        combined = Path(res.passes[-1].log_path)
        printer, _ = parse_file(combined.with_name("stdout.log"))  # the printer writes only to stdout
        assert printer.levels == [2] and printer.unparsed_lines == 0 and printer.records >= 10
        log, _ = parse_file(combined)
        # combined.log interleaves the traceback by arrival: a line of it may fall inside a record, never a printer line
        stderr = combined.with_name("stderr.log").read_text()
        assert log.records == printer.records and all(s.strip() in stderr for s in log.unparsed_samples)
        producer = next(L for L in log.launches if L.ordinal == log.nan_producer)
        out = {a.arg: a.after for a in producer.args}["buf0"]
        assert producer.kernel == "cpp_fused_log_0" and out.nan and out.device == "cpu"

    def test_cpu_level3_output_names_the_cpu_kernel_that_raised(self) -> None:
        res, _ = cpu_dump("index_oob")
        log, _ = parse_file(res.passes[0].log_path)
        assert log.failing_kernel == "cpp_fused_add_embedding_relu_0"
        assert log.raised_kernel == "cpp_fused_add_embedding_relu_0" and log.raised_at.split(":")[0].endswith(
            ".kernel.cpp")
        assert log.index_asserts[0].bound_value == 100


class TestEdgeCases:
    """Shapes the real output can take: split reads, CRLF, interleaved stderr, cut-short records."""

    def test_any_split_of_the_input_gives_the_same_answer(self) -> None:
        data = (LOGS / "nan.printer2.log").read_bytes()
        whole = parse_chunks([data])[0]
        rng = random.Random(7)
        for _ in range(5):
            cuts = sorted(rng.sample(range(1, len(data)), 40))
            pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
            got = parse_chunks(pieces)[0]
            assert got.model_dump(exclude={"bytes"}) == whole.model_dump(exclude={"bytes"})

    def test_an_output_whose_garbage_already_printed_nan_is_still_blamed_on_its_kernel(self) -> None:
        clean = RECORD.replace("before_launch - cpp_fused_0 - arg4_1", "PREFIX - cpp_fused_log_0 - arg2_1")
        nan = RECORD.replace("Mean value: 251.5\nMin value: 3\nMax value: 500",
                             "Mean value: nan\nMin value: -nan\nMax value: -nan")
        nan = nan.replace("before_launch - cpp_fused_0 - arg4_1", "PREFIX - cpp_fused_log_0 - buf0")
        text = "".join(t.replace("PREFIX", p) for p in ("before_launch", "after_launch") for t in (clean, nan))
        log = parse_text(text)
        assert log.nan_producer == 0 and {a.arg: a.role for a in log.launches[0].args}["buf0"] == "output"

    def test_crlf_line_ends_are_read_like_lf(self) -> None:
        log = parse_text(RECORD.replace("\n", "\r\n"))
        assert log.launches[0].args[0].before.max == 500 and log.unparsed_lines == 0

    def test_a_stderr_line_inside_a_stats_block_is_counted_and_the_record_still_read(self) -> None:
        text = RECORD.replace("Device: cpu\n", "Device: cpu\n[W1122 resize.cpp:30] Warning: something\n")
        log = parse_text(text)
        rec = log.launches[0].args[0].before
        assert rec.max == 500 and rec.shape == [2]
        assert log.unparsed_lines == 1 and "Warning: something" in log.unparsed_samples[0]

    def test_a_record_cut_short_by_a_crash_is_kept_as_incomplete(self) -> None:
        log = parse_text(RECORD + "[  after_launch - cpp_fused_0 - arg4_1  ]:\nSegmentation fault\n")
        after = log.launches[0].args[0].after
        assert after is not None and not after.complete and log.unfinished_launch == "cpp_fused_0"

    def test_level1_saved_files_and_the_multikernel_switch_off_are_reported(self) -> None:
        saved = "/w/tmp/aoti_torchbefore_launch_k_0_buf0_cpu.pt"
        log = parse_text("MultiKernel type is not supported in AOTI debug printer tool yet.\n"
                         f"aoti_torch_save_tensor_handle: Saved tensor to {saved}\n")
        assert log.multikernel_silenced and log.saved_tensors == [saved]
        assert log.levels == [1]

    def test_a_cpu_index_message_gives_a_numeric_bound_and_the_raising_kernel(self) -> None:
        log = parse_text(RECORD + "Error: index out of bounds: 0 <= tmp4 < 100L\nException raised from "
                         "cpp_fused_0 at /c/x/abc.kernel.cpp:24 (most recent call first):\n")
        a = log.index_asserts[0]
        assert (a.tmp_var, a.lower, a.bound, a.bound_value) == ("tmp4", "0", "100L", 100)
        assert log.raised_kernel == "cpp_fused_0" and log.unfinished_launch == "cpp_fused_0"


def test_memory_stays_flat_on_output_far_larger_than_a_read(tmp_path: Path) -> None:
    body = (LOGS / "index_oob.printer2.log").read_text()
    mid = body[body.index("[  before_launch"):body.rindex("[  before_launch - triton")]
    path = tmp_path / "big.log"
    with open(path, "w") as f:
        for _ in range((12 * CHUNK) // len(mid)):
            f.write(mid)
    tracemalloc.start()
    try:
        log, _ = parse_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert path.stat().st_size > 10 * CHUNK
    assert peak < 6 * CHUNK, f"peak {peak} bytes for a {path.stat().st_size}-byte file"
    assert log.skipped_bytes > 0 and log.launches_total > 0
