#!/usr/bin/env python3
"""On a GPU host: capture real compute-sanitizer memcheck logs for tests/fixtures/forensics/.

    PYTHONPATH=server python3 tests/gpu/capture_memcheck.py OUT_DIR [--only oob|host_crash] [--timeout S]

Jobs (each in OUT_DIR/work/<job>, its package built first, then one run under compute-sanitizer):

  oob         an AOTI package of `table[ids] * 2` built with inductor_configs assert_indirect_indexing=False
              (no index assert in the Triton kernel, CXX=/usr/bin/g++), run with the id ROWS, one row past the
              end of the table input; PYTORCH_NO_CUDA_MEMORY_CACHING=1 gives the table its own allocation, so the report
              names the kernel, its source line and the distance past that allocation
  host_crash  the index_oob example's CUDA package built with the host's default compiler (--host-cxx; the
              capture image's wrapped g++ builds packages that segfault in std::regex at load), loaded under
              memcheck: no device error, the program died on the host

Writes OUT_DIR/forensics/<kind>__<case>.memcheck.log: compute-sanitizer's report under a header naming this
script, torch, the GPU, the repro script, the command and its exit status (the header tests/test_fixture_headers.py
checks); the program's own output goes to OUT_DIR/work/<job>/program.log. Prints each report parsed by
aoti_debug.runs.memcheck. Copy the logs to tests/fixtures/forensics/ after a look; tests/test_forensics.py reads them.

`--build oob PKG` and `--run oob PKG` are the repro itself (the jobs call them; `--device cpu` dry-runs them).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "tests/gpu/capture_memcheck.py"
SYSTEM_CXX = "/usr/bin/g++"
HOST_CXX = "/opt/gcc/bin/g++"  # the capture image's default inductor compiler (docs/gpu-verification.md)
# 4,800 bytes, not a multiple of 256: allocations start 256-aligned, so the row past the end (48 bytes from the
# table's end) lies in a gap no allocation can start in, and the table is the nearest allocation.
ROWS, WIDTH = 100, 12
# The first row past the end: Inductor's wrap-around only adds ROWS to negative ids.
BAD_ID = ROWS
NAMES = {"oob": "oob__aoti_gather_no_index_asserts.memcheck.log",
         "host_crash": "host_crash__toolchain_load.memcheck.log"}


# --- the repro (runs in the child) ---------------------------------------------------------------

def build_oob(pkg: Path, device: str) -> None:
    import torch

    class Gather(torch.nn.Module):
        def forward(self, table, ids):
            return table[ids] * 2.0

    args = (torch.randn(ROWS, WIDTH, device=device), torch.tensor([0, 1, 2, 3], device=device))
    ep = torch.export.export(Gather(), args)
    torch._inductor.aoti_compile_and_package(ep, package_path=str(pkg),
                                             inductor_configs={"assert_indirect_indexing": False})
    print(f"package: {pkg}", flush=True)


def run_oob(pkg: Path, device: str) -> None:
    import torch

    model = torch._inductor.aoti_load_package(str(pkg))
    table = torch.randn(ROWS, WIDTH, device=device)
    ids = torch.tensor([0, 5, BAD_ID, 7], device=device)
    out = model(table, ids)
    if device == "cuda":
        torch.cuda.synchronize()
    print(f"ran without an error: row {BAD_ID} of a {ROWS}-row table read as {out[2, :4].tolist()}", flush=True)


# --- the jobs (run on the GPU host) --------------------------------------------------------------

def _env(cxx: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CXX", "PYTORCH_NO_CUDA_MEMORY_CACHING")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "server"), env.get("PYTHONPATH", "")) if p)
    if cxx:
        env["CXX"] = cxx
    return {**env, **extra}


def _torch_facts() -> tuple[str, str]:
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"{torch.__version__} (git {torch.version.git_version[:8]}, cuda {torch.version.cuda})", gpu


def header(job: str, repro: list[str], command: list[str], env: dict[str, str], status: int, argv: list[str]) -> str:
    torch_version, gpu = _torch_facts()
    san = subprocess.run([command[0], "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    shown = {k: env[k] for k in ("CXX", "PYTORCH_NO_CUDA_MEMORY_CACHING", "TORCHINDUCTOR_CACHE_DIR") if k in env}
    lines = [f"source: {SCRIPT}, job {job} ({shlex.join(['python3', SCRIPT, *argv])})",
             f"torch: {torch_version}", f"gpu: {gpu}", f"python: {sys.executable}",
             f"compute-sanitizer: {san[-1] if san else 'unknown'}", f"script: {shlex.join(repro)}",
             "env: " + " ".join(f"{k}={v}" for k, v in shown.items()), f"command: {shlex.join(command)}",
             f"exit_status: {status}", f"date: {datetime.now(timezone.utc).isoformat(timespec='seconds')}"]
    return "".join(f"# {line}\n" for line in lines) + "#\n"


def job(name: str, out: Path, timeout: float, host_cxx: str, argv: list[str]) -> Path | None:
    sanitizer = shutil.which("compute-sanitizer")
    if not sanitizer:
        print(f"{name}: compute-sanitizer is not on PATH", flush=True)
        return None
    work = out / "work" / name
    work.mkdir(parents=True, exist_ok=True)
    cache = {"TORCHINDUCTOR_CACHE_DIR": str(work / "cache")}
    if name == "oob":
        pkg = work / "gather.pt2"
        build = [sys.executable, str(Path(__file__).resolve()), "--build", "oob", str(pkg)]
        env = _env(SYSTEM_CXX, **cache)
        repro = [sys.executable, SCRIPT, "--run", "oob", str(pkg)]
        run_env = _env(SYSTEM_CXX, PYTORCH_NO_CUDA_MEMORY_CACHING="1", **cache)
    else:
        pkg = work / "index_oob_host_cxx.pt2"
        build = [sys.executable, "examples/index_oob.py", "--device", "cuda", "--package", str(pkg), "--build-only"]
        env = _env(host_cxx if Path(host_cxx).is_file() else None, **cache)
        repro = [sys.executable, "examples/index_oob.py", "--device", "cuda", "--package", str(pkg), "--load-only"]
        run_env = {**env}
    with open(work / "build.log", "wb") as log:
        rc = subprocess.run(build, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout).returncode
    if rc != 0 or not pkg.exists():
        print(f"{name}: the build failed (exit {rc}); see {work / 'build.log'}", flush=True)
        return None
    report = work / "memcheck.log"
    command = [sanitizer, "--tool", "memcheck", "--print-limit", "20", "--log-file", str(report), *repro]
    with open(work / "program.log", "wb") as log:
        try:
            status = subprocess.run(command, cwd=ROOT, env=run_env, stdout=log, stderr=subprocess.STDOUT,
                                    timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            status = 124
    if not report.is_file():
        print(f"{name}: compute-sanitizer wrote no report (exit {status}); see {work / 'program.log'}", flush=True)
        return None
    dest = out / "forensics" / NAMES[name]
    dest.parent.mkdir(parents=True, exist_ok=True)
    text = report.read_text(errors="replace")
    dest.write_text(header(name, repro, command, run_env, status, argv) + text)
    return dest


def summary(path: Path) -> str:
    sys.path.insert(0, str(ROOT / "server"))
    from aoti_debug.runs.memcheck import parse_memcheck

    m = parse_memcheck(path.read_text(errors="replace"))
    e = m.errors[0] if m.errors else None
    where = (f"{e.what} in {e.kernel} at {e.file}:{e.line}, {e.distance_bytes} bytes {e.direction} an allocation "
             f"of {e.allocation_size}" if e else "no device error")
    return f"{path.name}: {m.error_count} errors; {where}; verdict: {m.verdict}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--only", choices=sorted(NAMES), action="append")
    ap.add_argument("--timeout", type=float, default=600.0, help="per build and per run, seconds")
    ap.add_argument("--host-cxx", default=HOST_CXX, help="the host's default compiler, for host_crash")
    ap.add_argument("--build", nargs=2, metavar=("JOB", "PKG"), help="repro: build the job's package")
    ap.add_argument("--run", nargs=2, metavar=("JOB", "PKG"), help="repro: run the job's package")
    ap.add_argument("--device", default="cuda", help="for --build/--run: cpu dry-runs the repro")
    a = ap.parse_args()
    if a.build:
        build_oob(Path(a.build[1]), a.device)
        return 0
    if a.run:
        run_oob(Path(a.run[1]), a.device)
        return 0
    if a.out is None:
        ap.error("OUT_DIR is required")
    out = a.out.resolve()
    argv = [str(a.out)] + [x for j in (a.only or []) for x in ("--only", j)]
    ok = True
    for name in a.only or sorted(NAMES):
        path = job(name, out, a.timeout, a.host_cxx, argv)
        ok &= path is not None
        print(summary(path) if path else f"{name}: no log", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
