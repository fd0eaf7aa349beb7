"""aoti-debug rerun [--preset P] [--flag K=V] [--baseline] [--timeout S] [--json] -- CMD ARGS..."""

from __future__ import annotations

import argparse
import sys

from aoti_debug.cli._out import add_roots, emit, pairs, progress_line
from aoti_debug.common.errors import BadInput
from aoti_debug.common.roots import configured_roots
from aoti_debug.runs.rerun import DEFAULT_TIMEOUT_S, RerunRequest, RunResult, rerun

TAIL_LINES = 15


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="Rerun a repro with allow-listed debug flags; classify and compare the outcome",
                       description="Example: aoti-debug rerun --preset sanity --baseline -- python repro.py")
    p.add_argument("--preset", action="append", default=[], metavar="P",
                   help="sanity, deterministic, kernel_names, cpp_stacktraces, logs, trace, faulthandler, minifier, "
                        "backtrace, memcheck (repeatable)")
    p.add_argument("--flag", action="append", default=[], metavar="K=V", help="An allow-listed flag (repeatable)")
    p.add_argument("--baseline", action="store_true", help="First run without the flags, then compare")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S", help="Limit per run (seconds)")
    p.add_argument("--cwd", help="Working directory (default: the first root)")
    add_roots(p)
    p.add_argument("--no-fresh-cache", action="store_true", help="Keep the inherited TORCHINDUCTOR_CACHE_DIR")
    p.add_argument("--no-forensics", action="store_true", help="No gdb/compute-sanitizer rerun after a crash")
    p.add_argument("--json", action="store_true", help="Print the RunResult model as JSON")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command and its arguments")
    return p


def human(r: RunResult) -> str:  # type: ignore[override]
    outcome = r.signal or (f"exit {r.exit_code}" if r.exit_code is not None else "no exit")
    lines = [f"run:        {r.run_id}  status: {r.status}  ({outcome}, {r.duration_s:.1f} s)",
             f"command:    {' '.join(r.command)}"]
    if r.flags:
        lines.append("flags:      " + ", ".join(
            f"{u.name}={u.value} ({u.phase}" + {True: ")", False: ", NOT APPLIED)", None: ", unknown)"}[u.applied]
            for u in r.flags))
    if r.compile:
        lines.append(f"compiled:   {r.compile.compiled}  " + "; ".join(r.compile.evidence))
    if c := r.classification:
        lines.append(f"pattern:    {c.pattern} ({c.confidence:.2f})")
        lines += [f"evidence:   line {e.line}: {e.text}" for e in c.evidence[:4]]
    if r.baseline:
        lines.append(f"baseline:   {r.baseline.summary}")
    if f := r.forensics:
        if f.faulthandler and f.faulthandler.frames:
            top = f.faulthandler.frames[0]
            lines.append(f"python:     {f.faulthandler.fatal} in {top.function} ({top.file}:{top.line})")
        if f.backtrace:
            lines += [f"native:     #{fr.index} {fr.function} [{fr.kind}] {fr.library or ''}"
                      for fr in f.backtrace.frames[:5]]
            lines.append(f"points to:  {f.backtrace.points_to}: {f.backtrace.verdict}")
        if f.memcheck:
            lines.append(f"memcheck:   {f.memcheck.verdict}")
    if r.calls and r.calls.captured:
        lines.append(f"calls:      {r.calls.loads} load(s), {r.calls.calls} call(s)"
                     + (f"; {r.calls.died_summary}" if r.calls.died_summary else ""))
        lines += [f"non-finite: {n}" for n in r.calls.nonfinite_outputs[:4]]
    if r.artifacts:
        extra = [r.artifacts.tlparse_dir, r.artifacts.minifier_launcher, *r.artifacts.trace_logs[:1]]
        lines += [f"artifact:   {a}" for a in extra if a] + [f"note:       {n}" for n in r.artifacts.notes]
    lines += [f"warning:    {w}" for w in r.warnings]
    lines.append(f"next:       {r.next_step}")
    lines.append(f"log:        {r.log_path}")
    tail = (r.stderr_tail or r.stdout_tail).rstrip("\n").splitlines()[-TAIL_LINES:]
    if tail:
        lines.append("last lines:")
        lines += [f"  {t}" for t in tail]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise BadInput("no command: aoti-debug rerun [options] -- python repro.py ...")
    flags = pairs(args.flag, "--flag", "NAME=VALUE", empty_ok=True)
    req = RerunRequest(argv=cmd, cwd=args.cwd, presets=args.preset, flags=flags, baseline=args.baseline,
                       timeout_s=args.timeout, fresh_cache=not args.no_fresh_cache, forensics=not args.no_forensics)
    result = rerun(req, configured_roots(args.root), note=progress_line if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    emit(result, args.json, human)
    return 0
