"""Planted bug: finite wrong outputs - the package was built before the BatchNorm statistics were recalibrated.

The model is BatchNorm1d(8) -> ReLU -> Linear(8, 4) in eval mode. The script exports and compiles it, and only
then recalibrates the BatchNorm running statistics on its data (a few forward passes in train mode, a common
step before deployment). The package keeps the statistics it was compiled with (mean 0, variance 1); the eager
model has the new ones. The script compares the package's output with eager, as a careful user would:
``AssertionError: Tensor-likes are not close!`` with finite differences. No error comes from the package.

The script exposes its eager model to aoti-debug's capture runner through the documented hook (a module-level
``aoti_debug_eager``, guides/wrong_output.md): the runner then compares every captured call with eager on the
same inputs and records the statistics of each node of the eager graph, which the printer's per-kernel
statistics are matched against. The first kernel whose output diverges is the fused batch-norm kernel, its
input (the model input) agrees, and the eager node it computes reads ``bn.running_mean`` / ``bn.running_var``.
"""

import torch
from _common import build_or_load, parse_args

aoti_debug_eager = None  # bound to the eager model below, before the package is called


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(8)
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(torch.relu(self.bn(x)))


def main() -> None:
    global aoti_debug_eager
    args = parse_args("stale_constants", __doc__)
    dev = args.device
    model = Model().to(dev).eval()
    x = torch.randn(4, 8, device=dev)
    compiled = build_or_load(args, model, (x,))

    # The bug: the statistics are recalibrated after the package was built, and the package is not rebuilt.
    model.train()
    with torch.no_grad():
        for _ in range(20):
            model(torch.randn(32, 8, device=dev) * 3.0 + 2.0)
    model.eval()
    aoti_debug_eager = model

    batch = torch.randn(4, 8, device=dev) * 3.0 + 2.0
    out = compiled(batch)
    with torch.no_grad():
        expected = model(batch)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    print("matches eager")


if __name__ == "__main__":
    main()
