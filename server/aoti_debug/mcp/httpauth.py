"""Bearer-token authentication and bind checks for the streamable HTTP transport (pure ASGI, no MCP import).

Whoever can call the tools can run code in the roots (rerun_with_flags is code execution by design), so HTTP
requires `Authorization: Bearer <token>`: generated at the first start into <data home>/http_token (mode 0600),
or read from --auth-token-file. A non-loopback bind needs the token and --allow-remote.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
import socket
import stat
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from aoti_debug.common.errors import BadInput
from aoti_debug.common.roots import state_dir

TOKEN_FILE = "http_token"
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = ("localhost",)

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def default_token_file() -> Path:
    return state_dir() / TOKEN_FILE


def _read_private(path: Path) -> str:
    """The token in path; BadInput unless it is a regular file of ours that only we can read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise BadInput(f"cannot read the token file {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(f"token file {path} is not a regular file")
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise BadInput(f"token file {path} must belong to you and be readable by you alone (chmod 600 {path})")
        token = f.read(4096).decode("utf-8", errors="replace").strip()
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise BadInput(f"token file {path} must hold one token of at least {MIN_TOKEN_CHARS} characters")
    return token


def load_token(token_file: str | Path | None) -> tuple[str, Path, bool]:
    """(token, its file, created now): the given file, else <data home>/http_token, generated when absent."""
    if token_file is not None:
        path = Path(token_file).expanduser()
        return _read_private(path), path, False
    path = default_token_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return _read_private(path), path, False
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token, path, True


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool) -> None:
    """A non-loopback bind exposes code execution to the network: only with --allow-remote (and the token)."""
    if not is_loopback(host) and not allow_remote:
        raise BadInput(f"--host {host} is not a loopback address: anyone who reaches it with the token can run "
                       "code as you. Pass --allow-remote to bind it anyway (the bearer token stays required)")


def allowed_hosts(host: str) -> list[str]:
    """Host header values (any port) for the addresses actually bound: loopback, plus the bound address, or for a
    wildcard bind this machine's names and addresses."""
    names = ["127.0.0.1", "localhost", "[::1]"]
    if not is_loopback(host):
        wildcard = host in ("0.0.0.0", "::", "")
        extra = [socket.gethostname(), socket.getfqdn()] if wildcard else [host]
        if wildcard:
            try:
                extra += socket.gethostbyname_ex(socket.gethostname())[2]
            except OSError:
                pass
        names += [f"[{h}]" if ":" in h and not h.startswith("[") else h for h in extra]
    return list(dict.fromkeys(names))


def allowed(host: str) -> dict[str, list[str]]:
    """TransportSecuritySettings' allowed_hosts and allowed_origins for a bind address (any port)."""
    hosts = allowed_hosts(host)
    return {"allowed_hosts": [f"{h}:*" for h in hosts],
            "allowed_origins": [f"{s}://{h}:*" for h in hosts for s in ("http", "https")]}


def prepare(host: str, token_file: str | None, allow_remote: bool, no_auth: bool) -> str | None:
    """Check the bind, load (or create) the token and say on stderr where it is; SystemExit with one line if
    the configuration is refused. None: --no-auth on loopback."""
    try:
        check_bind(host, allow_remote)
        if no_auth and not is_loopback(host):
            raise BadInput("--no-auth is for a loopback bind only")
        if no_auth:
            print("aoti-debug: WARNING: HTTP without authentication (--no-auth): every local user can run code as "
                  "you through this server", file=sys.stderr)
            return None
        token, path, created = load_token(token_file)
    except BadInput as exc:
        raise SystemExit(f"aoti-debug serve: {exc}") from None
    print(f"aoti-debug: HTTP clients must send 'Authorization: Bearer <token>'; the token is in {path}"
          + (" (generated now)" if created else ""), file=sys.stderr)
    return token


class BearerAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`; 401 otherwise."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        got = b""
        for key, value in scope.get("headers", []):
            if key.lower() == b"authorization":
                got = value
                break
        if hmac.compare_digest(got, self._expected):  # constant time: no guessing the token byte by byte
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized", "error_description": "send Authorization: Bearer <token> "
                           "(the token is in the server's token file)"}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
