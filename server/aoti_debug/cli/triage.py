"""aoti-debug triage [--package P] [--log FILE] [--json] [--report FILE] -- CMD ...; or --example [NAME]."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from aoti_debug.cli._out import add_roots, emit, pairs
from aoti_debug.common.errors import BadInput
from aoti_debug.common.roots import configured_roots
from aoti_debug.triage import examples
from aoti_debug.triage.engine import triage
from aoti_debug.triage.model import DEFAULT_BUDGET_S, DEFAULT_RUN_TIMEOUT_S, TriageReport, TriageRequest

EXIT_MISMATCH = 1


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="Run the whole triage: baseline, classify, the guide's next steps; explain the crash",
                       description="Examples: aoti-debug triage -- python repro.py | aoti-debug triage --log run.log "
                                   "--package model.pt2 | aoti-debug triage --example (the bundled index_oob demo)")
    p.add_argument("--package", metavar="P", help="The .pt2 (default: found in the command's output)")
    p.add_argument("--log", metavar="FILE", help="An existing log of the failure (alone: offline triage, no reruns)")
    p.add_argument("--exit-status", type=int, metavar="N", help="The logged run's exit status (139: SIGSEGV)")
    p.add_argument("--evidence", action="append", default=[], metavar="STEP=FILE",
                   help="A log you already have for a step (backtrace=gdb.log, memcheck=..., sanity=..., "
                        "dump_kernel_inputs=printer.log); repeatable")
    p.add_argument("--load-cmd", metavar="CMD", help="A faster command that only loads the built package "
                   "(e.g. 'python repro.py --load-only'), for run-time-only reruns")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, metavar="S", help="Total seconds for every step")
    p.add_argument("--timeout", type=float, default=DEFAULT_RUN_TIMEOUT_S, metavar="S", help="Limit per run")
    p.add_argument("--cwd", help="Working directory (default: the first root)")
    add_roots(p)
    p.add_argument("--no-capture", action="store_true",
                   help="Run the baseline exactly as given, without the calls capture runner")
    p.add_argument("--no-probe", action="store_true",
                   help="Do not compare the package with this machine's torch (the log came from another machine)")
    p.add_argument("--example", nargs="?", const=examples.DEFAULT_EXAMPLE, metavar="NAME",
                   help=f"Triage a bundled planted-bug example in a temporary folder and check the diagnosis "
                        f"(default {examples.DEFAULT_EXAMPLE})")
    p.add_argument("--device", default="cpu", help="For --example: cpu (default) or cuda")
    p.add_argument("--python", help="For --example: the Python with torch (default: this one)")
    p.add_argument("--list-examples", action="store_true", help="List the bundled examples and exit")
    p.add_argument("--json", action="store_true", help="Print the TriageReport model as JSON")
    p.add_argument("--report", metavar="FILE", help="Also write the markdown crash explanation to FILE")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command and its arguments")
    return p


def list_examples() -> str:
    rows = []
    for ex in examples.manifest().values():
        cpu = examples.expectation(ex, "cpu")
        exp = f"{cpu.get('pattern')} / {cpu.get('root_cause')}" if cpu else "(cuda only)"
        star = " (default)" if ex.name == examples.DEFAULT_EXAMPLE else ""
        ok = "" if ex.runnable else "  [needs a set-up host]"
        rows.append(f"{ex.name}{star}  [{', '.join(ex.devices)}]  {ex.bug}\n    expected on cpu: {exp}{ok}")
    return "\n".join(rows)


def human(r: TriageReport) -> str:  # type: ignore[override]
    lines = [r.markdown, "", f"triage run {r.run_id}: {r.status}, stopped: {r.stopped_because}"
             + (f" ({r.stopped_detail})" if r.stopped_detail else "")]
    for s in r.steps:
        what = s.skipped_because if s.status == "skipped" else "; ".join(s.found[:2])
        lines.append(f"  {s.index}. {s.tool}{' ' + s.preset if s.preset else ''} [{s.status}, {s.cost_s:.0f} s]"
                     + (f" run {s.run_id}" if s.run_id else "") + f": {what}")
    if r.example:
        lines.append(f"example {r.example.name}: {'MATCH' if r.example.match else 'MISMATCH'}"
                     + ("" if r.example.match else " - " + "; ".join(r.example.differences)))
    return "\n".join(lines)


def _progress():
    last = [""]
    t0 = time.monotonic()

    def note(elapsed: float, nbytes: int, message: str) -> None:
        head = message.split(" (", 1)[0]
        if head != last[0]:
            last[0] = head
            print(f"[{time.monotonic() - t0:5.0f} s] {head}", file=sys.stderr, flush=True)

    return note


def run(args: argparse.Namespace) -> int:
    if args.list_examples:
        print(list_examples())
        return 0
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if args.example:
        if cmd or args.log:
            raise BadInput("--example runs a bundled example: give no command and no --log")
        report = examples.run_example(args.example, device=args.device, python=args.python, budget_s=args.budget,
                                      note=_progress())
    else:
        if not cmd and not args.log:
            raise BadInput("nothing to triage: aoti-debug triage [options] -- python repro.py, or --log FILE, "
                           "or --example")
        evidence = pairs(args.evidence, "--evidence", "STEP=FILE, e.g. backtrace=gdb.log")
        req = TriageRequest(argv=cmd or None, load_argv=shlex.split(args.load_cmd) if args.load_cmd else None,
                            log_path=args.log, exit_status=args.exit_status, package_path=args.package,
                            evidence_logs=evidence, cwd=args.cwd, budget_s=args.budget,
                            timeout_s=args.timeout, probe_runtime=not args.no_probe,
                            capture_calls=not args.no_capture)
        report = triage(req, configured_roots(args.root), note=_progress())
    if args.report:
        Path(args.report).write_text(report.markdown + "\n", encoding="utf-8")
    emit(report, args.json, human)
    if report.example is not None and not report.example.match:
        return EXIT_MISMATCH
    return 0 if report.status == "done" else EXIT_MISMATCH
