"""aoti-debug serve [--transport stdio|streamable-http] [--host H] [--port N] [--root DIR]..."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="Run the MCP server (stdio by default)")
    p.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (keep it on localhost)")
    p.add_argument("--port", type=int, default=3001)
    p.add_argument("--root", action="append", default=[], metavar="DIR",
                   help="Allowed root for paths clients name (repeatable; also $AOTI_DEBUG_ROOTS; default: cwd)")
    return p


def run(args: argparse.Namespace) -> int:
    from aoti_debug.app import serve  # MCP is imported only by this subcommand
    from aoti_debug.roots import configured_roots

    serve(args.transport, args.host, args.port, configured_roots(args.root))
    return 0
