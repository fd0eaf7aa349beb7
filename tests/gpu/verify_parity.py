#!/usr/bin/env python3
"""Verify check_parity's predictions on a GPU host against real runs of a small CUDA package.

    PYTHONPATH=server python tests/gpu/verify_parity.py --out OUT [--package EXISTING.pt2] [--parallel 4]

Needs torch with CUDA, pydantic and pyyaml (aoti_debug's comparison modules import no mcp and no anyio).
1. Builds OUT/parity_cuda.pt2 (unless --package): x float32[B, 8], ids int64[B], B = Dim(min=2, max=64);
   Linear + Embedding on cuda, built with --cxx (default /usr/bin/g++, reference §11.9), a fresh inductor cache.
   VERIFY_DEVICE=cpu makes it a dry run on a CPU-only machine (parity_cpu.pt2, wrong-device inputs on meta).
2. Reads it with aoti_debug.package.inspect and probes this Python with aoti_debug's runtime probe.
3. For each case (wrong device, dtype, batch above max / below min, width, stride, count, shared batch):
   predicts with aoti_debug.parity.engine.build_report, then runs the package in a fresh subprocess twice, with
   AOTI_RUNTIME_CHECK_INPUTS=1 and without it (outputs compared with eager), and checks that the
   predicted check error appears in the real exception or stderr (2.11 puts it on stderr only).
4. Prints a table and writes OUT/verify_parity.json. Commit OUT/parity_cuda.pt2 and verify_parity.json
   as tests/fixtures/packages/parity_cuda.pt2 and parity_cuda.verify.json: the CPU-only tests replay it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "server"))
# One child: import torch, init CUDA, load the package, one call (a device assert can hang a bit).
CHILD_TIMEOUT_S = 240
BUILD_TIMEOUT_S = 600
SEED = 0
# VERIFY_DEVICE=cpu is a dry run of the plumbing on a CPU-only machine (wrong-device inputs are then meta).
DEV = os.environ.get("VERIFY_DEVICE", "cuda")
OTHER = "cpu" if DEV == "cuda" else "meta"

X = {"dtype": "float32", "shape": [4, 8], "device": DEV}
IDS = {"dtype": "int64", "shape": [4], "device": DEV}
CASES = {
    "ok": [X, IDS],
    "wrong_device": [{**X, "device": OTHER}, {**IDS, "device": OTHER}],
    "ids_int32": [X, {**IDS, "dtype": "int32"}],
    "batch_above_max": [{**X, "shape": [100, 8]}, {**IDS, "shape": [100]}],
    "batch_below_min": [{**X, "shape": [1, 8]}, {**IDS, "shape": [1]}],
    "width_9": [{**X, "shape": [4, 9]}, IDS],
    "x_transposed": [{**X, "stride": [1, 4]}, IDS],
    "count": [X],
    "shared_batch": [X, {**IDS, "shape": [6]}],
}


def model():
    import torch

    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(8, 16)
            self.emb = torch.nn.Embedding(100, 16)

        def forward(self, x, ids):
            return torch.relu(self.proj(x)) + self.emb(ids)

    torch.manual_seed(SEED)
    return M().to(DEV).eval()


def child_build(path: str) -> None:
    import torch

    batch = torch.export.Dim("batch", min=2, max=64)
    args = (torch.randn(4, 8, device=DEV), torch.randint(0, 100, (4,), device=DEV))
    ep = torch.export.export(model(), args, dynamic_shapes=({0: batch}, {0: batch}))
    torch._inductor.aoti_compile_and_package(ep, package_path=path)


def tensor(spec: dict):
    import torch

    dtype = getattr(torch, spec["dtype"])
    shape, stride = spec["shape"], spec.get("stride")
    if stride is None:
        t = torch.empty(shape, dtype=dtype, device=spec["device"])
    else:
        t = torch.empty_strided(shape, stride, dtype=dtype, device=spec["device"])
    if dtype.is_floating_point:
        t.copy_(torch.randn(shape))
    else:
        t.copy_(torch.randint(0, 100, shape))
    return t


def child_run(path: str, case: str, out: str) -> None:
    import torch

    torch.manual_seed(1)
    inputs = [tensor(s) for s in CASES[case]]
    result: dict = {}
    compiled = torch._inductor.aoti_load_package(path)
    try:
        got = compiled(*inputs)
        if DEV == "cuda":
            torch.cuda.synchronize()
        result["outcome"] = "ok"
    except Exception as exc:  # the outcome is the evidence
        result["outcome"] = f"{type(exc).__name__}: {str(exc).strip()[:600]}"
        got = None
    if got is not None:
        try:
            with torch.no_grad():
                want = model()(*[t.to(DEV) for t in inputs])
            result["matches_eager"] = bool(torch.allclose(got.cpu(), want.cpu(), atol=1e-4, rtol=1e-4))
        except Exception as exc:  # eager rejects it too
            result["eager_error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
    Path(out).write_text(json.dumps(result))


def spawn(argv: list[str], env: dict[str, str], timeout: float) -> dict:
    try:
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        return {"returncode": None, "timed_out": True, "stderr_tail": str(exc.stderr or "")[-3000:]}
    return {"returncode": p.returncode, "stderr_tail": p.stderr[-3000:], "stdout_tail": p.stdout[-1000:]}


def base_env(cache: Path, cxx: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AOTI_RUNTIME_CHECK_INPUTS", "CUDA_LAUNCH_BLOCKING")}
    env.update(PYTHONFAULTHANDLER="1", PYTHONUNBUFFERED="1", TORCHINDUCTOR_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(REPO / "server"), env.get("PYTHONPATH", "")]))
    if cxx:
        env["CXX"] = cxx
    return env


def run_case(pkg: Path, case: str, checks: bool, work: Path, env: dict[str, str]) -> dict:
    out = work / f"{case}.{'checks' if checks else 'plain'}.json"
    e = {**env, **({"AOTI_RUNTIME_CHECK_INPUTS": "1"} if checks else {})}
    r = spawn([sys.executable, __file__, "_run", str(pkg), case, str(out)], e, CHILD_TIMEOUT_S)
    if out.exists():
        r.update(json.loads(out.read_text()))
    else:
        r["outcome"] = f"no result (exit {r.get('returncode')})"
    return r


def predict(pkg: Path, runtime: dict) -> dict:
    from aoti_debug.package.inspect import inspect_package
    from aoti_debug.parity.engine import build_report
    from aoti_debug.runs.probe import ActualInput, ProbeOutcome

    facts = inspect_package(pkg)
    out = {}
    for case, specs in CASES.items():
        inputs = [ActualInput.model_validate(s) for s in specs]
        r = build_report(facts, facts.model(), ProbeOutcome(data=runtime), inputs, "json")
        out[case] = {
            "kinds": [m.kind for m in r.mismatches],
            "predicted_check_error": r.predicted_check_error,
            "ok": r.ok,
            "summary": r.summary,
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--package", type=Path)
    ap.add_argument("--parallel", type=int, default=4)
    # A host-wide CXX (a wrapped g++ linking libstdc++ statically) made every package segfault at load on
    # the GPU box (reference §11.9; parity_cuda_static_libstdcxx): build with the system g++ by default.
    ap.add_argument("--cxx", default="/usr/bin/g++" if Path("/usr/bin/g++").exists() else None,
                    help="compiler for the build (default /usr/bin/g++; '' keeps the environment's CXX)")
    args = ap.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="verify_parity."))
    env = base_env(work / "inductor_cache", args.cxx or None)
    pkg = out / f"parity_{DEV}.pt2"
    if args.package:
        shutil.copy(args.package, pkg)
    else:
        b = spawn([sys.executable, __file__, "_build", str(pkg)], env, BUILD_TIMEOUT_S)
        if not pkg.exists():
            print(f"build failed: {b}", file=sys.stderr)
            return 1
    probe_out = work / "runtime.json"
    spawn([sys.executable, str(REPO / "server/aoti_debug/probes/runtime_probe.py"), str(probe_out)], env, 300)
    runtime = json.loads(probe_out.read_text())
    predictions = predict(pkg, runtime)
    jobs = [(c, chk) for c in CASES for chk in (True, False)]
    with ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(lambda j: run_case(pkg, j[0], j[1], work, env), jobs))
    rows, record = [], {"runtime": runtime, "build_env": {"CXX": env.get("CXX")}, "cases": {}}
    for (case, checks), res in zip(jobs, results, strict=True):
        entry = record["cases"].setdefault(case, {"inputs": CASES[case], **predictions[case]})
        entry["with_checks" if checks else "without_checks"] = res
    for case, entry in record["cases"].items():
        want, real = entry["predicted_check_error"], entry["with_checks"]
        seen = real.get("outcome", "") + "\n" + real.get("stderr_tail", "")
        entry["prediction_holds"] = (want in seen) if want else real.get("outcome") == "ok"
        plain = entry["without_checks"]
        plain_desc = (
            plain.get("outcome", "?")[:60]
            + (f" eager={plain['matches_eager']}" if "matches_eager" in plain else "")
            + f" rc={plain.get('returncode')}"
        )
        rows.append(
            (
                case,
                ",".join(entry["kinds"]) or "-",
                "yes" if entry["prediction_holds"] else "NO",
                (want or "-")[:70],
                plain_desc,
            )
        )
    widths = [
        max(len(r[i]) for r in rows + [("case", "kinds", "holds", "predicted", "without checks")]) for i in range(5)
    ]
    for r in [("case", "kinds", "holds", "predicted", "without checks"), *rows]:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)))
    (out / "verify_parity.json").write_text(json.dumps(record, indent=1))
    print(f"\nwrote {out / 'verify_parity.json'} and {pkg}")
    return 0 if all(e["prediction_holds"] for e in record["cases"].values()) else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_build":
        child_build(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "_run":
        child_run(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(main())
