"""aoti-debug dump-kernels [--kernels a,b] [--level N] [--timeout S] [--json] -- CMD ARGS..."""

from __future__ import annotations

import argparse
import sys

from aoti_debug.cli._out import add_roots, emit, progress_line
from aoti_debug.common.errors import BadInput
from aoti_debug.common.roots import configured_roots
from aoti_debug.kernels.dump import dump_kernel_inputs
from aoti_debug.kernels.model import DEFAULT_PASS_TIMEOUT_S, DumpRequest, DumpResult
from aoti_debug.kernels.printer_log import TensorRecord

MAX_LAUNCHES = 6


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="Rebuild with the intermediate value printer: find the failing kernel (level 3), "
                                  "then print what went into it (level 2) and name suspects",
                       description="Example: aoti-debug dump-kernels -- python repro.py   (the repro must compile)")
    p.add_argument("--kernels", metavar="A,B", help="Print these kernels at level 2 (skips the level-3 pass)")
    p.add_argument("--level", type=int, choices=(1, 2, 3), default=2,
                   help="3: only name the failing kernel; 2: also its inputs' stats (default); 1: also save tensors")
    p.add_argument("--timeout", type=float, default=DEFAULT_PASS_TIMEOUT_S, metavar="S", help="Limit per pass")
    p.add_argument("--cwd", help="Working directory (default: the first root)")
    add_roots(p)
    p.add_argument("--json", action="store_true", help="Print the DumpResult model as JSON")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command and its arguments")
    return p


def _stats(r: TensorRecord | None) -> str:
    if r is None:
        return "-"
    if not r.complete:
        return "(cut short)"
    if r.value is not None:
        return str(r.value)
    flags = (" NaN" if r.nan else "") + (" Inf" if r.inf else "")
    rng = f" min {r.min:g} max {r.max:g} mean {r.mean:g}" if None not in (r.min, r.max, r.mean) else ""
    return f"{r.dtype or '?'}{r.shape or ''} {r.device or ''}{rng}{flags}".strip()


def human(r: DumpResult) -> str:  # type: ignore[override]
    lines = [f"status:     {r.status}", f"summary:    {r.summary}"]
    if r.failing_kernel:
        lines.append(f"failing:    {r.failing_kernel} ({r.failing_kernel_from})")
    if r.last_kernels:
        lines.append(f"launched:   ... {' > '.join(r.last_kernels[-5:])}")
    if r.printed_kernels:
        lines.append(f"printed:    {', '.join(r.printed_kernels)}")
    for i, m in enumerate(r.model_inputs):
        lines.append(f"input {i}:    {m.arg}: {_stats(m)}")
    for L in r.launches[-MAX_LAUNCHES:]:
        lines.append(f"launch #{L.ordinal} {L.kernel}" + ("" if L.finished else "  (never finished)"))
        lines += [f"  {a.arg:14} {a.role:7} before: {_stats(a.before)}   after: {_stats(a.after)}" for a in L.args]
        if L.scalars:
            lines.append("  scalars: " + ", ".join(f"{k}={v}" for k, v in L.scalars.items()))
    lines += [f"suspect:    [{s.kind}] {s.detail}" for s in r.suspects]
    if r.explanation:
        lines += ["", r.explanation.markdown, ""]
    for s in r.saved_tensors[:20]:
        lines.append(f"saved:      {s.path}" + ("  *" if s.relevant else ""))
    for p in r.passes:
        lines.append(f"pass {p.level}:     run {p.run_id} {p.status} ({p.duration_s:.0f} s, {p.records} records, "
                     f"{p.unparsed_lines} unparsed lines) log {p.log_path}")
    lines += [f"warning:    {w}" for w in r.warnings]
    lines.append(f"next:       {r.next_step}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise BadInput("no command: aoti-debug dump-kernels [options] -- python repro.py ...")
    kernels = [k.strip() for k in (args.kernels or "").split(",") if k.strip()]
    req = DumpRequest(argv=cmd, cwd=args.cwd, kernels=kernels, level=args.level, timeout_s=args.timeout)
    tty = sys.stderr.isatty()
    result = dump_kernel_inputs(req, configured_roots(args.root), note=progress_line if tty else None)
    if tty:
        print(file=sys.stderr)
    emit(result, args.json, human)
    return 0
