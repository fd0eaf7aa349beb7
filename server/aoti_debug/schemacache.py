"""The tools' output schemas, committed: the SDK would generate them from the return models at every start.

Generating the JSON schemas of seven tools' pydantic models costs about a quarter of a second per server start
(benchmarks/server_start.py). The server publishes this copy instead; tests/test_app.py checks it against a fresh
generation by the SDK, and `aoti-debug guide --write-skill` rewrites it. No MCP import here: the adapter passes
its server in.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parent / "data" / "tool_schemas.json"


def load() -> dict[str, dict] | None:
    return json.loads(SCHEMAS.read_text()) if SCHEMAS.is_file() else None


def cached_tool(mcp: Any, cached: dict[str, dict] | None, **kw: Any) -> Callable:
    """mcp.tool(**kw), with the output schema taken from the cache when it holds this tool."""
    def register(fn: Callable) -> Callable:
        if cached is None or fn.__name__ not in cached:
            return mcp.tool(**kw)(fn)
        mcp.tool(structured_output=False, **kw)(fn)
        # FuncMetadata's fields are read live (its docstring says so): results are still validated against
        # the return model, and tools/list publishes the cached schema.
        meta = mcp._tool_manager.get_tool(fn.__name__).fn_metadata
        meta.output_model = inspect.signature(fn, eval_str=True).return_annotation
        meta.output_schema = cached[fn.__name__]
        return fn
    return register


def fresh() -> dict[str, dict]:
    """Every tool's output schema as the SDK generates it (a server built without the cache)."""
    import anyio

    from aoti_debug.app import build_server

    async def listed() -> dict[str, dict]:
        server = build_server([Path.cwd()], cached_schemas=False)
        return {t.name: t.output_schema for t in await server.list_tools()}

    return anyio.run(listed)


def render(schemas: dict[str, dict]) -> str:
    return json.dumps(schemas, indent=1, sort_keys=True) + "\n"


def write() -> bool:
    """Rewrite the cache from a fresh generation; True when it changed."""
    text = render(fresh())
    if SCHEMAS.is_file() and SCHEMAS.read_text() == text:
        return False
    SCHEMAS.write_text(text)
    return True
