"""Planted bug: a model compiled for one device type, loaded for another.

``--mode aot_load`` (the default, unless ``--package`` ends in ``.pt2``): the deprecated API.
``torch._export.aot_compile`` builds a ``.so`` for ``--device``, then
``torch._export.aot_load(so_path, device=<the other device>)`` loads it on the other device type.
The caller picks the device, nothing checks it. Expected on a GPU host (torch 2.11, H200): SIGSEGV
with no message after the deprecation banner. On a CPU-only host (torch 2.13+cpu), ``--device cpu``
loaded on ``cuda`` raises an AttributeError (observed: see examples.yaml).

``--mode package`` (implied by ``--package X.pt2``; the device is always ``cuda``): a CUDA ``.pt2``
loaded with ``aoti_load_package`` on a host without a usable GPU. Build it on a GPU host, then
load it elsewhere::

    python examples/load_device_mismatch.py --mode package              # GPU host: builds, runs fine
    python examples/load_device_mismatch.py --load-only \\
        --package aoti_example_load_device_mismatch_cuda.pt2            # CPU-only host: fails

Any CUDA ``.pt2`` works for the second step. Expected: ``Found no NVIDIA driver on your system``
(CUDA build, no driver), ``Torch not compiled with CUDA enabled`` (``+cpu`` build), or a
no-GPU error under ``CUDA_VISIBLE_DEVICES=``.
"""

import os
import shutil

import torch
from _common import compile_package, parse_args, print_package, report


def add_flags(parser):
    parser.add_argument(
        "--mode",
        choices=["aot_load", "package"],
        default=None,
        help="deprecated aot_compile/aot_load, or a CUDA .pt2 package "
        "(default: package if --package ends in .pt2, else aot_load)",
    )


def make_model(dev: str) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(dev).eval()


def resolve_mode(args) -> str:
    """Fill in ``--mode`` (from the --package suffix) and return the package suffix."""
    if args.mode is None:
        args.mode = "package" if str(args.package or "").endswith(".pt2") else "aot_load"
    if args.mode == "package":
        args.device = "cuda"  # the point of this mode is a CUDA package
    return ".so" if args.mode == "aot_load" else ".pt2"


def aot_load_mode(args) -> None:
    dev = args.device
    other = "cuda" if dev == "cpu" else "cpu"
    model = make_model(dev)
    x = torch.randn(4, 8, device=dev)
    if args.load_only:
        if not args.package.is_file():
            raise SystemExit(f"error: --load-only but no shared library at {args.package}")
    else:
        args.package.parent.mkdir(parents=True, exist_ok=True)
        so_path = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": str(args.package)})
        if os.path.abspath(so_path) != str(args.package):  # older versions may ignore output_path
            shutil.copy2(so_path, args.package)
    print_package(args.package)
    if args.build_only:
        return

    # The bug: a .so compiled for `dev`, loaded for the other device type.
    runner = torch._export.aot_load(str(args.package), device=other)
    out = runner(x.to(other))
    report(out)


def package_mode(args) -> None:
    model = make_model("cuda" if not args.load_only else "cpu")
    x = torch.randn(4, 8)
    path = compile_package(args, model, (x.to("cuda"),) if not args.load_only else (x,))
    if args.build_only:
        return
    # The bug (on a host without a usable GPU): loading a package compiled for CUDA.
    compiled = torch._inductor.aoti_load_package(str(path))
    out = compiled(x.to("cuda"))
    report(out)


def main() -> None:
    args = parse_args(
        "load_device_mismatch",
        __doc__,
        extra=add_flags,
        suffix=resolve_mode,
    )
    if args.mode == "aot_load":
        aot_load_mode(args)
    else:
        package_mode(args)


if __name__ == "__main__":
    main()
