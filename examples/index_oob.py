"""Planted bug: an embedding lookup with an id past the end of the table.

The model embeds int64 ids (input index 1) into a 100-row table and adds a projection of the
float features (input index 0). It is compiled correctly, then called with ids containing 500.

CPU:  the generated C++ kernel's bounds check raises ``index out of bounds: 0 <= tmpN < 100L``.
CUDA: the Triton kernel's ``tl.device_assert`` fires (``Assertion `index out of bounds: 0 <= tmpN < 100` failed``).
"""

import torch
from _common import build_or_load, parse_args, report

NUM_EMBEDDINGS = 100


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 16)
        self.emb = torch.nn.Embedding(NUM_EMBEDDINGS, 16)

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.proj(x)) + self.emb(ids)


def main() -> None:
    args = parse_args("index_oob", __doc__)
    dev = args.device
    model = Model().to(dev).eval()
    x = torch.randn(4, 8, device=dev)
    ids = torch.tensor([1, 7, 42, 99], dtype=torch.int64, device=dev)
    compiled = build_or_load(args, model, (x, ids))

    # The bug: id 500 does not exist in a 100-row table.
    bad_ids = torch.tensor([3, 500, 8, 12], dtype=torch.int64, device=dev)
    out = compiled(x, bad_ids)
    report(out)


if __name__ == "__main__":
    main()
