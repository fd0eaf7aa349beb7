"""aoti-debug guide [ID] : list the guides or print one."""

from __future__ import annotations

import argparse

from aoti_debug.guides import get_guide, load_guides


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="List the guides, or print one by id")
    p.add_argument("id", nargs="?", help="Guide id (a pattern id or a workflow guide)")
    return p


def run(args: argparse.Namespace) -> int:
    if args.id is None:
        for g in load_guides().values():
            print(f"{g.id:28} {g.kind:8} {g.title}")
        return 0
    print(get_guide(args.id).text, end="")
    return 0
