"""aoti-debug classify [FILE|-] [--json]"""

from __future__ import annotations

import argparse
import sys

from aoti_debug.classify.engine import Classification, classify_chunks, classify_file
from aoti_debug.cli._out import emit
from aoti_debug.common.errors import BadInput
from aoti_debug.common.paths import examples_dir

SOURCE_NOTE = {"similar_reports": ", from similar reports)", "silent": ", if the failure is in the values)"}


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="Route an AOTI error log to its pattern, with evidence and next steps")
    p.add_argument("file", nargs="?", help="Log file, or - for standard input")
    p.add_argument("--example", metavar="NAME", help="Classify a bundled real log (see --list-examples)")
    p.add_argument("--list-examples", action="store_true", help="List the bundled logs")
    p.add_argument("--exit-status", help="The run's exit status or signal (139, -11, SIGSEGV)")
    p.add_argument("--json", action="store_true", help="Print the Classification model as JSON")
    return p


def bundled_logs() -> dict[str, str]:
    folder = examples_dir() / "logs"
    return {p.stem: str(p) for p in sorted(folder.glob("*.log"))} if folder.is_dir() else {}


def human(c: Classification) -> str:  # type: ignore[override]
    lines = [f"pattern:    {c.pattern}  ({c.title})", f"confidence: {c.confidence:.2f}", f"what:       {c.summary}"]
    if c.phase:
        lines.append(f"phase:      {c.phase}" + (" (usual for this pattern; no line of the log says)"
                                                   if c.phase_basis == "usual" else ""))
    if c.evidence:
        lines.append("evidence:")
        lines += [f"  line {e.line}: {e.text}" for e in c.evidence]
    if c.fields:
        lines.append("fields:     " + ", ".join(f"{k}={v}" for k, v in sorted(c.fields.items())))
    if c.alternatives:
        lines.append("also:       " + ", ".join(f"{a.pattern} ({a.confidence:.2f}"
                                                + SOURCE_NOTE.get(a.source, ")")
                                                for a in c.alternatives))
    lines += [f"reads like: {s.url} ({s.pattern}, similarity {s.similarity:.2f})" for s in c.similar_reports]
    lines.append(f"guide:      {c.guide.path}  ({c.guide.uri})")
    for s in c.next_steps:
        what = s.tool + (f" --preset {s.preset}" if s.preset else "")
        lines.append(f"next:       {what}: {s.why}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.list_examples:
        for name, path in bundled_logs().items():
            print(f"{name}\t{path}")
        return 0
    if args.example:
        logs = bundled_logs()
        if args.example not in logs:
            raise BadInput(f"no bundled log {args.example!r}; known: {', '.join(logs) or 'none'}")
        result = classify_file(logs[args.example], args.exit_status)
    elif args.file is None:
        raise BadInput("no log given: pass a FILE, - for standard input, or --example NAME")
    elif args.file == "-":
        if sys.stdin.isatty():
            raise BadInput("standard input is a terminal: pipe the log in, or pass a FILE")
        result = classify_chunks(iter(lambda: sys.stdin.buffer.read(1 << 20), b""), args.exit_status)
    else:
        result = classify_file(args.file, args.exit_status)
    emit(result, args.json, human)
    return 0
