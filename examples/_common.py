"""Shared plumbing for the planted-bug examples: arguments, build-or-load, the package line.

Every example runs as

    python examples/<name>.py [--device cpu|cuda] [--package PATH] [--load-only]

It exports a tiny model with ``torch.export.export``, AOT-compiles it with
``torch._inductor.aoti_compile_and_package`` into ``PATH`` (default
``<cwd>/aoti_example_<name>_<device>.pt2``), prints ``package: <absolute path>``, loads it with
``torch._inductor.aoti_load_package`` and then calls it the wrong way. Failures are not caught.

``--load-only`` skips export and compilation and loads an existing package: compile-time switches
(``AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER``, ``TORCHINDUCTOR_NAN_ASSERTS``) then have no effect.

The environment is respected: nothing here overrides an inductor config that an environment
variable controls (``TORCHINDUCTOR_CACHE_DIR``, printer flags, NaN asserts, ``CXX``...).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

SEED = 0


def parse_args(
    name: str,
    doc: str | None = None,
    devices: Sequence[str] = ("cpu", "cuda"),
    default_device: str | None = None,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
    suffix: str | Callable[[argparse.Namespace], str] = ".pt2",
) -> argparse.Namespace:
    """Parse the common flags; ``args.package`` is an absolute Path, ``args.name`` the example name.

    ``suffix`` is the package file suffix (a function of the parsed args where it depends on a
    flag): ``.pt2`` except for the deprecated ``aot_compile`` path, which writes a ``.so``.
    """
    parser = argparse.ArgumentParser(
        prog=f"examples/{name}.py",
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--device",
        choices=list(devices),
        default=default_device or devices[0],
        help="device the package is compiled for (default: %(default)s)",
    )
    parser.add_argument(
        "--package",
        metavar="PATH",
        help=f"package path (default: <cwd>/aoti_example_{name}_<device>.pt2)",
    )
    parser.add_argument(
        "--load-only",
        action="store_true",
        help="do not export/compile; load the existing package at --package",
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="export and compile the package, print its path, and exit without running it",
    )
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    args.name = name
    sfx = suffix(args) if callable(suffix) else suffix
    if args.package is None:
        args.package = Path.cwd() / f"aoti_example_{name}_{args.device}{sfx}"
    args.package = Path(os.path.abspath(args.package))
    if args.package.suffix != sfx:
        parser.error(f"--package must end in {sfx}: {args.package}")
    if args.device == "cuda" and not args.load_only and not torch.cuda.is_available():
        parser.error("--device cuda needs a CUDA build of torch and a GPU")
    torch.manual_seed(SEED)
    return args


def print_package(path: str | os.PathLike[str]) -> None:
    print(f"package: {os.path.abspath(path)}", flush=True)


def compile_package(
    args: argparse.Namespace,
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    dynamic_shapes: Any = None,
    inductor_configs: dict[str, Any] | None = None,
) -> Path:
    """Export and AOT-compile ``model`` into ``args.package`` unless ``--load-only``; print the package line."""
    if args.load_only:
        if not args.package.is_file():
            sys.exit(f"error: --load-only but no package at {args.package}")
    else:
        args.package.parent.mkdir(parents=True, exist_ok=True)
        ep = torch.export.export(model, example_inputs, dynamic_shapes=dynamic_shapes)
        path = torch._inductor.aoti_compile_and_package(
            ep, package_path=str(args.package), inductor_configs=inductor_configs
        )
        args.package = Path(os.path.abspath(path))
    print_package(args.package)
    return args.package


def build_or_load(
    args: argparse.Namespace,
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    dynamic_shapes: Any = None,
    inductor_configs: dict[str, Any] | None = None,
) -> Callable[..., Any]:
    """Compile (unless ``--load-only``) and load the package; returns the callable model."""
    path = compile_package(args, model, example_inputs, dynamic_shapes, inductor_configs)
    if getattr(args, "build_only", False):
        sys.exit(0)
    return torch._inductor.aoti_load_package(str(path))


def report(out: torch.Tensor) -> None:
    """Print a short, deterministic summary of an output (``.item()`` also synchronizes CUDA)."""
    print(f"output: shape={tuple(out.shape)} dtype={out.dtype} sum={out.float().sum().item():.4f}", flush=True)
