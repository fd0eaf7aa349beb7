"""On a GPU host: run the memcheck and backtrace forensics on real CUDA failures; keep raw outputs and parses.

    PYTHONPATH=server python tests/gpu/verify_forensics.py OUT_DIR [--timeout 900] [--only memcheck|backtrace|toolchain]

Needs torch with CUDA, and compute-sanitizer and/or cuda-gdb on PATH (what is missing is reported and
skipped). Uses only aoti_debug's core modules (no mcp). Writes:

    OUT_DIR/fixtures/<case>.log     raw memcheck reports and debugger sessions, with a '# ' header, named
                                    <points_to>__<case>.<debugger>.log or <oob|host_crash>__<case>.memcheck.log;
                                    copy them to tests/fixtures/forensics/ to pin the parsers (after a look)
    OUT_DIR/results/<case>.json     the RunResult of each step
    OUT_DIR/summary.txt             one PASS/FAIL line per check (also printed); exit 1 if any FAIL
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))

from aoti_debug.runs import rerun  # noqa: E402
from aoti_debug.runs.rerun import RerunRequest, RunResult  # noqa: E402

PY = sys.executable
checks: list[str] = []


def check(name: str, ok: bool, detail: object = "") -> None:
    line = f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  ({detail})" if detail != "" else "")
    checks.append(line)
    print(line, flush=True)


def header(command: list[str]) -> str:
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    tools = {t: shutil.which(t) for t in ("compute-sanitizer", "cuda-gdb", "gdb")}
    sanitizer = (
        subprocess.run(["compute-sanitizer", "--version"], capture_output=True, text=True).stdout.strip()
        if tools["compute-sanitizer"]
        else "none"
    )
    return (
        f"# source: tests/gpu/verify_forensics.py {' '.join(sys.argv[1:])}\n"
        f"# torch {torch.__version__} (git {torch.version.git_version[:8]}), {gpu}, {platform.platform()}\n"
        f"# tools: {tools}; compute-sanitizer: {sanitizer.splitlines()[-1] if sanitizer else 'none'}\n"
        f"# command: {' '.join(command)}\n"
    )


def step(out: Path, case: str, argv: list[str], timeout: float, **kw) -> RunResult:
    print(f"--- {case}: {' '.join(argv)} {kw}", flush=True)
    r = rerun.rerun(RerunRequest(argv=argv, cwd=str(ROOT), timeout_s=timeout, **kw), [ROOT, out])
    (out / "results").mkdir(exist_ok=True)
    (out / "results" / f"{case}.json").write_text(r.model_dump_json(indent=2))
    print(
        f"    status={r.status} exit={r.exit_code} signal={r.signal} "
        f"pattern={r.classification.pattern if r.classification else None} {r.duration_s:.0f}s",
        flush=True,
    )
    return r


def keep(out: Path, name: str, source: str | None, argv: list[str]) -> None:
    if source and Path(source).is_file():
        (out / "fixtures").mkdir(exist_ok=True)
        (out / "fixtures" / f"{name}.log").write_text(header(argv) + Path(source).read_text(errors="replace"))


def memcheck_cases(out: Path, timeout: float, cxx: dict[str, str]) -> None:
    pkg = out / "ima_triton_cuda.pt2"
    build = [PY, "examples/ima_triton.py", "--device", "cuda", "--package", str(pkg)]
    r = step(out, "ima_build_and_run", build, timeout, forensics=False, flags=cxx)
    check("ima: the build run reproduces a CUDA illegal memory access",
          r.classification is not None and r.classification.pattern == "cuda_illegal_memory_access",
          r.classification.pattern if r.classification else None)
    if not shutil.which("compute-sanitizer"):
        check("memcheck: compute-sanitizer on PATH", False, "skipped the memcheck cases")
        return
    load = [PY, "examples/ima_triton.py", "--device", "cuda", "--load-only", "--package", str(pkg)]
    r = step(out, "ima_memcheck_preset", load, timeout, presets=["memcheck"])
    m = r.forensics.memcheck if r.forensics else None
    e = m.errors[0] if m and m.errors else None
    keep(out, f"{'oob' if e else 'host_crash'}__ima_triton_load.memcheck", m.report_path if m else None, load)
    check("memcheck preset: an error record parsed", e is not None, m.verdict if m else "no report")
    if e:
        check("memcheck: kernel is gather_rows_kernel", "gather_rows_kernel" in (e.kernel or ""), e.kernel)
        check("memcheck: source file and line", bool(e.file and e.line), f"{e.file}:{e.line}")
        check("memcheck: thread and block", bool(e.thread and e.block), f"{e.thread} {e.block}")
        check("memcheck: address or distance to an allocation", bool(e.address or e.distance_bytes is not None),
              f"{e.address} {e.distance_bytes} {e.direction}")
    r = step(out, "ima_auto_forensics", load, timeout)
    check("auto forensics: a plain rerun of the IMA ran memcheck by itself",
          bool(r.forensics and r.forensics.memcheck and r.forensics.memcheck.errors), r.next_step[:200])


def backtrace_cases(out: Path, timeout: float, cxx: dict[str, str]) -> None:
    dbg = shutil.which("cuda-gdb") or shutil.which("gdb")
    for device in ("cuda", "cpu"):
        so = out / f"load_device_mismatch_{device}.so"
        base = [PY, "examples/load_device_mismatch.py", "--device", device, "--package", str(so)]
        step(out, f"mismatch_{device}_build", [*base, "--build-only"], timeout, forensics=False, flags=cxx)
        load = [*base, "--load-only"]
        r = step(out, f"mismatch_{device}_plain", load, timeout, forensics=False)
        check(f"mismatch {device}: a crash", r.status == "crashed", f"{r.status} {r.signal} {r.exit_code}")
        if not dbg:
            check("backtrace: cuda-gdb or gdb on PATH", False, "skipped the backtrace cases")
            continue
        r = step(out, f"mismatch_{device}_backtrace", load, timeout, presets=["backtrace"])
        bt = r.forensics.backtrace if r.forensics else None
        keep(out, f"{bt.points_to if bt else 'none'}__load_device_mismatch_{device}.{Path(dbg).name}", r.log_path,
             load)
        check(f"backtrace {device}: the debugger stopped on a signal", bool(bt and bt.signal),
              bt.signal if bt else None)
        check(f"backtrace {device}: native frames attributed", bool(bt and bt.frames and bt.top_kind != "unknown"),
              [(f.function, f.kind) for f in bt.frames[:4]] if bt else None)
        check(f"backtrace {device}: points to a device mismatch at load",
              bool(bt and bt.points_to == "device_mismatch"),
              f"{bt.points_to}: {bt.verdict[:160]}" if bt else None)
        r = step(out, f"mismatch_{device}_auto", load, timeout)
        auto = r.forensics.backtrace if r.forensics else None
        check(f"auto forensics {device}: a silent segfault got a backtrace by itself", auto is not None,
              r.classification.pattern if r.classification else None)


def toolchain_case(out: Path, timeout: float) -> None:
    """The image's default compiler (reference section 11.9): the package segfaults in std::regex at load."""
    pkg = out / "ima_triton_default_cxx.pt2"
    build = [PY, "examples/ima_triton.py", "--device", "cuda", "--package", str(pkg)]
    r = step(out, "toolchain_build_and_run", build, timeout)
    bt = r.forensics.backtrace if r.forensics else None
    if bt:
        keep(out, f"{bt.points_to}__ima_triton_default_cxx.{bt.debugger}", r.forensics.log_path, build)
    check("toolchain: the default compiler's package crashes at load and points to the toolchain",
          bool(bt and bt.points_to == "toolchain"), f"{r.status} {bt.points_to if bt else None}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--timeout", type=float, default=900.0, help="per run, seconds")
    ap.add_argument("--only", choices=["memcheck", "backtrace", "toolchain"])
    ap.add_argument("--cxx", default="/usr/bin/g++",
                    help="compiler for the builds (the image's default one breaks packages at load: reference 11.9)")
    args = ap.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["AOTI_DEBUG_HOME"] = str(out / "home")
    # the debugger starts `python -m aoti_debug.runs._exec`: the children must import aoti_debug too
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "server"), *filter(None, [os.environ.get("PYTHONPATH")])])
    cxx = {"CXX": args.cxx} if Path(args.cxx).is_file() else {}
    if args.only in (None, "memcheck"):
        memcheck_cases(out, args.timeout, cxx)
    if args.only in (None, "backtrace"):
        backtrace_cases(out, args.timeout, cxx)
    if args.only == "toolchain":
        toolchain_case(out, args.timeout)
    (out / "summary.txt").write_text("\n".join(checks) + "\n")
    print(
        json.dumps(
            {"pass": sum(c.startswith("PASS") for c in checks), "fail": sum(c.startswith("FAIL") for c in checks)}
        )
    )
    return 1 if any(c.startswith("FAIL") for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
