"""Real AOTI packages for the tests: built by the examples' own scripts, once per torch version, cached on disk."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BUILD = ROOT / "tests" / ".build"
# A CPU compile of a tiny model takes 20-40 s on a 2-core machine; more means something hangs.
BUILD_TIMEOUT_S = 600


def torch_version(python: str = sys.executable) -> str:
    out = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                         text=True, check=True, timeout=120)
    return out.stdout.strip()


def _key(script: Path, extra: list[str], env: dict[str, str]) -> str:
    h = hashlib.sha256()
    for p in sorted([script, EXAMPLES / "_common.py"]):
        if p.exists():
            h.update(p.read_bytes())
    h.update(repr((extra, sorted(env.items()))).encode())
    return h.hexdigest()[:12]


def build_example(name: str, *extra: str, env: dict[str, str] | None = None, device: str = "cpu") -> Path:
    """Compile examples/<name>.py's package (--build-only) unless a cached copy exists; return the .pt2."""
    env = env or {}
    script = EXAMPLES / f"{name}.py"
    folder = BUILD / torch_version()
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{name}-{device}-{_key(script, list(extra), env)}.pt2"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # pytest-xdist workers build one at a time
        if not out.exists():
            tmp = out.with_suffix(".tmp.pt2")
            cache = folder / f"cache-{out.stem}"
            proc = subprocess.run(
                [sys.executable, str(script), "--device", device, "--package", str(tmp), "--build-only", *extra],
                cwd=folder, env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache), **env},
                capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
            )
            if proc.returncode != 0 or not tmp.exists():
                tail = f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
                raise RuntimeError(f"building {name} failed ({proc.returncode}):\n{tail}")
            tmp.rename(out)
    return out
