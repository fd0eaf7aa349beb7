"""A custom op's registration where the package runs: a probe in the target Python (probes/op_probe.py) and the
built libraries under the project that carry the op's schema."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from aoti_debug.runs.probe import PROBES, RUNTIME_TIMEOUT_S

MAX_LIBS = 500
MAX_LIB_BYTES = 256 * 2**20
SKIP_DIRS = {"node_modules", "__pycache__", ".git"}
LIB_RX = re.compile(r"\.(?:so(?:\.\d+)*|dylib|pyd)$")


class OpFacts(BaseModel):
    """What a fresh `import torch` in the target Python knows of the op."""

    op: str
    python: str
    registered: bool | None = Field(None, description="None: the probe could not tell")
    schemas: list[str] = Field(default_factory=list)
    registered_at: list[str] = Field(default_factory=list, description="Where the dispatcher says it was registered")
    error: str | None = None

    def sentence(self) -> str:
        if self.registered:
            return (f"a fresh `import torch` in {self.python} registers {self.op}"
                    + (f" (at {self.registered_at[0]})" if self.registered_at else ""))
        if self.registered is False:
            return (f"a fresh `import torch` in {self.python} does not register {self.op}: only importing its "
                    "module or loading its library does")
        return f"could not probe {self.op} in {self.python}: {self.error}"


def probe(python: str, op: str) -> OpFacts:
    """Run probes/op_probe.py in the target Python through the one subprocess wrapper."""
    from aoti_debug.runs import proc

    with tempfile.TemporaryDirectory(prefix="aoti-op-") as tmp:
        out = Path(tmp) / "op.json"
        r = proc.run(proc.ProcSpec(argv=[python, str(PROBES / "op_probe.py"), str(out), op],
                                   timeout_s=RUNTIME_TIMEOUT_S, stdout_tty=False,
                                   env_overrides={"PYTHONWARNINGS": "ignore"}))
        try:
            data = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            why = "timed out" if r.timed_out else r.spawn_error or f"exit {r.returncode}"
            return OpFacts(op=op, python=python, error=f"the probe failed ({why})")
    reg = data.get("registered") if "error" not in data else None
    return OpFacts(op=op, python=python, registered=reg, schemas=data.get("schemas") or [],
                   registered_at=data.get("registered_at") or [], error=data.get("error"))


def libraries_with(op: str, folder: Path) -> list[str]:
    """Shared libraries under folder whose bytes hold the op's schema name (`ns::name`): a built C++ op library the
    process must load (torch.ops.load_library); bounded, environments and hidden folders pruned."""
    needle = op.encode()
    found, seen = [], 0
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and "site-packages" not in d)
        for f in sorted(files):
            if not LIB_RX.search(f) or f.endswith(".wrapper.so"):  # a package's own wrapper is no op library
                continue
            p = Path(top) / f
            seen += 1
            if seen > MAX_LIBS:
                return found
            try:
                if p.is_file() and p.stat().st_size <= MAX_LIB_BYTES and needle in p.read_bytes():
                    found.append(str(p.relative_to(folder)))
            except OSError:
                continue
    return found
