"""Running the server: stdio, or streamable HTTP behind the bearer token on a loopback bind (httpauth.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio

from aoti_debug.mcp.app import build_server


def serve(transport: str = "stdio", host: str = "127.0.0.1", port: int = 3001, roots: list[Path] | None = None,
          *, token_file: str | None = None, allow_remote: bool = False, no_auth: bool = False) -> None:
    """Run the server (stdout: protocol only); HTTP needs the bearer token and a loopback bind (httpauth.py)."""
    from aoti_debug.mcp import httpauth
    from aoti_debug.runs import proctree

    logging.basicConfig(level=logging.WARNING, format="aoti-debug %(levelname)s %(message)s")
    logging.getLogger("aoti_debug.runs").setLevel(logging.INFO)  # every command the server runs is logged
    proctree.adopt_orphans()  # what a run's dead leader leaves behind becomes ours to find and kill
    token = httpauth.prepare(host, token_file, allow_remote, no_auth) if transport != "stdio" else None
    mcp = build_server(roots)
    if transport == "stdio":
        mcp.run("stdio")
        return
    import copy

    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings
    from uvicorn.config import LOGGING_CONFIG

    # uvicorn's access log goes to stdout by default; this server keeps stdout for protocol only.
    log_config = copy.deepcopy(LOGGING_CONFIG)
    for handler in log_config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, **httpauth.allowed(host))
    app = mcp.streamable_http_app(host=host, transport_security=security)
    asgi = app if token is None else httpauth.BearerAuth(app, token)
    config = uvicorn.Config(asgi, host=host, port=port, log_level="warning", log_config=log_config)
    anyio.run(uvicorn.Server(config).serve)
