"""Planted bug: a slice by a data-dependent `.item()` value makes Inductor write invalid C++.

The model keeps the first ``n`` rows of x (input index 0), where ``n`` is read from input 1 with
``.item()`` and never bounded. Export accepts it, but the wrapper Inductor generates does not
compile on CPU (torch 2.13): ``int64_t u1_st_index = None < 0 ? None + 8L : None;`` and g++ says
``'None' was not declared in this scope``. The fault is in the generated code, not in any C++ of the
user: change the model (bound the value with ``torch._check(0 <= n <= x.shape[0])``, which compiles,
or mask instead of slicing) and report it upstream with the generated source.
"""

import torch
from _common import build_or_load, parse_args, report


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        # The bug's trigger: an unbounded data-dependent slice end.
        return x[: n.item()] * 2


def main() -> None:
    args = parse_args("item_slice_codegen", __doc__)
    dev = args.device
    x = torch.randn(8, 4, device=dev)
    n = torch.tensor(3, device=dev)
    compiled = build_or_load(args, Model(), (x, n))
    report(compiled(x, n))


if __name__ == "__main__":
    main()
