"""Planted bug: int32 ids fed to a package exported with int64 ids.

Same model as ``index_oob`` (embedding of input 1 into a 100-row table), exported with int64
ids, then called with ``torch.int32`` ids that are all valid (< 100). The generated kernel reads
the int32 buffer as int64, so two ids become one huge id (and it reads past the buffer).

Baseline: the misleading index assert (CPU, observed: ``index out of bounds: 0 <= tmp4 < 100L``),
as if an id were out of range. With ``AOTI_RUNTIME_CHECK_INPUTS=1`` (run time):
``input_handles[1]: unmatched dtype, expected: 4(at::kLong), but got: 3``.
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
    args = parse_args("dtype_mismatch", __doc__)
    dev = args.device
    model = Model().to(dev).eval()
    x = torch.randn(4, 8, device=dev)
    ids = torch.tensor([1, 7, 42, 99], dtype=torch.int64, device=dev)
    compiled = build_or_load(args, model, (x, ids))

    # The bug: valid ids, wrong dtype (int32 instead of the exported int64).
    bad_ids = torch.tensor([3, 50, 8, 12], dtype=torch.int32, device=dev)
    out = compiled(x, bad_ids)
    report(out)


if __name__ == "__main__":
    main()
