"""Planted bug: an empty dimension fed to a package exported with ``min=1``.

The model picks rows of a candidate table (input 0, ``[n, 4]``, ``n`` dynamic with
``Dim("n", min=1, max=64)``) at positions ``ids`` (input 1), clamped to ``[0, n - 1]`` to be
"safe". Called with ``n = 0`` (no candidates), the clamp gives ``-1``, negative wrap-around adds
``n = 0``, and the generated kernel's indirect-indexing check fails with a *symbolic* bound:

    CPU (observed): index out of bounds: 0 <= tmp12 < ks0
    CUDA (expected): Assertion `index out of bounds: 0 <= tmpN < ks0` failed

The lower bound ``n >= 1`` is only enforced with ``AOTI_RUNTIME_CHECK_INPUTS=1`` at run time:
``input_handles[0]: dim value is too small at 0, expected it to be >= 1, but got: 0``.
``--no-lowerbound-check`` builds the package with ``aot_inductor.check_lowerbound=False``: then
not even that check exists and the index assert is all there is.
"""

import torch
from _common import build_or_load, parse_args, report


def add_flags(parser):
    parser.add_argument(
        "--no-lowerbound-check",
        action="store_true",
        help="compile with inductor_configs={'aot_inductor.check_lowerbound': False}",
    )


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(4))

    def forward(self, table: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        idx = ids.clamp(0, table.shape[0] - 1)
        return table[idx] * self.scale


def main() -> None:
    args = parse_args("dynamic_zero_below_min", __doc__, extra=add_flags)
    dev = args.device
    model = Model().to(dev).eval()
    table = torch.randn(10, 4, device=dev)
    ids = torch.tensor([0, 3, 9], device=dev)
    n = torch.export.Dim("n", min=1, max=64)
    configs = {"aot_inductor.check_lowerbound": False} if args.no_lowerbound_check else None
    compiled = build_or_load(args, model, (table, ids), dynamic_shapes=({0: n}, None), inductor_configs=configs)

    # The bug: a request with no candidates, n = 0 < the exported minimum of 1.
    empty = torch.randn(0, 4, device=dev)
    out = compiled(empty, ids)
    report(out)


if __name__ == "__main__":
    main()
