"""Planted bug: a dynamic batch far larger than the service was sized for makes one buffer huge.

The model scales every feature of x [n, 1024] (input index 0; n = Dim("n", min=1, max=1048576))
by a [1024, 4096] weight: its output buffer holds n x 1024 x 4096 floats (16 MiB per row of x).
Compiled with n = 2, it is called with n = 12000, inside the exported range: the package asks
for 187.50 GiB.

CPU:  ``DefaultCPUAllocator: can't allocate memory: you tried to allocate 201326592000 bytes``.
CUDA: ``CUDA out of memory. Tried to allocate 187.50 GiB``.
"""

import torch
from _common import build_or_load, parse_args, report

ROWS = 12000


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(1024, 4096))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x.unsqueeze(-1) * self.scale)


def main() -> None:
    args = parse_args("oom_dynamic", __doc__)
    dev = args.device
    model = Model().to(dev).eval()
    x = torch.randn(2, 1024, device=dev)
    n = torch.export.Dim("n", min=1, max=1048576)
    compiled = build_or_load(args, model, (x,), dynamic_shapes=({0: n},))

    # The bug: 12000 rows are allowed by the export, but one row costs 16 MiB.
    out = compiled(torch.randn(ROWS, 1024, device=dev))
    report(out)


if __name__ == "__main__":
    main()
