"""Server cold start to the tools/list answer over stdio, beside a minimal MCPServer with one tool.

    python benchmarks/server_start.py [--runs 7]

Each run spawns a fresh process and times spawn -> initialize -> tools/list with the SDK's stdio
Client, the servers in turn. Target (issue 2): aoti-debug within 1.15x of the minimal server; torch never
imported. The third line is aoti-debug without its committed start cache (the SDK generating the output schemas
from the engines' models, the guides' front matter parsed).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

MINIMAL = '''
from mcp.server import MCPServer
mcp = MCPServer("minimal")
@mcp.tool()
def echo(text: str) -> str:
    """Echo."""
    return text
mcp.run("stdio")
'''


async def _once(command: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as client:
        tools = (await client.list_tools()).tools
    return time.perf_counter() - start, len(tools)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        minimal = Path(tmp) / "minimal.py"
        minimal.write_text(MINIMAL)
        generated = (f"from pathlib import Path; from aoti_debug.mcp.app import build_server; "
                     f"build_server([Path({tmp!r})], cached=False).run('stdio')")
        servers = {
            "minimal MCPServer (1 tool)": [sys.executable, str(minimal)],
            "aoti-debug serve": [sys.executable, "-m", "aoti_debug", "serve", "--root", tmp],
            "  same, without start cache": [sys.executable, "-c", generated],
        }
        runs: dict[str, list[tuple[float, int]]] = {name: [] for name in servers}
        for cmd in servers.values():
            anyio.run(_once, cmd)  # warm the OS file cache once
        for _ in range(args.runs):  # round robin, so that drift in the machine's load hits every server alike
            for name, cmd in servers.items():
                runs[name].append(anyio.run(_once, cmd))
        medians = {}
        for name, got in runs.items():
            medians[name] = statistics.median(t for t, _ in got)
            print(f"{name:28} median {medians[name] * 1000:7.0f} ms over {args.runs} runs ({got[0][1]} tools)")
    probe = ("import sys, aoti_debug.mcp.app as a; a.build_server(); "
             "print('torch imported' if 'torch' in sys.modules else 'torch not imported')")
    probed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    print("server process:", probed.stdout.strip())
    ours, base = medians["aoti-debug serve"], medians["minimal MCPServer (1 tool)"]
    print(f"ratio: {ours / base:.2f} (target <= 1.15)")


if __name__ == "__main__":
    main()
