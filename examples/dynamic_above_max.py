"""Planted bug: a dynamic dimension exported with ``max=64``, called with 100.

The model is a scaled softmax over the last (dynamic) dimension of ``x`` (input 0), exported
with ``Dim("seq", min=2, max=64)``, then called with a sequence length of 100 and compared with
eager. Nothing guards the maximum unless ``AOTI_RUNTIME_CHECK_INPUTS=1`` is set at run time
(``input_handles[0]: dim value is too large at 1, expected to be <= 64, but got: 100``).

CPU: the C++ kernels loop to the runtime size, so the result is still right (observed: exit 0).
CUDA: Inductor sizes a persistent-reduction block from the exported maximum (``R0_BLOCK``
= 64), so a longer row is only partly reduced and written; expected: the comparison with eager
fails (``AssertionError: Tensor-likes are not close!``). Unverified until the GPU capture.
"""

import torch
from _common import build_or_load, parse_args, report

MAX_SEQ = 64


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x * 0.5, dim=-1)


def main() -> None:
    args = parse_args("dynamic_above_max", __doc__)
    dev = args.device
    model = Model()
    x = torch.randn(4, 16, device=dev)
    seq = torch.export.Dim("seq", min=2, max=MAX_SEQ)
    compiled = build_or_load(args, model, (x,), dynamic_shapes=({1: seq},))

    # The bug: sequence length 100 > the exported maximum of 64.
    bad_x = torch.randn(4, 100, device=dev)
    out = compiled(bad_x)
    report(out)
    torch.testing.assert_close(out, model(bad_x), rtol=1e-4, atol=1e-4)
    print("matches eager")


if __name__ == "__main__":
    main()
