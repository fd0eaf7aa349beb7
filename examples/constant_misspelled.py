"""Planted bug: load_constants with a misspelled constant name.

The model is Linear(4, 3, bias=False): the package's one constant is ``lin.weight``. After loading
the package the script replaces the weight with ``load_constants``, but spells it ``lin.wieght``.

CPU and CUDA: ``RuntimeError: Constant not found: lin.wieght`` from load_constants.
"""

import torch
from _common import build_or_load, parse_args, report


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 3, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


def main() -> None:
    args = parse_args("constant_misspelled", __doc__)
    dev = args.device
    model = Model().to(dev).eval()
    x = torch.randn(2, 4, device=dev)
    compiled = build_or_load(args, model, (x,))

    # The bug: 'lin.wieght' is not a constant of the package ('lin.weight' is).
    new = {"lin.wieght": torch.zeros(3, 4, device=dev)}
    compiled.load_constants(new, check_full_update=True)
    report(compiled(x))


if __name__ == "__main__":
    main()
