#!/usr/bin/env python3
"""Every CUDA example of examples/examples.yaml through triage, on a GPU host; or offline over a capture.

    PYTHONPATH=server python tests/gpu/triage_suite.py OUT_DIR [--parallel N] [--budget S] [--only REGEX]
    PYTHONPATH=server python tests/gpu/triage_suite.py --offline tests/fixtures/gpu_capture [OUT_DIR]
    PYTHONPATH=server python tests/gpu/triage_suite.py OUT_DIR --replay    # OUT_DIR: a suite output

Every mode checks each report with aoti_debug.triage.examples.check (strict: pattern, root-cause kind, input index,
dim and kernel where the manifest states them) and prints, per example, MATCH or every field that differed.

GPU mode: one child process per example (`--one NAME`), all in parallel, each a full triage (baseline,
classify, the guide's next steps; CUDA_LAUNCH_BLOCKING, compute-sanitizer and cuda-gdb where the guide
asks) with CXX=/usr/bin/g++, except toolchain_segfault, which keeps the host's default compiler: that
one must end at native_abi. Needs torch with CUDA and pydantic, pyyaml, anyio (no mcp). Writes
OUT_DIR/triage_suite.json, OUT_DIR/triage_suite.md, OUT_DIR/results/<name>.json (the TriageReport),
OUT_DIR/logs/<name>/step<N>_<tool>.log (each step's output, the last 2 MiB) and OUT_DIR/env.txt;
packages, caches and run directories stay in a scratch folder outside OUT_DIR.

Offline mode: triage of each CUDA example's captured baseline log, with its package when the capture
kept one and the captured step logs as evidence (no run); prints the table docs/gpu-verification.md holds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))

from aoti_debug.classify.engine import classify_file  # noqa: E402
from aoti_debug.runs import store as runs  # noqa: E402
from aoti_debug.triage import examples  # noqa: E402
from aoti_debug.triage.engine import triage  # noqa: E402
from aoti_debug.triage.model import TriageReport, TriageRequest  # noqa: E402

SYSTEM_CXX = "/usr/bin/g++"
# The whole suite ends in 4-5 minutes on a 16-core GPU host: each triage gets this budget, all run at once.
DEFAULT_BUDGET_S = 420.0
LOG_KEEP = 2 * 2**20
# Capture job suffix -> triage evidence key (tests/gpu/capture.py's jobs).
EVIDENCE = {"sanity": "sanity", "check_inputs": "sanity", "deterministic": "deterministic", "memcheck": "memcheck",
            "printer2": "dump_kernel_inputs", "cuda_gdb": "backtrace", "no_gpu": None}
# Manifest example -> capture job prefix, and the log that plays the baseline when it is not <prefix>.base.
CAPTURE_PREFIX = {"input_device_mismatch": "input_device_mismatch.cuda_pkg",
                  "input_device_mismatch_cpu_pkg": "input_device_mismatch.cpu_pkg",
                  "load_device_mismatch": "load_device_mismatch.aot_load_cuda_on_cpu",
                  "load_device_mismatch_package": "load_device_mismatch.package"}
BASELINE_JOB = {"load_device_mismatch_package": "no_gpu"}


def logged_exit_status(log: Path) -> int | None:
    """The exit status a fixture log's header records ('# exit_status: N'), if any."""
    m = re.search(r"^# exit_status: (-?\d+)", log.read_text(errors="replace"), re.M)
    return int(m.group(1)) if m else None


def keeps_host_cxx(name: str) -> bool:
    """The manifest marks the examples whose point is the host's own compiler (env: {CXX: <the host's default>})."""
    return "CXX" in ((examples.get(name).model_extra or {}).get("env") or {})


