"""Set one MCP server entry in an agent's config (JSON mcpServers or TOML [mcp_servers.*]), keeping the rest.

Each merge returns (old text, new text); new is None when the entry is already as wanted, so a second
install rewrites nothing. A file that does not parse, or that cannot be edited without touching other
content, raises BadInput and is left alone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from aoti_debug.common.errors import BadInput
from aoti_debug.install.tomledit import render_table, replace_table

try:
    import tomllib
except ImportError:  # Python 3.10: validate with tomli when it is there, else trust the textual edit
    try:
        import tomli as tomllib  # type: ignore[no-redef]
    except ImportError:
        tomllib = None  # type: ignore[assignment]

TOML_COMMENT = "Written by `aoti-debug install`; running it again replaces this table and its sub-tables."


def _read(path: Path) -> str | None:
    if not path.exists():
        return None
    if not path.is_file():
        raise BadInput(f"{path} exists and is not a file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path} ({exc}); fix or move it, then re-run") from exc


def _dump_like(data: dict, old: str | None) -> str:
    """JSON in the old file's style: one line stays one line, else its indent; its final newline kept.

    Claude Code writes its files with 2-space indent, as json.dumps(indent=2) does, so the entries it
    wrote keep their bytes.
    """
    newline = "\n" if old is None or old.endswith("\n") else ""
    if old and old.strip() and "\n" not in old.strip():
        return json.dumps(data, ensure_ascii=False) + newline
    m = re.search(r"\n([ \t]+)\S", old or "")
    return json.dumps(data, indent=m.group(1) if m else 2, ensure_ascii=False) + newline


def merge_json(path: Path, name: str, entry: dict) -> tuple[str | None, str | None]:
    """(old text, new text or None when unchanged) of a JSON config with mcpServers[name] = entry."""
    old = _read(path)
    try:
        data = json.loads(old) if old and old.strip() else {}
    except ValueError as exc:
        raise BadInput(f"{path} is not valid JSON ({exc}); fix or move it, then re-run") from exc
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise BadInput(f"{path}: expected a JSON object with an object 'mcpServers'; fix or move it, then re-run")
    if data.get("mcpServers", {}).get(name) == entry:
        return old, None
    data.setdefault("mcpServers", {})[name] = entry
    return old, _dump_like(data, old)


def _toml(path: Path, text: str) -> dict | None:
    if tomllib is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path} is not valid TOML ({exc}); fix or move it, then re-run") from exc


def _without(doc: dict, name: str) -> dict:
    servers = dict(doc.get("mcp_servers", {}))
    servers.pop(name, None)
    rest = {k: v for k, v in doc.items() if k != "mcp_servers"}
    return {**rest, "mcp_servers": servers} if servers else rest


def merge_toml(path: Path, name: str, table: dict) -> tuple[str | None, str | None]:
    """(old text, new text or None when unchanged) with [mcp_servers.<name>] replaced or appended textually."""
    old = _read(path)
    parsed = _toml(path, old or "")
    if parsed is not None:
        if not isinstance(parsed.get("mcp_servers", {}), dict):
            raise BadInput(f"{path}: 'mcp_servers' is not a table; fix it, then re-run")
        if parsed.get("mcp_servers", {}).get(name) == table:
            return old, None
    key = ("mcp_servers", name)
    new = replace_table(old or "", key, render_table(key, table, TOML_COMMENT))
    if old is not None and new == old:
        return old, None
    if parsed is not None:
        # The check that makes a textual edit safe: our table is exactly what we meant, all else is unchanged.
        unsafe = BadInput(f"{path}: cannot replace [mcp_servers.{name}] without touching other content (an inline "
                          "table or dotted keys?); edit or remove that entry by hand, then re-run")
        try:
            after = tomllib.loads(new)
        except tomllib.TOMLDecodeError as exc:
            raise unsafe from exc
        if after.get("mcp_servers", {}).get(name) != table or _without(after, name) != _without(parsed, name):
            raise unsafe
    return old, new
