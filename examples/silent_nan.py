"""Planted bug: NaN outputs that nothing reports (a row normalised by its own sum, and one row sums to zero).

The model scales each row of its features by the row's sum, then applies a linear layer. Row 1 of the call's
input is all zeros (a padding row from the data pipeline), so ``x / x.sum(dim=1)`` is 0/0 = NaN for that row and
the NaN flows to the output. The script writes the result out and exits 0, as a batch job would: no error,
no assert, nothing printed about NaN.

- The capture runner (rerun preset ``calls``, triage's baseline) records the call's output statistics: NaN in
  output 0 although the run passed; the input shows the zero row (``zeros`` count).
- ``AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=2`` at compile time: the fused div kernel's ``after_launch``
  record shows ``nan`` statistics while its input has none.
"""

import torch
from _common import build_or_load, parse_args


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x / x.sum(dim=1, keepdim=True))


def main() -> None:
    args = parse_args("silent_nan", __doc__)
    dev = args.device
    model = Model().to(dev).eval()
    x = torch.rand(4, 8, device=dev) + 0.1  # rows with positive sums
    compiled = build_or_load(args, model, (x,))

    # The bug: row 1 is an all-zero padding row, so its sum is 0 and the division makes NaN.
    batch = torch.rand(4, 8, device=dev) + 0.1
    batch[1] = 0.0
    out = compiled(batch)
    torch.save(out.cpu(), "silent_nan_out.pt")
    print(f"wrote {out.shape[0]} rows to silent_nan_out.pt")


if __name__ == "__main__":
    main()
