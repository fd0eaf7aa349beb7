"""Planted bug: an id far past an Embedding's rows, in a package built without the indirect-index check.

The model adds the float features (input index 0) to an embedding of int64 ids (input index 1)
from a 100-row table. It is compiled with ``assert_indirect_indexing=False`` (Inductor then drops
the ``index out of bounds`` check from the generated kernel), then called with an id of 10**12.

CPU:  the generated C++ kernel ``cpp_fused_add_embedding_0`` reads terabytes past the table and the
      process dies with SIGSEGV and no message; a native backtrace's frame #0 is that kernel.
CUDA: the Triton kernel reads past the table: ``an illegal memory access was encountered``;
      compute-sanitizer names the kernel, the printer the input that holds the id.
"""

import torch
from _common import build_or_load, parse_args, report

NUM_EMBEDDINGS = 100
BAD_ID = 10**12


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(NUM_EMBEDDINGS, 16)

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        return x + self.emb(ids)


def main() -> None:
    args = parse_args("embedding_unchecked", __doc__)
    dev = args.device
    model = Model().to(dev).eval()
    x = torch.randn(4, 16, device=dev)
    ids = torch.tensor([1, 7, 42, 99], dtype=torch.int64, device=dev)
    compiled = build_or_load(args, model, (x, ids), inductor_configs={"assert_indirect_indexing": False})

    # The bug: id 10**12 does not exist in a 100-row table, and nothing checks it.
    bad_ids = torch.tensor([3, BAD_ID, 8, 12], dtype=torch.int64, device=dev)
    out = compiled(x, bad_ids)
    report(out)


if __name__ == "__main__":
    main()
