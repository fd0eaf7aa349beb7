"""Planted bug: the package uses a Python custom op that the process running it never registers.

The model calls ``aoti_examples::scaled_add`` (``torch.library.custom_op`` with a fake kernel), so
the package runs it through the proxy executor. The build registers the op; the script then hands
the package to a fresh serving process (itself with ``--load-only``), which loads it without
importing the code that defines the op, as a server that only loads packages would.

CPU and CUDA: ``Could not find schema for aoti_examples::scaled_add. Custom operators created via
torch.library.custom_op cannot be run via AOTI without Python environment...`` while loading.
"""

import os
import sys

import torch
from _common import compile_package, parse_args, report

OP = "aoti_examples::scaled_add"


def define_op() -> None:
    """Register the op (what `import my_ops` does in a real project)."""

    @torch.library.custom_op(OP, mutates_args=())
    def scaled_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + 2 * y

    @scaled_add.register_fake
    def _(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.ops.aoti_examples.scaled_add(x.relu(), y) * 3


def main() -> None:
    args = parse_args("custom_op_unloaded", __doc__)
    dev = args.device
    x, y = torch.randn(4, 8, device=dev), torch.randn(4, 8, device=dev)
    if not args.load_only:
        define_op()
        path = compile_package(args, Model(), (x, y))
        if args.build_only:
            return
        # The serving process: the same script, loading only, never defining the op.
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), "--load-only", "--device", dev,
                                  "--package", str(path)])
    # The bug: nothing in this process registers aoti_examples::scaled_add (no define_op / import).
    compile_package(args, Model(), (x, y))
    compiled = torch._inductor.aoti_load_package(str(args.package))
    report(compiled(x, y))


if __name__ == "__main__":
    main()
