"""What the server publishes at start, committed: the tools' output schemas and the guide resources.

At every start the SDK would generate the JSON schemas of seven tools' pydantic models (about a quarter of a
second), after importing the engines that define them (as much again), and the guide resources need every
guide's YAML front matter parsed and validated (~80 ms with the YAML import). The server publishes this copy
instead, imports a tool's return model on its first call, and parses the guides when a tool needs them.
The guide entries are used only while the guides folder hashes to the digest stored beside them (an edited
guide or AOTI_DEBUG_DATA_ROOT pointing elsewhere: parsed afresh). tests/test_app.py checks the copy against a
fresh generation; `aoti-debug guide --write-skill` rewrites it (mcp/regenerate.py). No MCP import here: the
adapter passes its server in.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aoti_debug.common.paths import guides_digest, guides_dir

CACHE = Path(__file__).resolve().parent.parent / "data" / "start_cache.json"


def load() -> dict[str, Any] | None:
    return json.loads(CACHE.read_text()) if CACHE.is_file() else None


def output_model(path: str) -> Any:
    """'module:Class' imported."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def cached_tool(mcp: Any, cached: dict[str, dict] | None, output: str, **kw: Any) -> Callable:
    """mcp.tool(**kw) for a tool returning the model at output ('module:Class'), imported lazily.

    With the tool's schema in cached, the model is imported on the tool's first call and tools/list publishes the
    cached schema; without it, the model is imported now for the SDK to generate the schema. The function's own
    return annotation names a TYPE_CHECKING import, which the SDK could not evaluate: it is replaced.
    """
    def register(fn: Callable) -> Callable:
        named = fn.__annotations__.pop("return", None)
        if named not in (None, output.rpartition(":")[2]):  # the annotation readers see must be what is published
            raise TypeError(f"{fn.__name__} is annotated -> {named} but publishes {output}")
        if cached is None or fn.__name__ not in cached:
            fn.__annotations__["return"] = output_model(output)
            return mcp.tool(**kw)(fn)
        def resolve() -> None:  # meta is bound below, before any call
            if meta.output_model is None:
                meta.output_model = output_model(output)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def call(*args: Any, **kwargs: Any) -> Any:
                resolve()
                return await fn(*args, **kwargs)
        else:
            @functools.wraps(fn)
            def call(*args: Any, **kwargs: Any) -> Any:
                resolve()
                return fn(*args, **kwargs)

        mcp.tool(structured_output=False, **kw)(call)
        meta = _publish_schema(mcp, fn.__name__, cached[fn.__name__])
        return fn
    return register


def _publish_schema(mcp: Any, name: str, schema: dict) -> Any:
    """The one reach into the SDK's private state, and why: the public API (tool/add_tool) can only publish a
    schema it generates from an imported model, which is the start-up cost this cache avoids. FuncMetadata's fields
    are read live (its docstring says so): tools/list publishes this schema, and results are validated against the
    model once the caller sets meta.output_model, before the result is converted. tests/test_app.py guards it
    (the published tools/list equals a server built without the cache, and a call through it is validated)."""
    meta = mcp._tool_manager.get_tool(name).fn_metadata
    meta.output_schema = schema
    return meta


def guide_resources() -> list[dict[str, Any]]:
    """One entry per guide, parsed from its front matter: what the server lists as aoti-guide:// resources."""
    from aoti_debug.classify.guides import load_guides

    return [{"uri": g.uri, "name": g.id, "title": g.title, "description": g.summary, "file": g.path.name,
             "priority": 0.8 if g.kind == "pattern" else 0.6} for g in load_guides().values()]


def published_guides(cache: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The cached entries while the guides folder is the one they were made from, else parsed afresh."""
    if cache and cache.get("guides_digest") == guides_digest(guides_dir()):
        return cache["guide_resources"]
    return guide_resources()
