"""aoti-debug get-run RUN_ID [--json]: a finished rerun's result, read from its run directory."""

from __future__ import annotations

import argparse

from aoti_debug.cli import triage as triage_cli
from aoti_debug.cli._out import emit
from aoti_debug.cli.rerun import human
from aoti_debug.triage.record import get_run


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="Show a rerun's or a triage's result by run id")
    p.add_argument("run_id")
    p.add_argument("--json", action="store_true", help="Print the RunResult model as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    r = get_run(args.run_id)
    emit(r, args.json, lambda m: triage_cli.human(r.triage) if r.triage else human(m))  # a triage run shows its chain
    return 0
