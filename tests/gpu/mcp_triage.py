#!/usr/bin/env python3
"""The MCP server on a GPU host, driven by the MCP SDK's stdio client: triage of CUDA examples over MCP.

    PYTHONPATH=<carried wheels>:server python tests/gpu/mcp_triage.py OUT_DIR [--budget S] [EXAMPLE ...]

Starts `python -m aoti_debug serve --root WORK` as a stdio subprocess (the server never imports torch;
the repros run in this Python and inherit the server's environment: CXX=/usr/bin/g++, except a second
server for toolchain_segfault, which keeps the host's compiler), lists the tools, then triages the named
CUDA examples at once, each in its own folder: the first with wait=true and progress notifications,
the others with wait=false and get_run polling. For
every rerun step it reads the run's log resource (aoti-run://<id>/log, and .../memcheck for memcheck
steps). Writes OUT_DIR/mcp_triage.json (per example: the progress messages, the structured result,
the resources read and their sizes, wall time) and OUT_DIR/mcp_triage.md (a table). Needs mcp and its
dependencies importable and torch with CUDA.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from aoti_debug.triage import examples  # noqa: E402
from aoti_debug.triage.model import TriageReport  # noqa: E402
from triage_suite import child_env, keeps_host_cxx  # noqa: E402

POLL_S = 2.0
DEFAULT = ["index_oob", "ima_triton", "static_shape_mismatch", "toolchain_segfault"]


def _text(contents) -> str:
    return "".join(getattr(c, "text", "") or "" for c in contents)


async def _resources(client: Client, steps: list[dict]) -> list[dict]:
    read = []
    for s in steps:
        if not s.get("run_id"):
            continue
        for name in ("log", "memcheck") if s.get("preset") == "memcheck" else ("log",):
            uri = f"aoti-run://{s['run_id']}/{name}"
            try:
                text = _text((await client.read_resource(uri)).contents)
                read.append({"uri": uri, "chars": len(text), "sanitizer_lines": text.count("=========")})
            except Exception as e:  # a missing resource is a finding, not a crash of this script
                read.append({"uri": uri, "error": f"{type(e).__name__}: {e}"})
    return read


async def _triage(client: Client, name: str, work: Path, budget: float, wait: bool, device: str) -> dict:
    argv, load_argv = examples.command(examples.get(name), device, sys.executable)
    args = {"argv": argv, "load_argv": load_argv, "cwd": str(work), "budget_s": budget, "wait": wait}
    seen: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    t0 = time.monotonic()
    r = await client.call_tool("triage", args, progress_callback=progress)
    polls = 0
    if r.is_error:
        return {"example": name, "error": _text(r.content), "wall_s": round(time.monotonic() - t0, 1)}
    out = r.structured_content
    if not wait:
        run_id = out["run_id"]
        while True:
            got = (await client.call_tool("get_run", {"run_id": run_id})).structured_content
            polls += 1
            if got["status"] != "running":
                break
            await anyio.sleep(POLL_S)
        out = got["triage"]
    check = examples.check(examples.get(name), device, TriageReport.model_validate(out))
    return {"example": name, "wait": wait, "wall_s": round(time.monotonic() - t0, 1), "progress": seen,
            "get_run_polls": polls, "pattern": out["pattern"], "initial_pattern": out["initial_pattern"],
            "root_cause": out["root_cause"], "stopped_because": out["stopped_because"],
            "tool_calls": out["tool_calls"], "match": check.match, "differences": check.differences,
            "steps": [{k: s.get(k) for k in ("index", "tool", "preset", "status", "cost_s", "run_id", "found")}
                      for s in out["steps"]],
            "resources": await _resources(client, out["steps"]), "markdown": out["markdown"]}


def _server(work: Path, home: Path, host_cxx: bool) -> StdioServerParameters:
    """One stdio server; its repros inherit its environment, CXX=/usr/bin/g++ included unless host_cxx."""
    env = child_env(host_cxx, AOTI_DEBUG_HOME=str(home), PYTHONUNBUFFERED="1")
    return StdioServerParameters(command=sys.executable, args=["-m", "aoti_debug", "serve", "--root", str(work)],
                                 env=env)


async def main_async(out: Path, names: list[str], budget: float, device: str) -> dict:
    """One server for the examples built with the system compiler, another for HOST_CXX ones; each example in its
    own folder (two examples may share a script and its package path)."""
    work = Path(tempfile.mkdtemp(prefix="aoti_mcp_triage.")).resolve()
    rows: list[dict] = [{}] * len(names)
    tools: list[str] = []
    for name in names:
        shutil.copytree(ROOT / "examples", work / name / "examples")

    async def serve(host_cxx: bool) -> None:
        mine = [(i, n) for i, n in enumerate(names) if keeps_host_cxx(n) == host_cxx]
        if not mine:
            return
        async with Client(_server(work, work / ("home_host_cxx" if host_cxx else "home"), host_cxx),
                          raise_exceptions=True) as client:
            tools[:] = sorted(t.name for t in (await client.list_tools()).tools)

            async def one(i: int, name: str) -> None:
                rows[i] = await _triage(client, name, work / name, budget, (i == 0), device)

            async with anyio.create_task_group() as tg:
                for i, name in mine:
                    tg.start_soon(one, i, name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve, False)
        tg.start_soon(serve, True)
    result = {"tools": tools, "rows": rows}
    (out / "mcp_triage.json").write_text(json.dumps(result, indent=2))
    return result


def env_line() -> str:
    import torch  # this script is the client side: the server it starts never imports torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"torch {torch.__version__} (cuda {torch.version.cuda}), {gpu}; host CXX={os.environ.get('CXX', '(unset)')}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("examples", nargs="*", default=DEFAULT)
    ap.add_argument("--budget", type=float, default=400.0)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run on a machine without a GPU")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    rows = anyio.run(main_async, a.out, a.examples, a.budget, a.device)["rows"]
    lines = [env_line(), f"MCP stdio triage, wall {time.monotonic() - t0:.0f} s", "",
             "| Example | Call | Diagnosis | Root cause | Match | Tool calls | Progress | Resources read | Wall s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| `{r['example']}` | - | tool error: {r['error']} | - | NO | - | - | - | {r['wall_s']} |")
            continue
        rc = r["root_cause"]
        res = ", ".join(f"{x['uri'].split('/')[-1]} ({x.get('chars', x.get('error'))})" for x in r["resources"])
        call = "wait=true" if r["wait"] else f"wait=false, {r['get_run_polls']} polls"
        lines.append(f"| `{r['example']}` | {call} "
                     f"| {r['pattern']} | {rc['kind'] if rc else None} | {'yes' if r['match'] else 'NO'} | "
                     f"{r['tool_calls']} | {len(r['progress'])} | {res} | {r['wall_s']:.0f} |")
    (a.out / "mcp_triage.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if rows and all(r.get("match") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
