"""The start cache generated afresh from a server built without it: what `aoti-debug guide --write-skill` writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aoti_debug.common.paths import guides_digest, guides_dir
from aoti_debug.mcp.startcache import CACHE, guide_resources


def fresh() -> dict[str, Any]:
    """The cache's content generated afresh: the SDK's own output schemas (a server built without the cache)."""
    import anyio

    from aoti_debug.mcp.app import build_server

    async def listed() -> dict[str, dict]:
        server = build_server([Path.cwd()], cached=False)
        return {t.name: t.output_schema for t in await server.list_tools()}

    return {"guides_digest": guides_digest(guides_dir()), "guide_resources": guide_resources(),
            "output_schemas": anyio.run(listed)}


def render(content: dict[str, Any]) -> str:
    return json.dumps(content, indent=1, sort_keys=True) + "\n"


def write() -> bool:
    """Rewrite the cache from a fresh generation; True when it changed."""
    text = render(fresh())
    if CACHE.is_file() and CACHE.read_text() == text:
        return False
    CACHE.write_text(text)
    return True
