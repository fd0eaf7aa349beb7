"""Planted bug: inputs on the wrong device for the package (needs a GPU).

``--device`` is the device the package is compiled for; the input is then moved to the other
one. Default ``cuda``: a CUDA package called with a CPU tensor. ``--device cpu``: a CPU package
called with a CUDA tensor.

Expected baseline (H200, torch 2.11, CUDA package): the first extern call fails in the shim with
``Expected all tensors to be on the same device, but got ... cpu ...``. The CPU-package direction
is unverified (the CPU shim may raise a device error, or dereference device memory and crash).
With ``AOTI_RUNTIME_CHECK_INPUTS=1`` (run time):
``input_handles[0]: unmatched device type, expected: 11(cuda), but got: 0`` (or ``00(cpu) ... 1``).
"""

import torch
from _common import build_or_load, parse_args, report


def main() -> None:
    args = parse_args("input_device_mismatch", __doc__, default_device="cuda")
    if not torch.cuda.is_available():
        raise SystemExit("error: this example needs a GPU in both directions")
    dev = args.device
    other = "cpu" if dev == "cuda" else "cuda"
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(dev).eval()
    x = torch.randn(4, 8, device=dev)
    compiled = build_or_load(args, model, (x,))

    # The bug: the input lives on the other device.
    bad_x = x.to(other)
    out = compiled(bad_x)
    report(out)


if __name__ == "__main__":
    main()
