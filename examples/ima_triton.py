"""Planted bug: a user Triton kernel reads at an index taken from an input without a bounds check.

The model gathers rows of a table with a hand-written Triton kernel registered through
``torch.library.triton_op`` / ``torch.library.wrap_triton`` (exported and AOT-compiled as a
user-defined Triton kernel). The row ids (input index 1) are loaded from a tensor and used
unchecked. Compilation sees valid ids; at run time one id is 1e9, so the kernel reads ~64 GB past
the table (needs a GPU).

Expected (H200, torch 2.11): ``CUDA driver error: an illegal memory access was encountered``
(stderr ``Error: ...``; on 2.11 the Python error is the generic ``run_func_(...) API call failed``),
possibly surfacing later as ``torch.AcceleratorError``. ``compute-sanitizer --tool memcheck``
names ``gather_rows_kernel`` and the source line; level-3 printing with
``CUDA_LAUNCH_BLOCKING=1`` shows it as the last ``before_launch``.
"""

import torch
from _common import build_or_load, parse_args, report

BLOCK = 128
BAD_ROW = 1_000_000_000


def define_gather_rows() -> None:
    """Register ``torch.ops.aoti_examples.gather_rows`` (imports triton: GPU builds only)."""
    import triton
    import triton.language as tl

    @triton.jit
    def gather_rows_kernel(src_ptr, idx_ptr, out_ptr, n_cols, n_out, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n_out
        row = tl.load(idx_ptr + offs // n_cols, mask=mask, other=0)
        col = offs % n_cols
        # The bug: `row` comes from an input and is never checked against src's row count.
        val = tl.load(src_ptr + row * n_cols + col, mask=mask)
        tl.store(out_ptr + offs, val, mask=mask)

    @torch.library.triton_op("aoti_examples::gather_rows", mutates_args={})
    def gather_rows(src: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        n_cols = src.shape[1]
        out = torch.empty((idx.shape[0], n_cols), device=src.device, dtype=src.dtype)
        n_out = out.numel()
        grid = (triton.cdiv(n_out, BLOCK),)
        torch.library.wrap_triton(gather_rows_kernel)[grid](src, idx, out, n_cols, n_out, BLOCK=BLOCK)
        return out


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 16)

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        table = torch.relu(self.proj(x))
        return torch.ops.aoti_examples.gather_rows(table, ids) * 2.0


def main() -> None:
    args = parse_args("ima_triton", __doc__, devices=("cuda",))
    if not torch.cuda.is_available():
        raise SystemExit("error: this example needs a GPU")
    define_gather_rows()
    model = Model().to("cuda").eval()
    x = torch.randn(16, 8, device="cuda")
    ids = torch.tensor([1, 7, 12, 15], dtype=torch.int64, device="cuda")
    compiled = build_or_load(args, model, (x, ids))

    # The bug: a corrupted id far past the 16-row table.
    bad_ids = torch.tensor([1, BAD_ROW, 12, 15], dtype=torch.int64, device="cuda")
    out = compiled(x, bad_ids)
    report(out)


if __name__ == "__main__":
    main()
