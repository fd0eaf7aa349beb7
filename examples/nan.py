"""Planted bug: a NaN produced inside the model (log of a negative feature).

The model takes ``log`` of its (supposedly positive) features, then a linear layer. One feature
of row 2 is negative, so the fused ``log`` kernel produces a NaN that flows to the output. The
script checks the output like a user would and raises ``RuntimeError: output contains NaN``.

- ``TORCHINDUCTOR_NAN_ASSERTS=1`` at compile time: on CUDA the package checks each Triton
  kernel's outputs (expected ``At least one NaN in buf0``). On CPU (observed, torch 2.13) only
  graph inputs are checked, and the input has no NaN (just a negative value), so the package
  stays silent and the script's own check fires.
- ``AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=2`` at compile time: the ``after_launch``
  record of the ``log`` kernel shows ``Mean value: nan``; the model input shows ``Min value: -1``.
"""

import torch
from _common import build_or_load, parse_args, report


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(torch.log(x))


def main() -> None:
    args = parse_args("nan", __doc__)
    dev = args.device
    model = Model().to(dev).eval()
    x = torch.rand(4, 8, device=dev) + 0.1  # positive features
    compiled = build_or_load(args, model, (x,))

    # The bug: one feature is negative (a data-pipeline error), log() turns it into NaN.
    bad_x = torch.rand(4, 8, device=dev) + 0.1
    bad_x[2, 5] = -1.0
    out = compiled(bad_x)
    report(out)
    if torch.isnan(out).any():
        rows = torch.isnan(out).any(dim=1).nonzero().flatten().tolist()
        raise RuntimeError(f"output contains NaN (rows {rows})")
    print("output ok")


if __name__ == "__main__":
    main()
