"""Planted bug: a slice by a data-dependent `.item()` value makes Inductor write invalid C++.

The model keeps the first ``n`` rows of x (input index 0), where ``n`` is read from input 1 with
``.item()``. Export accepts it (``torch._check`` bounds the unbacked size), but the generated
wrapper.cpp does not compile on CPU (torch 2.13): ``'None' was not declared in this scope``.
The fault is in the generated code, not in any user C++: change the model (avoid the data-dependent
slice, e.g. mask instead of slicing) or report it upstream with the generated source.
"""

import torch
from _common import build_or_load, parse_args, report


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        k = n.item()
        torch._check(k >= 0)
        torch._check(k <= x.shape[0])
        return x[:k] * 2


def main() -> None:
    args = parse_args("item_slice_codegen", __doc__)
    dev = args.device
    x = torch.randn(8, 4, device=dev)
    n = torch.tensor(3, device=dev)
    compiled = build_or_load(args, Model(), (x, n))
    report(compiled(x, n))


if __name__ == "__main__":
    main()
