"""aoti-debug serve [--transport stdio|streamable-http] [--host H] [--port N] [--root DIR]... [--auth-token-file F]
[--allow-remote] [--no-auth]"""

from __future__ import annotations

import argparse

from aoti_debug.cli._out import add_roots


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="Run the MCP server (stdio by default)")
    p.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (loopback unless --allow-remote)")
    p.add_argument("--port", type=int, default=3001)
    add_roots(p, "Allowed root for paths clients name (repeatable; also $AOTI_DEBUG_ROOTS; default: cwd)")
    p.add_argument("--auth-token-file", metavar="F", default=None,
                   help="HTTP: the bearer token clients must send (a 0600 file); default: <data home>/http_token, "
                        "generated at the first start")
    p.add_argument("--allow-remote", action="store_true",
                   help="HTTP: allow a non-loopback --host (the token stays required): whoever has the token can "
                        "run code as you")
    p.add_argument("--no-auth", action="store_true",
                   help="HTTP on loopback without a token (every local user can then run code as you)")
    return p


def run(args: argparse.Namespace) -> int:
    from aoti_debug.common.roots import configured_roots
    from aoti_debug.mcp.serve import serve  # MCP is imported only by this subcommand

    serve(args.transport, args.host, args.port, configured_roots(args.root), token_file=args.auth_token_file,
          allow_remote=args.allow_remote, no_auth=args.no_auth)
    return 0
