"""aoti-debug explain-oob PACKAGE --log FILE [--kernel K] [--model M] [--json]"""

from __future__ import annotations

import argparse
import sys

from aoti_debug.cli._out import emit
from aoti_debug.common.errors import BadInput
from aoti_debug.common.logread import file_chunks
from aoti_debug.kernels.index_oob import explain_index_oob
from aoti_debug.kernels.index_oob_model import OobExplanation


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name, help="Explain 'index out of bounds: 0 <= tmpN < X' from the package's sources: kernel, call site, "
                   "input dimension, guards, root cause and fixes",
        description="PACKAGE is the .pt2, the folder it was extracted to, or the TORCHINDUCTOR_CACHE_DIR of the "
                    "build. Exit 0 when explained, 1 when only partly or not at all, 2 on bad input.")
    p.add_argument("package", help="The .pt2, an extracted package folder, or an inductor cache folder")
    p.add_argument("--log", required=True, metavar="FILE", help="The failing run's output (stderr included), or -")
    p.add_argument("--kernel", help="The failing kernel when several hold the same assertion")
    p.add_argument("--model", help="Model folder under data/aotinductor/ (default: model)")
    p.add_argument("--json", action="store_true", help="Print the OobExplanation model as JSON")
    return p


def human(e: OobExplanation) -> str:  # type: ignore[override]
    return f"status: {e.status}  root cause: {e.root_cause}\n\n{e.markdown}"


def run(args: argparse.Namespace) -> int:
    if args.log == "-":
        if sys.stdin.isatty():
            raise BadInput("standard input is a terminal: pipe the log in, or pass --log FILE")
        chunks = iter(lambda: sys.stdin.buffer.read(1 << 20), b"")
    else:
        try:
            open(args.log, "rb").close()
        except OSError as exc:
            raise BadInput(f"cannot read the log {args.log!r}: {exc.strerror}") from exc
        chunks = file_chunks(args.log)
    result = explain_index_oob(args.package, chunks, kernel=args.kernel, model=args.model)
    emit(result, args.json, human)
    return 0 if result.status == "explained" else 1
