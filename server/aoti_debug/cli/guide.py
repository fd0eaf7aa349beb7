"""aoti-debug guide [ID] : list the guides or print one."""

from __future__ import annotations

import argparse

from aoti_debug.classify.guides import get_guide, load_guides
from aoti_debug.classify.skilldoc import routing_table, write_tables


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="List the guides, or print one by id")
    p.add_argument("id", nargs="?", help="Guide id (a pattern id or a workflow guide)")
    p.add_argument("--routing-table", action="store_true", help="Print SKILL.md's routing table (from the rules)")
    p.add_argument("--write-skill", action="store_true",
                   help="Regenerate the generated files (SKILL.md routing, debug-flags.md tables, the tools' "
                   "output schemas and guide resources the server publishes at start)")
    return p


def run(args: argparse.Namespace) -> int:
    if args.routing_table:
        print(routing_table())
        return 0
    if args.write_skill:
        from aoti_debug.mcp import regenerate  # builds the MCP server once to generate the schemas

        changed = write_tables() + (["server/aoti_debug/data/start_cache.json"] if regenerate.write() else [])
        print("updated: " + ", ".join(changed) if changed else "generated tables already current")
        return 0
    if args.id is None:
        for g in load_guides().values():
            print(f"{g.id:28} {g.kind:8} {g.title}")
        return 0
    print(get_guide(args.id).text, end="")
    return 0