def child_env(host_cxx: bool, **extra: str) -> dict[str, str]:
    """The environment of a run on the GPU host: this server/ on PYTHONPATH before the caller's (carried wheels),
    CXX=/usr/bin/g++ unless host_cxx (keep the host's compiler)."""
    pythonpath = os.pathsep.join(p for p in (str(ROOT / "server"), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": pythonpath, **extra}
    if not host_cxx:
        env["CXX"] = SYSTEM_CXX
    return env


def cuda_examples() -> list[examples.Example]:
    return [e for e in examples.manifest().values() if "cuda" in e.devices]


def summary_row(name: str, r: TriageReport | None, wall_s: float | None, error: str = "",
                device: str = "cuda") -> dict:
    ex = examples.get(name)
    exp = examples.expectation(ex, device)
    c = examples.check(ex, device, r) if r else None
    rc = r.root_cause if r else None
    return {"example": name, "expected": f"{exp.get('pattern')} / {exp.get('root_cause')}",
            "pattern": r.pattern if r else None, "initial_pattern": r.initial_pattern if r else None,
            "root_cause": f"{rc.kind} ({'named' if rc.named else 'likely'})" if rc else None,
            "root_cause_summary": rc.summary if rc else None, "match": c.match if c else False,
            "differences": c.differences if c else [error], "stopped_because": r.stopped_because if r else "error",
            "tool_calls": r.tool_calls if r else 0, "wall_s": wall_s,
            "steps": [f"{s.index}. {s.tool}{' ' + s.preset if s.preset else ''} [{s.status}, {s.cost_s:.0f} s]"
                      for s in r.steps] if r else []}


def table(rows: list[dict], timed: bool) -> str:
    head = "| Example | Expected (manifest) | Triage diagnosis | Root cause | Match | Tool calls |" + (
        " Wall s |" if timed else " Captured step logs used |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        first = r["initial_pattern"]
        diag = r["pattern"] if first in (None, r["pattern"]) else f"{first} → {r['pattern']}"
        out.append(f"| `{r['example']}` | {r['expected']} | {diag} | {r['root_cause']} | "
                   f"{'yes' if r['match'] else 'NO: ' + '; '.join(r['differences'])} | {r['tool_calls']} |"
                   + (f" {r['wall_s']:.0f} |" if timed and r["wall_s"] is not None else " - |" if timed else
                      f" {', '.join(f'`{e}`' for e in r.get('evidence', [])) or '-'} |"))
    return "\n".join(out)


# --- offline over a capture -----------------------------------------------------------------------

def offline_case(capture: Path, name: str) -> TriageReport | None:
    prefix = CAPTURE_PREFIX.get(name, name)
    logs = capture / "logs"
    base = logs / f"{prefix}.{BASELINE_JOB.get(name, 'base')}.log"
    if not base.is_file():
        return None
    evidence: dict[str, str] = {}
    for job, key in EVIDENCE.items():  # in EVIDENCE's order: the sanity log before the check_inputs one
        log = logs / f"{prefix}.{job}.log"
        if key and key not in evidence and log.is_file():
            evidence[key] = str(log)
    # the package when the capture kept it, else the build's generated sources it kept (for explain_index_oob)
    pkg = capture / "packages" / f"{prefix}.base.pt2"
    sources = capture / "artifacts" / f"{prefix}.base" / "cache"
    where = pkg if pkg.is_file() else sources if sources.is_dir() else None
    req = TriageRequest(log_path=str(base), exit_status=logged_exit_status(base),
                        package_path=str(where) if where else None, evidence_logs=evidence,
                        probe_runtime=False)
    return triage(req, [ROOT])


def classify_table(capture: Path) -> str:
    """Per CUDA example and captured job: the classifier's pattern vs the manifest's expectation for that stage."""
    stages = {"base": "baseline", "no_gpu": "baseline", "sanity": "sanity", "cuda_gdb": "with_backtrace"}
    out = ["| Example | Captured log | Exit | Classified as | Manifest expects |", "|---|---|---|---|---|"]
    for ex in cuda_examples():
        prefix = CAPTURE_PREFIX.get(ex.name, ex.name)
        exp = ex.expected.get("cuda") or {}
        for job, stage in stages.items():
            log = capture / "logs" / f"{prefix}.{job}.log"
            if not log.is_file() or (job == "base" and ex.name in BASELINE_JOB):
                continue
            status = logged_exit_status(log)
            c = classify_file(log, status)
            want = (exp.get(stage) or {}).get("pattern", "(same as baseline)" if stage == "sanity" else "-")
            mark = "" if want in (c.pattern, "(same as baseline)", "-") else " **differs**"
            out.append(f"| `{ex.name}` | `{log.name}` | {'?' if status is None else status} | {c.pattern} "
                       f"({c.confidence:.2f}) | {want}{mark} |")
    return "\n".join(out)


def offline(capture: Path) -> list[dict]:
    rows = []
    for ex in cuda_examples():
        if not (ex.expected.get("cuda") or {}).get("capture"):
            continue  # verified by the triage suite only: the H200 capture has no log of it to triage offline
        r = offline_case(capture, ex.name)
        rows.append(summary_row(ex.name, r, None, "" if r else "no baseline log in the capture"))
        given = [s for s in (r.steps if r else []) if s.ran and s.ran[0].startswith("given")]
        rows[-1]["evidence"] = [Path(s.log_path).name for s in given if s.log_path]
    return rows


# --- offline over a GPU suite output ---------------------------------------------------------------

# Kept step log name suffix -> triage evidence key; the sanitizer's own report plays memcheck.
STEP_EVIDENCE = {"_sanity": "sanity", "_deterministic": "deterministic", "_memcheck.sanitizer": "memcheck",
                 "_backtrace": "backtrace", "_dump_kernel_inputs": "dump_kernel_inputs"}
# Steps that read the package or its sources, which a suite output does not keep.
PACKAGE_STEPS = {"check_parity", "explain_index_oob"}
# Reruns that name a crashed kernel, whose indices triage then reads from the package's launch of it.
KERNEL_PRESETS = {"memcheck", "backtrace"}


def replay_case(out: Path, name: str) -> TriageReport:
    """Triage of one example's kept baseline log with its kept step logs as evidence: no run, no package."""
    logs = out / "logs" / name
    base = logs / "step1_rerun_with_flags.log"
    evidence = {key: str(f) for f in sorted(logs.glob("step*.log"))
                for suffix, key in STEP_EVIDENCE.items() if f.stem.endswith(suffix)}
    return triage(TriageRequest(log_path=str(base), exit_status=logged_exit_status(base),
                                evidence_logs=evidence, probe_runtime=False), [ROOT])


def replay(out: Path) -> list[dict]:
    """Per example of a GPU suite output: the live result and what the replay of its kept logs reaches."""
    rows = []
    for res in sorted((out / "results").glob("*.json")):
        live = TriageReport.model_validate_json(res.read_text())
        again = replay_case(out, res.stem)
        named = next((s for s in live.steps if s.named_root_cause), None)
        namer = named.tool if named else None
        # a printer suspect that needed the package's constants (their shapes are not printed) reads the package too
        reads_package = namer in PACKAGE_STEPS or any("the package holds" in f for f in (named.found if named else []))
        # a crashed kernel's indices are judged from its launch in the package (culprit_kernel), with the calls
        reads_package = reads_package or bool(named and named.preset in KERNEL_PRESETS and live.root_cause
                                              and live.root_cause.kernel)
        rows.append({"example": res.stem, "live": _cause(live), "replay": _cause(again),
                     "initial": live.initial_pattern,
                     "replay_steps": [f"{s.tool}{' ' + s.preset if s.preset else ''}" for s in again.steps
                                      if s.ran and s.ran[0].startswith("given")],
                     "named_by": f"{namer} {named.preset}" if named and named.preset else namer,
                     "needs_package": reads_package,
                     # a diagnosis from the capture runner's record, or from the eager model run on the captured
                     # calls (calls.jsonl and eager_nodes_<n>.json are not kept beside the logs)
                     "needs_calls": any(e.startswith("the capture runner saw") for s in live.steps
                                        for e in s.evidence)
                     or any(f.startswith("against eager (call ") for f in (named.found if named else []))})
    return rows


def _cause(r: TriageReport) -> str:
    rc = r.root_cause
    return f"{r.pattern} / {rc.kind if rc and rc.named else 'none named'}"


def replay_table(rows: list[dict]) -> str:
    out = ["| Example | Live on the GPU | Replay of the kept logs | Kept logs used | Same |", "|---|---|---|---|---|"]
    for r in rows:
        same = ("yes" if r["live"] == r["replay"] else
                "no: diagnosed from the captured calls (not kept)" if r["needs_calls"] else
                f"no: named by {r['named_by']}, which reads the package (not kept)" if r["needs_package"] else "NO")
        out.append(f"| `{r['example']}` | {r['live']} | {r['replay']} | {', '.join(r['replay_steps']) or '-'} "
                   f"| {same} |")
    return "\n".join(out)


def recheck(out: Path) -> list[dict]:
    """A GPU suite output's rows checked again from its kept reports with today's examples.check (the strict one);
    the wall times as recorded."""
    rows = []
    for row in json.loads((out / "triage_suite.json").read_text())["rows"]:
        res = out / "results" / f"{row['example']}.json"
        rows.append(summary_row(row["example"], TriageReport.model_validate_json(res.read_text()), row["wall_s"])
                    if res.is_file() else row)
    return rows


def differences(rows: list[dict]) -> str:
    """One line per example: MATCH, or MISMATCH and every field that differed."""
    return "\n".join(f"{r['example']}: " + ("MATCH" if r["match"] else "MISMATCH: " + "; ".join(r["differences"]))
                     for r in rows)


def suite_table(out: Path) -> str:
    """A GPU suite output's count and table under today's check (docs/gpu-verification.md holds it)."""
    rows = recheck(out)
    return f"{sum(r['match'] for r in rows)}/{len(rows)} match (strict check)\n\n{table(rows, timed=True)}"


# --- on the GPU host ------------------------------------------------------------------------------

def step_log_name(s) -> str:
    return f"step{s.index}_{s.tool}{'_' + s.preset if s.preset else ''}.log"


def exit_status_of(found: list[str]) -> int | None:
    """The run's exit status from the step's first finding: 'crashed (SIGSEGV, ...' -> -11, 'failed (exit 1' -> 1,
    'ok (exit 0' -> 0."""
    m = re.match(r"(?:crashed \((SIG[A-Z]+)|(?:failed|ok) \(exit (\d+))", found[0] if found else "")
    if not m:
        return None
    return -int(getattr(signal, m.group(1))) if m.group(1) else int(m.group(2))


def log_header(name: str, s, env: str, budget: float) -> bytes:
    """Comment lines that say where a kept step log came from (the fixture-log rule: torch, GPU, command)."""
    cxx = re.search(r"host CXX=(\S+);", env)
    lines = [f"aoti-debug GPU triage suite: example {name}, step {s.index} {s.tool}"
             f"{' ' + s.preset if s.preset else ''}", *env.strip().splitlines(),
             f"suite: tests/gpu/triage_suite.py OUT_DIR --budget {budget:g}, CXX="
             + ((cxx.group(1) if cxx else "(host default)") if keeps_host_cxx(name) else SYSTEM_CXX),
             f"command: {shlex.join(s.ran)}" + "".join(f" {k}={v}" for k, v in (s.flags or {}).items())]
    status = exit_status_of(s.found) if s.tool == "rerun_with_flags" else None
    if status is not None:
        lines.append(f"exit_status: {status}")
    return "".join(f"# {line}\n" for line in lines).encode()


def _keep_logs(name: str, r: TriageReport, dest: Path, env: str, budget: float) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for s in r.steps:
        if s.log_path and Path(s.log_path).is_file():
            header = log_header(name, s, env, budget)
            (dest / step_log_name(s)).write_bytes(header + Path(s.log_path).read_bytes()[-LOG_KEEP:])
            # compute-sanitizer writes its report to the run's memcheck.log, not to the process output
            for report in (Path(s.log_path).parent / f for f in runs.RUN_FILES["memcheck"]):
                if report.is_file():
                    (dest / step_log_name(s).replace(".log", ".sanitizer.log")).write_bytes(
                        header + report.read_bytes()[-LOG_KEEP:])


def one(name: str, out: Path, budget: float, device: str, scratch: Path) -> int:
    """Child process: one example's triage; its report to out/results/<name>.json."""
    work = scratch / "work" / name
    t0 = time.monotonic()
    if name == "load_device_mismatch_package":  # a CUDA .pt2 loaded where no GPU is visible
        pkg = work / "pkg.pt2"
        work.mkdir(parents=True, exist_ok=True)
        shutil.copytree(ROOT / "examples", work / "examples", dirs_exist_ok=True)
        script = "examples/load_device_mismatch.py"
        subprocess.run([sys.executable, script, "--mode", "package", "--device", "cuda", "--package", str(pkg),
                        "--build-only"], cwd=work, check=True, timeout=budget)
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the triage's runs inherit it
        argv = [sys.executable, script, "--load-only", "--package", str(pkg)]
        r = triage(TriageRequest(argv=argv, cwd=str(work), budget_s=budget, package_path=str(pkg)), [work])
        r.example = examples.check(examples.get(name), "cuda", r)
    else:
        r = examples.run_example(name, device=device, folder=work, budget_s=budget, force=True)
    r.elapsed_s = round(time.monotonic() - t0, 1)
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "results" / f"{name}.json").write_text(r.model_dump_json(indent=2))
    _keep_logs(name, r, out / "logs" / name, (out / "env.txt").read_text(), budget)
    return 0


def _child(name: str, out: Path, budget: float, device: str, scratch: Path) -> dict:
    env = child_env(keeps_host_cxx(name), TORCHINDUCTOR_COMPILE_THREADS="1", PYTHONUNBUFFERED="1",
                    AOTI_DEBUG_HOME=str(scratch / "home" / name))
    t0 = time.monotonic()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    with open(out / "logs" / f"{name}.suite.log", "wb") as log:
        try:
            rc = subprocess.run([sys.executable, __file__, "--one", name, str(out), "--budget", str(budget),
                                 "--device", device, "--scratch", str(scratch)],
                                env=env, stdout=log, stderr=subprocess.STDOUT, timeout=budget + 120).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    wall = round(time.monotonic() - t0, 1)
    res = out / "results" / f"{name}.json"
    if not res.is_file():
        return summary_row(name, None, wall, f"no result (child {rc}; see logs/{name}.suite.log)", device)
    return summary_row(name, TriageReport.model_validate_json(res.read_text()), wall, device=device)


def env_text() -> str:
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    tools = {t: shutil.which(t) for t in ("compute-sanitizer", "cuda-gdb", "gdb")}
    return (f"torch {torch.__version__} (git {torch.version.git_version[:8]}, cuda {torch.version.cuda}), {gpu}\n"
            f"python {sys.executable}; host CXX={os.environ.get('CXX', '(unset)')}; tools {tools}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--offline", type=Path, metavar="CAPTURE")
    ap.add_argument("--one", metavar="NAME")
    ap.add_argument("--replay", action="store_true", help="OUT_DIR (a suite output): check its kept reports again "
                    "with today's strict check, print what differed per example, and triage its kept logs offline "
                    "(the replay table)")
    ap.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S)
    ap.add_argument("--parallel", type=int, default=16)
    ap.add_argument("--only", default=".")
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of the CPU-capable examples (no GPU)")
    ap.add_argument("--scratch", type=Path, help="Packages, caches and run dirs (default: a new temp dir; kept "
                    "out of OUT_DIR so that stays small)")
    a = ap.parse_args()
    if a.one:
        return one(a.one, a.out, a.budget, a.device, a.scratch)
    if a.replay:
        print(suite_table(a.out) + "\n\n" + differences(recheck(a.out)) + "\n\n" + replay_table(replay(a.out)))
        return 0
    if a.offline:
        rows = offline(a.offline)
        print(classify_table(a.offline) + "\n\n" + table(rows, timed=False) + "\n\n" + differences(rows))
        if a.out:
            a.out.mkdir(parents=True, exist_ok=True)
            (a.out / "triage_offline.json").write_text(json.dumps(rows, indent=2))
        return 0
    if a.out is None:
        ap.error("OUT_DIR is required")
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "env.txt").write_text(env_text())
    scratch = a.scratch or Path(tempfile.mkdtemp(prefix="aoti_triage_suite."))
    names = [e.name for e in cuda_examples() if re.search(a.only, e.name) and a.device in e.devices
             and (a.device == "cuda" or e.runnable)]
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=a.parallel) as pool:
        rows = list(pool.map(lambda n: _child(n, a.out, a.budget, a.device, scratch), names))
    wall = time.monotonic() - t0
    (a.out / "triage_suite.json").write_text(json.dumps({"wall_s": round(wall, 1), "rows": rows}, indent=2))
    md = (f"{env_text()}\nwall {wall:.0f} s, {sum(r['match'] for r in rows)}/{len(rows)} match (strict check)\n\n"
          f"{table(rows, True)}\n\n{differences(rows)}\n")
    (a.out / "triage_suite.md").write_text(md)
    print(md)
    return 0 if all(r["match"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
