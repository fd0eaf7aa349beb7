"""The divergence check reads level-2 printer output as the GPU writes it (no compile here: a kept H200 log)."""

from __future__ import annotations

from pathlib import Path

from aoti_debug.kernels.divergence import parse_log

CUDA_LOG = Path(__file__).parent / "fixtures" / "gpu_printer" / "stale_constants_level2.log"


def test_a_scalar_record_glued_to_the_next_header_does_not_hide_the_kernels_output() -> None:
    # torch 2.11's CUDA printer ends a scalar record in a literal backslash-n with the next header on that line:
    # the batch-norm kernel's after-launch buf0 must keep its own shape and stats, not those of the next record.
    inputs, launches = parse_log(CUDA_LOG)
    assert inputs == ["arg7_1"]
    bn = launches[0]
    assert "batch_norm" in bn.kernel
    assert bn.after["buf0"].shape == [4, 8]
    assert bn.after["buf0"].stats["min"] == 0.0  # the ReLU's output
    assert [L.kernel for L in launches[1:]] == ["triton_poi_fused_1", "aoti_torch_cuda_addmm_out"]
    assert launches[1].after["buf1"].shape == [4]
