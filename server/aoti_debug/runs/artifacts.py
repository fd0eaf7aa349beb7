"""What a rerun left behind: whether it compiled, TORCH_TRACE logs (and tlparse on them), the minifier launcher."""

from __future__ import annotations

import getpass
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from aoti_debug.runs import proc
from aoti_debug.runs.flags import FlagUse

# Files only code generation writes into an inductor cache: AOTI sources, torch.compile output code and
# Triton kernels (.py), GPU binaries. Plain .cpp/.so are not: loading a package builds a CPU-ISA probe there.
CODEGEN_SUFFIXES = (".wrapper.cpp", ".kernel.cpp", ".wrapper.so", ".py", ".cubin", ".hsaco", ".spv")
# Bound the cache walk: a shared cache can hold many thousands of files.
MAX_WALK = 20000
# mtime granularity and clock skew between us and the child's writes.
MTIME_SLACK_S = 1.0
# tlparse on a large trace takes seconds; more means something is wrong.
TLPARSE_TIMEOUT_S = 120.0
_LAUNCHER = re.compile(r"(/\S*minifier_launcher\.py)")


class CompileCheck(BaseModel):
    """Did the run generate code? Compile-time flags act only if it did."""

    compiled: bool | None = Field(description="True: code was generated (compile-time flags acted); False: the "
                                  "command only loaded a prebuilt package; None: cannot tell")
    cache_dir: str | None = Field(None, description="The TORCHINDUCTOR_CACHE_DIR the run used")
    fresh_cache: bool = False
    evidence: list[str] = Field(default_factory=list)


class Artifacts(BaseModel):
    run_dir: str
    trace_dir: str | None = None
    trace_logs: list[str] = Field(default_factory=list, description="TORCH_TRACE logs the run wrote")
    tlparse_dir: str | None = Field(None, description="tlparse's output (index.html) when tlparse is installed")
    minifier_launcher: str | None = Field(None, description="minifier_launcher.py written by DUMP_AOTI_MINIFIER")
    notes: list[str] = Field(default_factory=list)


def _value(uses: list[FlagUse], name: str) -> str | None:
    return next((u.value for u in uses if u.name == name), None)


def default_cache_dir() -> Path:
    """torch's default: <tempdir>/torchinductor_<user>."""
    user = re.sub(r'[\\/:*?"<>|]', "_", getpass.getuser())
    return Path(tempfile.gettempdir()) / f"torchinductor_{user}"


def _new_files(folder: Path, since: float) -> list[Path]:
    found, seen = [], 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            seen += 1
            if seen > MAX_WALK:
                return found
            if name.endswith(CODEGEN_SUFFIXES):
                p = Path(dirpath) / name
                try:
                    if p.stat().st_mtime >= since - MTIME_SLACK_S:
                        found.append(p)
                except OSError:
                    continue
    return found


def check_compile(uses: list[FlagUse], fresh: bool, cwd: Path, command: list[str], start_wall: float) -> CompileCheck:
    """Look for generated code in the run's inductor cache and for .pt2 files the command names and rewrote."""
    given = _value(uses, "TORCHINDUCTOR_CACHE_DIR") or os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    cache = Path(given) if given else default_cache_dir()
    check = CompileCheck(compiled=None, cache_dir=str(cache), fresh_cache=fresh)
    new = _new_files(cache, start_wall) if cache.is_dir() else []
    if new:
        wrappers = [p for p in new if p.name.endswith("wrapper.cpp")]
        check.evidence.append(f"{len(new)} generated files in {cache}" +
                              (f", e.g. {wrappers[0]}" if wrappers else f", e.g. {new[0]}"))
    for arg in command[1:]:
        if arg.endswith(".pt2"):
            p = cwd / arg
            if p.is_file() and p.stat().st_mtime >= start_wall - MTIME_SLACK_S:
                check.evidence.append(f"package written by this run: {p}")
    if check.evidence:
        check.compiled = True
    elif fresh or given or cache.is_dir():
        check.compiled = False
        check.evidence.append(f"no generated code in {'the fresh ' if fresh else ''}inductor cache {cache}"
                              " and no .pt2 named in the command was written")
    return check


def _tlparse(log: Path, out: Path, cancel: threading.Event | None) -> str | None:
    exe = shutil.which("tlparse")
    if not exe:
        return "tlparse is not installed (pip install tlparse): read the raw TORCH_TRACE log"
    r = proc.run(proc.ProcSpec(argv=[exe, str(log), "-o", str(out), "--overwrite", "--no-browser"],
                               timeout_s=TLPARSE_TIMEOUT_S, stdout_tty=False, log_dir=out.parent / "tlparse-log"),
                 cancel=cancel)
    return None if r.ok else f"tlparse failed: {str(r)[-500:]}"


def collect_artifacts(run_dir: Path, uses: list[FlagUse], cwd: Path, start_wall: float, log_text: str,
                      cancel: threading.Event | None = None) -> Artifacts:
    art = Artifacts(run_dir=str(run_dir))
    if trace := _value(uses, "TORCH_TRACE"):
        folder = Path(trace)
        art.trace_dir = str(folder)
        logs = sorted(folder.glob("*.log"), key=lambda p: -p.stat().st_size) if folder.is_dir() else []
        art.trace_logs = [str(p) for p in logs]
        if not logs:
            art.notes.append("TORCH_TRACE wrote no log: the command may not have compiled anything")
        else:
            note = _tlparse(logs[0], run_dir / "tlparse", cancel)
            if note:
                art.notes.append(note)
            elif (run_dir / "tlparse" / "index.html").is_file():
                art.tlparse_dir = str(run_dir / "tlparse")
    if _value(uses, "DUMP_AOTI_MINIFIER") == "1":
        hits = _LAUNCHER.findall(log_text)
        if not hits:
            launchers = [p for p in cwd.glob("torch_compile_debug/run_*/minifier/minifier_launcher.py")
                         if p.stat().st_mtime >= start_wall - MTIME_SLACK_S]
            hits = [str(p) for p in sorted(launchers)]
        if hits:
            art.minifier_launcher = hits[-1]
        else:
            art.notes.append("the minifier wrote no launcher: it writes one only when compiling or running inside "
                             "aoti_compile_and_package fails (AOTINDUCTOR_REPRO_LEVEL=3 writes it first)")
    return art
