"""On a GPU host: dump_kernel_inputs and explain_index_oob on the CUDA examples (Triton kernels); keep everything.

    PYTHONPATH=server python tests/gpu/verify_kernels.py OUT_DIR [--timeout 900] [--only index_oob,nan,...]
                                                         [--device cuda|cpu]

Needs torch with CUDA and a GPU; uses only aoti_debug's core modules (pydantic, pyyaml; no mcp). Each case runs
the example with --device cuda through dump_kernel_inputs (two rebuilds: printer level 3 with
CUDA_LAUNCH_BLOCKING=1, then level 2 filtered to the failing kernel and its producers), then, for index
asserts, explain_index_oob on the package the level-2 pass wrote, with the level-3 log. Set CXX=/usr/bin/g++
on hosts whose default compiler is broken (see tests/fixtures/gpu_capture/README.md). Writes:

    OUT_DIR/<case>/dump.json           the DumpResult
    OUT_DIR/<case>/explain.json|.md    the OobExplanation of the package and its markdown
    OUT_DIR/<case>/pass<level>.log     each pass's combined output (the printer output; commit as fixtures)
    OUT_DIR/<case>/sources/            the level-2 pass's generated wrapper.cpp, kernel.cpp and Triton .py files
    OUT_DIR/summary.txt                one PASS/FAIL line per check (also printed); exit 1 if any FAIL
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))

from aoti_debug.common.logread import file_chunks  # noqa: E402
from aoti_debug.kernels.dump import dump_kernel_inputs  # noqa: E402
from aoti_debug.kernels.index_oob import explain_index_oob  # noqa: E402
from aoti_debug.kernels.model import DumpRequest, DumpResult  # noqa: E402

# case -> the example script and its arguments (--device cuda and --package are added)
CASES = {
    "index_oob": ["index_oob.py"],
    "nan": ["nan.py"],
    "dynamic_zero_below_min": ["dynamic_zero_below_min.py"],
    "dynamic_zero_below_min_nolb": ["dynamic_zero_below_min.py", "--no-lowerbound-check"],
}
checks: list[str] = []


def check(name: str, ok: bool, detail: object = "") -> None:
    line = f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  ({detail})" if detail != "" else "")
    checks.append(line)
    print(line, flush=True)


def expect(case: str, res: DumpResult, device: str) -> None:
    kinds = [s.kind for s in res.suspects]
    if case == "index_oob":
        k = res.failing_kernel or ""
        prefix = "triton_" if device == "cuda" else "cpp_"
        check(f"{case}: failing kernel is a {prefix} embedding kernel", k.startswith(prefix) and "embedding" in k, k)
        top = res.suspects[0] if res.suspects else None
        check(f"{case}: suspect is input 1 with max 500 against bound 100",
              bool(top and (top.kind, top.input_index, top.value, top.bound) == ("index_above_bound", 1, 500, 100)),
              top and top.detail)
    elif case == "nan":
        prod = next((s for s in res.suspects if s.kind == "nan_inf_producer"), None)
        check(f"{case}: the first NaN producer is the log kernel", bool(prod and "log" in (prod.kernel or "")),
              prod and prod.detail)
    else:
        check(f"{case}: an empty dimension is named", "empty_dimension" in kinds, kinds)
        check(f"{case}: explained as empty_dimension",
              bool(res.explanation and res.explanation.root_cause == "empty_dimension"),
              res.explanation and res.explanation.contributing)
        want = "missing_lower_bound_guard" if case.endswith("nolb") else "guard_not_enforced"
        check(f"{case}: {want}", bool(res.explanation and want in res.explanation.contributing))


def run_case(case: str, out: Path, timeout: float, device: str) -> None:
    work = out / case
    work.mkdir(parents=True, exist_ok=True)
    script, *args = CASES[case]
    pkg = work / f"{case}.pt2"
    argv = [sys.executable, str(ROOT / "examples" / script), "--device", device, "--package", str(pkg), *args]
    print(f"--- {case}: {' '.join(argv)}", flush=True)
    res = dump_kernel_inputs(DumpRequest(argv=argv, cwd=str(work), timeout_s=timeout), [ROOT, work])
    (work / "dump.json").write_text(res.model_dump_json(indent=2))
    for p in res.passes:
        if p.log_path and Path(p.log_path).is_file():
            shutil.copy(p.log_path, work / f"pass{p.level}.log")
        cache = p.flags.get("TORCHINDUCTOR_CACHE_DIR")
        if p.level == 2 and cache and Path(cache).is_dir():
            for f in Path(cache).rglob("*"):
                if f.is_file() and f.name.endswith((".wrapper.cpp", ".kernel.cpp", ".py")):
                    dest = work / "sources" / f.relative_to(cache)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(f, dest)
    print(res.summary, flush=True)
    check(f"{case}: both passes compiled", all(p.compiled for p in res.passes), [p.status for p in res.passes])
    check(f"{case}: no unparsed printer lines", res.unparsed_lines == 0, res.unparsed_lines)
    expect(case, res, device)
    if case != "nan" and pkg.is_file() and (work / "pass3.log").is_file():
        e = explain_index_oob(pkg, file_chunks(work / "pass3.log"))
        (work / "explain.json").write_text(e.model_dump_json(indent=2))
        (work / "explain.md").write_text(e.markdown + "\n")
        check(f"{case}: explain_index_oob on the package", e.status == "explained", (e.kernel, e.root_cause))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--timeout", type=float, default=900.0, help="Per pass (each rebuilds the package)")
    ap.add_argument("--only", help="Comma list of cases: " + ", ".join(CASES))
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: check the script on a CPU host")
    args = ap.parse_args()
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: this script needs a GPU", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("AOTI_DEBUG_HOME", str(args.out.resolve() / "home"))  # run directories stay with the results
    for case in (args.only.split(",") if args.only else CASES):
        try:
            run_case(case, args.out.resolve(), args.timeout, args.device)
        except Exception as exc:  # one broken case must not hide the others' results
            check(f"{case}: ran", False, f"{type(exc).__name__}: {exc}")
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    (args.out / "summary.txt").write_text(f"torch {torch.__version__}, {gpu}, device {args.device}\n"
                                          + "\n".join(checks) + "\n")
    return 1 if any(c.startswith("FAIL") for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
