"""Planted bug: a package exported with static shapes, called with a different shape.

The MLP is exported with a batch of 4 (no ``dynamic_shapes``), so every size in the generated
code is a constant. The user then calls it with a batch of 6 and compares with eager, as a careful
user would.

Baseline (CPU, observed): no error from the model. ``addmm_out`` resizes its fixed-size buffer
(``Warning: An output with one or more elements was resized ...``) while the fused ReLU kernel
still only touches the first 4 rows, so rows 4-5 come back without the ReLU: the comparison
with eager fails with a generic ``AssertionError: Tensor-likes are not close!``.

``--wrong width`` feeds 12 features instead of 8: then the ``addmm`` shim call fails with
``mat1 and mat2 shapes cannot be multiplied (4x12 and 8x16)``, which names no input.

With ``AOTI_RUNTIME_CHECK_INPUTS=1`` (run time) the package says what is wrong:
``input_handles[0]: unmatched dim value at 0, expected: 4, but got: 6``.
"""

import torch
from _common import build_or_load, parse_args, report


def add_flags(parser):
    parser.add_argument(
        "--wrong",
        choices=["batch", "width"],
        default="batch",
        help="which dimension of the input is wrong (default: %(default)s)",
    )


def main() -> None:
    args = parse_args("static_shape_mismatch", __doc__, extra=add_flags)
    dev = args.device
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(dev).eval()
    x = torch.randn(4, 8, device=dev)
    compiled = build_or_load(args, model, (x,))  # static shapes: batch 4 is baked in

    # The bug: a batch of 6 (or 12 features) for a package exported with x of shape [4, 8].
    bad_x = torch.randn(6, 8, device=dev) if args.wrong == "batch" else torch.randn(4, 12, device=dev)
    out = compiled(bad_x)
    report(out)
    with torch.no_grad():
        expected = model(bad_x)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    print("matches eager")


if __name__ == "__main__":
    main()
