#!/usr/bin/env python3
"""Capture real AOTI failure logs on a GPU host, for test fixtures (driven by capture.sh).

Runs the planted-bug examples (examples/*.py) under the flags and tools aoti-debug uses
(sanity rerun, deterministic CUDA, the intermediate-value printer, compute-sanitizer, cuda-gdb),
in parallel, each job in its own work dir with its own TORCHINDUCTOR_CACHE_DIR. Writes
<out>/gpu_capture.tar.gz (logs/, artifacts/, packages/, env.txt, summary.txt, jobs.json) and
<out>/summary.txt.

Every job has a timeout and the whole run a budget (CAPTURE_BUDGET_S); one failing job never
stops the others, and the tarball is written even on SIGTERM/SIGINT.

Environment knobs:
  CAPTURE_DEVICE=cuda|cpu   cpu = dry run of the CPU-capable subset (no CUDA-only jobs/tools)
  CAPTURE_PARALLEL=N        jobs at once (default 12 on cuda, 2 on cpu)
  CAPTURE_BUDGET_S=S        wall-time budget for the jobs (default 345); packaging follows
  CAPTURE_ONLY=REGEX        only job ids matching REGEX (and what they depend on)
  PYTHON                    interpreter for the examples (default python3)
  CUDA_GDB, COMPUTE_SANITIZER  tool paths (default: cuda-gdb, compute-sanitizer on PATH)
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
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
HERE = Path(__file__).resolve().parent

# Variables a job must not inherit: each job sets exactly the flags it is about.
CONTROLLED_ENV = (
    "AOTI_RUNTIME_CHECK_INPUTS",
    "TORCHINDUCTOR_NAN_ASSERTS",
    "TORCHINDUCTOR_RUNTIME_TRITON_NAN_ASSERTS",
    "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER",
    "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT",
    "AOT_INDUCTOR_DEBUG_COMPILE",
    "CUDA_LAUNCH_BLOCKING",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "PYTHONFAULTHANDLER",
    "TORCHINDUCTOR_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TORCHINDUCTOR_COMPILE_THREADS",
    "CXX",
)
SYSTEM_CXX = "/usr/bin/g++"
MAX_LOG_BYTES = 3 * 1024 * 1024  # per log, head + tail kept beyond that
TAR_LIMIT = 15 * 1024 * 1024  # the device tool returns files up to 16 MB
PACKAGE_BUDGET = 10 * 1024 * 1024  # .pt2 fixtures kept in the tarball, in priority order

SANITY = {"AOTI_RUNTIME_CHECK_INPUTS": "1", "TORCHINDUCTOR_NAN_ASSERTS": "1"}
DETERMINISTIC = {"CUDA_LAUNCH_BLOCKING": "1", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
FAULTHANDLER = {"PYTHONFAULTHANDLER": "1"}
CHECK_INPUTS = {"AOTI_RUNTIME_CHECK_INPUTS": "1"}
KEY_LINE = re.compile(
    r"(Error: |Assertion `|RuntimeError|AssertionError|AttributeError|AcceleratorError|Fatal Python error"
    r"|Segmentation fault|SIGSEGV|input_handles\[|At least one (NaN|INF)|========= (Invalid|ERROR SUMMARY)"
    r"|CUDA error|illegal memory access|terminate called|Program received signal|Tensor-likes are not close"
    r"|output contains NaN|matches eager|^output: |#0 |No NVIDIA|not compiled with CUDA)"
)


class Skip(Exception):
    """A job that cannot run (missing tool, dependency failed, no time left)."""


@dataclass
class Job:
    id: str
    argv: list[str]
    env: dict[str, str | None] = field(default_factory=dict)  # None = unset
    timeout: float = 240
    deps: list[str] = field(default_factory=list)
    compiles: bool = False  # collect generated sources from its cache dir
    package: Path | None = None  # what it builds, for dependents and fixtures
    keep_package: int = 0  # > 0: keep the .pt2 in the tarball (higher first)
    resource: str | None = None  # at most RESOURCES[resource] such jobs at once
    tool: str | None = None  # "compute-sanitizer" / "cuda-gdb": skipped when the tool is missing
    prepare: Callable[[Job, dict[str, Job]], None] | None = None
    note: str = ""
    # filled in while running
    workdir: Path | None = None
    status: str = "pending"  # pending|running|done|skipped
    rc: int | None = None
    signal: str = ""
    timed_out: bool = False
    start: float = 0.0
    end: float = 0.0
    started_at: str = ""
    proc: subprocess.Popen | None = None
    reason: str = ""
    full_env: dict[str, str] = field(default_factory=dict)

    @property
    def wall(self) -> float:
        return (self.end or time.time()) - self.start if self.start else 0.0

    @property
    def raw(self) -> Path:
        assert self.workdir is not None
        return self.workdir / "output.txt"


RESOURCES = {"cuda-gdb": 1, "sanitizer": 2}


def now_iso() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


class Capture:
    def __init__(self, out: Path, work: Path) -> None:
        self.out = out
        self.work = work
        self.device = os.environ.get("CAPTURE_DEVICE", "cuda")
        if self.device not in ("cuda", "cpu"):
            raise SystemExit(f"CAPTURE_DEVICE must be cuda or cpu, not {self.device!r}")
        self.dry = self.device == "cpu"
        self.parallel = int(os.environ.get("CAPTURE_PARALLEL", "2" if self.dry else "12"))
        self.budget = float(os.environ.get("CAPTURE_BUDGET_S", "345"))
        self.only = os.environ.get("CAPTURE_ONLY")
        self.python = shutil.which(os.environ.get("PYTHON", "python3")) or os.environ.get("PYTHON", "python3")
        self.cuda_gdb = shutil.which(os.environ.get("CUDA_GDB", "cuda-gdb"))
        self.sanitizer = shutil.which(os.environ.get("COMPUTE_SANITIZER", "compute-sanitizer"))
        self.stdbuf = shutil.which("stdbuf")
        self.orig_cxx = os.environ.get("CXX")  # the host's default, used by the toolchain job only
        self.root = work / "gpu_capture"
        self.logs = self.root / "logs"
        self.artifacts = self.root / "artifacts"
        self.jobs_dir = work / "jobs"
        for d in (self.logs, self.artifacts, self.jobs_dir):
            d.mkdir(parents=True, exist_ok=True)
        self.t0 = time.time()
        self.deadline = self.t0 + self.budget
        self.info: dict[str, str] | None = None
        self.info_proc: subprocess.Popen | None = None
        self.jobs: dict[str, Job] = {}
        self.stopping = False

    # ---------------------------------------------------------------- host facts
    def start_probe(self) -> None:
        code = (
            "import json, torch\n"
            "d = {'torch': torch.__version__, 'torch_git': getattr(torch.version, 'git_version', '?'),\n"
            "     'torch_cuda': str(torch.version.cuda)}\n"
            "try:\n    import triton; d['triton'] = triton.__version__\n"
            "except Exception as e:\n    d['triton'] = 'not importable: %s' % type(e).__name__\n"
            "try:\n"
            "    d['gpu'] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none (no CUDA device)'\n"
            "except Exception as e:\n    d['gpu'] = 'error: %s' % e\n"
            "print('CAPTURE_INFO=' + json.dumps(d))\n"
        )
        self.info_proc = subprocess.Popen(
            [self.python, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )

    def host_info(self) -> dict[str, str]:
        if self.info is None:
            info = {"torch": "?", "torch_git": "?", "torch_cuda": "?", "triton": "?", "gpu": "?"}
            if self.info_proc is not None:
                try:
                    out, _ = self.info_proc.communicate(timeout=5 if self.stopping else 90)
                    for line in out.splitlines():
                        if line.startswith("CAPTURE_INFO="):
                            info.update(json.loads(line.split("=", 1)[1]))
                except Exception as exc:  # noqa: BLE001 - report, never stop
                    self.info_proc.kill()
                    info["gpu"] = f"probe failed: {exc}"
            info["python"] = self.python
            info["host"] = os.uname().nodename
            self.info = info
        return self.info

    # ---------------------------------------------------------------- job table
    def ex(self, name: str, *args: str) -> list[str]:
        return [self.python, str(EXAMPLES / f"{name}.py"), *args]

    def add(self, job: Job) -> Job:
        assert job.id not in self.jobs, job.id
        self.jobs[job.id] = job
        return job

    def pkg(self, job_id: str, name: str, suffix: str = ".pt2") -> Path:
        return self.jobs_dir / job_id / f"{job_id.replace('.', '_')}{suffix}"

    def define_jobs(self) -> None:
        dev = self.device
        gpu = not self.dry
        D = ["--device", dev]

        def compile_job(jid, name, args=(), env=None, timeout=240, keep=0, note="", **kw) -> Job:
            p = self.pkg(jid, name, ".so" if "aot_load" in args else ".pt2")
            return self.add(
                Job(
                    jid,
                    self.ex(name, *args, "--package", str(p)),
                    dict(env or {}),
                    timeout,
                    compiles=True,
                    package=p,
                    keep_package=keep,
                    note=note,
                    **kw,
                )
            )

        def load_job(jid, dep, name, args=(), env=None, timeout=120, note="", wrap=None, **kw) -> Job:
            p = self.jobs[dep].package
            argv = self.ex(name, *args, "--package", str(p), "--load-only")
            if wrap:
                argv = wrap(argv)
            return self.add(Job(jid, argv, dict(env or {}), timeout, deps=[dep], note=note, **kw))

        def memcheck(argv: list[str]) -> list[str]:
            return [self.sanitizer or "compute-sanitizer", "--tool", "memcheck", *argv]

        def gdb(argv: list[str]) -> list[str]:
            return [
                self.cuda_gdb or "cuda-gdb",
                "-batch",
                "-ex",
                "set pagination off",
                "-ex",
                "run",
                "-ex",
                "bt",
                "--args",
                *argv,
            ]

        self.add(
            Job(
                "env.probe",
                ["bash", str(HERE / "env_probe.sh")],
                {"ORIG_CXX": self.orig_cxx or "", "PYTHON_BIN": self.python},
                timeout=150,
                note="host facts: GPUs, compilers, config.cpp.cxx, tool versions",
            )
        )
        # --- chains first: their dependents are slow (sanitizer, cuda-gdb) ---
        compile_job("index_oob.base", "index_oob", D, keep=3, note="pattern triton_index_out_of_bounds")
        if gpu:
            compile_job("ima_triton.base", "ima_triton", D, keep=1, note="user Triton kernel, id 1e9")
        # the host's default compiler on purpose (CXX as the host had it, unset if it had none)
        compile_job(
            "toolchain_segfault.base",
            "index_oob",
            D,
            env={"CXX": self.orig_cxx, **FAULTHANDLER},
            note="default inductor compiler; expected SIGSEGV on load (std::regex in parse_device_str)",
        )
        other = "cuda" if dev == "cpu" else "cpu"
        compile_job(
            f"load_device_mismatch.aot_load_{dev}_on_{other}.base",
            "load_device_mismatch",
            ["--mode", "aot_load", *D],
            env=FAULTHANDLER,
            note=f"deprecated aot_compile for {dev}, aot_load(device={other})",
        )
        for lvl_name in ("index_oob", "nan", "dynamic_zero_below_min"):
            compile_job(
                f"{lvl_name}.printer3",
                lvl_name,
                D,
                env={"AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "3", "CUDA_LAUNCH_BLOCKING": "1"},
            )

        # --- dependents of the chains (runtime-only flags: reuse the package, --load-only) ---
        if gpu:
            load_job(
                "index_oob.memcheck",
                "index_oob.base",
                "index_oob",
                D,
                timeout=240,
                wrap=memcheck,
                resource="sanitizer",
                tool="compute-sanitizer",
            )
            load_job(
                "ima_triton.memcheck",
                "ima_triton.base",
                "ima_triton",
                D,
                timeout=240,
                wrap=memcheck,
                resource="sanitizer",
                tool="compute-sanitizer",
            )
            load_job("index_oob.deterministic", "index_oob.base", "index_oob", D, env=DETERMINISTIC)
            load_job("ima_triton.deterministic", "ima_triton.base", "ima_triton", D, env=DETERMINISTIC)
        load_job(
            "toolchain_segfault.cuda_gdb",
            "toolchain_segfault.base",
            "index_oob",
            D,
            env={"CXX": self.orig_cxx},
            timeout=150,
            wrap=gdb,
            resource="cuda-gdb",
            tool="cuda-gdb",
        )
        load_job(
            f"load_device_mismatch.aot_load_{dev}_on_{other}.cuda_gdb",
            f"load_device_mismatch.aot_load_{dev}_on_{other}.base",
            "load_device_mismatch",
            ["--mode", "aot_load", *D],
            timeout=150,
            wrap=gdb,
            resource="cuda-gdb",
            tool="cuda-gdb",
        )
        for lvl_name, hint in (("index_oob", "embedding"), ("nan", "log"), ("dynamic_zero_below_min", "index")):
            j = compile_job(
                f"{lvl_name}.printer2_filtered",
                lvl_name,
                D,
                env={"AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "2"},
                prepare=_filter_from_level3(f"{lvl_name}.printer3", hint),
            )
            j.deps.append(f"{lvl_name}.printer3")

        # --- baselines ---
        compile_job("static_shape_mismatch.base", "static_shape_mismatch", D)
        compile_job("static_shape_mismatch_width.base", "static_shape_mismatch", [*D, "--wrong", "width"])
        compile_job("dynamic_above_max.base", "dynamic_above_max", D)
        compile_job("dynamic_zero_below_min.base", "dynamic_zero_below_min", D, keep=2)
        compile_job("dynamic_zero_below_min_nolb.base", "dynamic_zero_below_min", [*D, "--no-lowerbound-check"])
        compile_job("dtype_mismatch.base", "dtype_mismatch", D)
        compile_job("nan.base", "nan", D)
        if gpu:
            compile_job(
                "input_device_mismatch.cuda_pkg.base",
                "input_device_mismatch",
                ["--device", "cuda"],
                note="CUDA package, CPU input",
            )
            compile_job(
                "input_device_mismatch.cpu_pkg.base",
                "input_device_mismatch",
                ["--device", "cpu"],
                env=FAULTHANDLER,
                note="CPU package, CUDA input",
            )
            compile_job(
                f"load_device_mismatch.aot_load_{other}_on_{dev}.base",
                "load_device_mismatch",
                ["--mode", "aot_load", "--device", other],
                env=FAULTHANDLER,
                note=f"deprecated aot_compile for {other}, aot_load(device={dev})",
            )
            compile_job(
                "load_device_mismatch.package.base",
                "load_device_mismatch",
                ["--mode", "package", "--device", "cuda"],
                keep=1,
                note="builds and runs a CUDA .pt2 on the GPU host (works)",
            )
            load_job(
                "load_device_mismatch.package.no_gpu",
                "load_device_mismatch.package.base",
                "load_device_mismatch",
                ["--mode", "package", "--device", "cuda"],
                env={"CUDA_VISIBLE_DEVICES": "", **FAULTHANDLER},
                note="the same CUDA .pt2 loaded with no visible GPU",
            )

        # --- AOTI_RUNTIME_CHECK_INPUTS=1 alone (run time: reuse the baseline package) ---
        for base, name, args in [
            ("static_shape_mismatch.base", "static_shape_mismatch", D),
            ("static_shape_mismatch_width.base", "static_shape_mismatch", [*D, "--wrong", "width"]),
            ("dynamic_above_max.base", "dynamic_above_max", D),
            ("dynamic_zero_below_min.base", "dynamic_zero_below_min", D),
            ("dtype_mismatch.base", "dtype_mismatch", D),
            *(
                [
                    ("input_device_mismatch.cuda_pkg.base", "input_device_mismatch", ["--device", "cuda"]),
                    ("input_device_mismatch.cpu_pkg.base", "input_device_mismatch", ["--device", "cpu"]),
                ]
                if gpu
                else []
            ),
        ]:
            load_job(base.replace(".base", ".check_inputs"), base, name, args, env=CHECK_INPUTS, timeout=90)

        # --- sanity rerun: both flags, fresh cache, recompiled (as aoti-debug's preset does) ---
        sanity = [
            ("index_oob", D),
            ("static_shape_mismatch", D),
            ("static_shape_mismatch_width", [*D, "--wrong", "width"]),
            ("dynamic_above_max", D),
            ("dynamic_zero_below_min", D),
            ("dtype_mismatch", D),
            ("nan", D),
        ]
        if gpu:
            sanity += [
                ("ima_triton", D),
                ("input_device_mismatch.cuda_pkg", ["--device", "cuda"]),
                ("input_device_mismatch.cpu_pkg", ["--device", "cpu"]),
            ]
        for jid, args in sanity:
            name = jid.split(".")[0].replace("static_shape_mismatch_width", "static_shape_mismatch")
            compile_job(f"{jid}.sanity", name, args, env=SANITY)

        # --- printer level 2 unfiltered, NaN asserts alone ---
        for lvl_name in ("index_oob", "nan", "dynamic_zero_below_min"):
            compile_job(f"{lvl_name}.printer2", lvl_name, D, env={"AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "2"})
        compile_job("nan.nan_asserts", "nan", D, env={"TORCHINDUCTOR_NAN_ASSERTS": "1"})
        # the deterministic flags on the printer's index_oob are covered by printer3 (CUDA_LAUNCH_BLOCKING)

        if self.only:
            keep = {j for j in self.jobs if re.search(self.only, j)}
            todo = list(keep)
            while todo:
                for d in self.jobs[todo.pop()].deps:
                    if d not in keep:
                        keep.add(d)
                        todo.append(d)
            self.jobs = {k: v for k, v in self.jobs.items() if k in keep}

    # ---------------------------------------------------------------- running
    def job_env(self, job: Job) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in CONTROLLED_ENV}
        env.update(
            {
                "PYTHONUNBUFFERED": "1",
                "CXX": SYSTEM_CXX,
                "TORCHINDUCTOR_CACHE_DIR": str(job.workdir / "cache"),
                "TORCHINDUCTOR_COMPILE_THREADS": "1",
            }
        )
        for k, v in job.env.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def start(self, job: Job) -> None:
        job.workdir = self.jobs_dir / job.id
        job.workdir.mkdir(parents=True, exist_ok=True)
        for d in job.deps:
            dep = self.jobs[d]
            if dep.status == "skipped":
                raise Skip(f"dependency {d} was skipped")
            if dep.package is not None and not dep.package.exists() and job.prepare is None:
                raise Skip(f"dependency {d} did not build {dep.package.name}")
        if job.tool == "compute-sanitizer" and not self.sanitizer:
            raise Skip("compute-sanitizer not found")
        if job.tool == "cuda-gdb" and not self.cuda_gdb:
            raise Skip("cuda-gdb not found (set CUDA_GDB)")
        if job.prepare is not None:
            job.prepare(job, self.jobs)
        remaining = self.deadline - time.time()
        if remaining < min(job.timeout, 30):
            raise Skip(f"no time left ({remaining:.0f}s of the budget)")
        job.timeout = min(job.timeout, remaining)
        job.full_env = self.job_env(job)
        argv = list(job.argv)
        if self.stdbuf and job.tool != "cuda-gdb" and argv[0] != "bash":
            argv = [self.stdbuf, "-oL", "-eL", *argv]
        job.argv = argv
        job.started_at = now_iso()
        job.start = time.time()
        with open(job.raw, "wb") as fh:
            job.proc = subprocess.Popen(
                argv,
                cwd=job.workdir,
                env=job.full_env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        job.status = "running"

    def kill(self, job: Job) -> None:
        if job.proc is None or job.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(job.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                job.proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def kill_all(self, jobs: list[Job]) -> None:
        """SIGTERM every process group, give them 3 s together, then SIGKILL what is left."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for job in jobs:
                if job.proc is not None and job.proc.poll() is None:
                    try:
                        os.killpg(job.proc.pid, sig)
                    except ProcessLookupError:
                        pass
            end = time.time() + 3
            while time.time() < end and any(j.proc is not None and j.proc.poll() is None for j in jobs):
                time.sleep(0.1)
        for job in jobs:
            if job.proc is not None:
                try:
                    job.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass

    def finish(self, job: Job) -> None:
        job.end = time.time()
        rc = job.proc.returncode if job.proc else None
        if rc is not None and rc < 0:
            try:
                job.signal = signal.Signals(-rc).name
            except ValueError:
                job.signal = f"signal {-rc}"
            job.rc = 128 - rc
        else:
            job.rc = rc
        job.status = "done"
        try:
            self.write_log(job)
        except Exception as exc:  # noqa: BLE001
            print(f"[capture] writing the log of {job.id} failed: {exc}", file=sys.stderr)
        try:
            if job.compiles:
                self.collect(job)
        except Exception as exc:  # noqa: BLE001
            print(f"[capture] collecting artifacts of {job.id} failed: {exc}", file=sys.stderr)
        print(
            f"[capture] {time.time() - self.t0:6.1f}s done {job.id}: {self.status_text(job)} ({job.wall:.1f}s)",
            flush=True,
        )

    def status_text(self, job: Job) -> str:
        if job.status == "skipped":
            return f"skipped ({job.reason})"
        if job.status != "done":
            return job.status
        s = f"exit {job.rc}"
        if job.signal:
            s += f" ({job.signal})"
        if job.timed_out:
            s += " killed: capture stopped" if self.stopping else f" TIMEOUT after {job.wall:.0f}s"
        return s

    def header(self, job: Job) -> str:
        info = self.host_info()
        shown = ["PYTHONUNBUFFERED", *CONTROLLED_ENV, *job.env]
        changed = []
        for k in dict.fromkeys(shown):
            if k in job.full_env and k not in ("ORIG_CXX", "PYTHON_BIN"):
                changed.append(f"{k}={shlex.quote(job.full_env[k])}")
        # unset: what the host had set that this job drops, and what the job unsets on purpose
        unset = [
            k
            for k in dict.fromkeys([*CONTROLLED_ENV, *job.env])
            if k not in job.full_env and (k in os.environ or k in job.env)
        ]
        changed += [f"-u {k}" for k in unset]
        lines = [
            f"aoti-debug GPU capture, job {job.id}" + (f": {job.note}" if job.note else ""),
            f"torch: {info['torch']} (git {info['torch_git']}, cuda {info['torch_cuda']})",
            f"triton: {info['triton']}",
            f"gpu: {info['gpu']}",
            f"python: {info['python']}",
            f"capture_device: {self.device}",
            f"cwd: {job.workdir}",
            f"env: {' '.join(changed)}",
            f"command: {shlex.join(job.argv)}",
            f"repro: cd {shlex.quote(str(job.workdir))} && env {' '.join(changed)} {shlex.join(job.argv)}",
            f"exit_status: {job.rc}"
            + (f" (signal {job.signal})" if job.signal else "")
            + (
                f" (killed after {job.wall:.0f}s: {'capture stopped' if self.stopping else 'timeout'})"
                if job.timed_out
                else ""
            ),
            f"wall_s: {job.wall:.1f}",
            f"date: {job.started_at}",
        ]
        return "".join(f"# {line}\n" for line in lines) + "#\n"

    def write_log(self, job: Job) -> None:
        data = job.raw.read_bytes() if job.raw.exists() else b""
        if len(data) > MAX_LOG_BYTES:
            half = MAX_LOG_BYTES // 2
            cut = len(data) - 2 * half
            data = data[:half] + f"\n[... capture: {cut} bytes cut ...]\n".encode() + data[-half:]
        (self.logs / f"{job.id}.log").write_bytes(self.header(job).encode() + data)

    def collect(self, job: Job) -> None:
        dest = self.artifacts / job.id
        dest.mkdir(parents=True, exist_ok=True)
        cache = job.workdir  # the cache dir is <workdir>/cache; aot_compile writes beside its .so
        trailers = []
        if cache.is_dir():
            for p in sorted(cache.rglob("*")):
                if not p.is_file():
                    continue
                n = p.name
                keep = n.endswith((".wrapper.cpp", ".kernel.cpp", "wrapper_metadata.json", "kernel_metadata.json"))
                if n.endswith(".py") and p.stat().st_size < 512 * 1024:
                    head = p.read_text(errors="replace")[:4000]
                    keep = "triton" in head
                if not keep:
                    continue
                rel = p.relative_to(cache)
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, target)
                if n.endswith(".cpp"):
                    text = p.read_text(errors="replace").splitlines()
                    for i, line in enumerate(text):
                        if line.startswith(("// Compile cmd", "// Link cmd")):
                            trailers.append(f"== {rel}\n{line}\n" + "\n".join(text[i + 1 : i + 2]))
        (dest / "compile_cmd.txt").write_text("\n".join(trailers) + "\n")
        if job.package is not None and job.package.exists() and job.package.suffix == ".pt2":
            import zipfile

            with zipfile.ZipFile(job.package) as z:
                names = z.namelist()
                (dest / "package_files.txt").write_text("".join(f"{i.file_size}\t{i.filename}\n" for i in z.infolist()))
                for n in names:
                    if n.endswith("wrapper_metadata.json"):
                        (dest / "package_wrapper_metadata.json").write_bytes(z.read(n))

    def run(self) -> None:
        pending = list(self.jobs.values())
        running: list[Job] = []
        while (pending or running) and not self.stopping:
            for job in list(running):
                rc = job.proc.poll()
                if rc is None and time.time() - job.start > job.timeout:
                    job.timed_out = True
                    self.kill(job)
                    rc = job.proc.poll()
                if rc is not None:
                    running.remove(job)
                    self.finish(job)
            for job in list(pending):
                if len(running) >= self.parallel:
                    break
                if any(self.jobs[d].status in ("pending", "running") for d in job.deps):
                    continue
                if job.resource and sum(r.resource == job.resource for r in running) >= RESOURCES[job.resource]:
                    continue
                pending.remove(job)
                try:
                    self.start(job)
                    running.append(job)
                    print(
                        f"[capture] {time.time() - self.t0:6.1f}s start {job.id} (timeout {job.timeout:.0f}s)",
                        flush=True,
                    )
                except Skip as exc:
                    job.status, job.reason = "skipped", str(exc)
                    print(f"[capture] {time.time() - self.t0:6.1f}s skip {job.id}: {exc}", flush=True)
                except Exception as exc:  # noqa: BLE001
                    job.status, job.reason = "skipped", f"failed to start: {exc!r}"
                    print(f"[capture] {time.time() - self.t0:6.1f}s skip {job.id}: {exc!r}", flush=True)
            time.sleep(0.3)
        self.kill_all(running)
        for job in running:
            job.timed_out = True
            self.finish(job)
        for job in pending:
            if job.status == "pending":
                job.status, job.reason = "skipped", "capture stopped"

    # ---------------------------------------------------------------- output
    def summary(self) -> str:
        info = self.host_info()
        lines = [
            f"aoti-debug GPU capture ({self.device}) on {info['host']}, {now_iso()}",
            f"torch {info['torch']} (git {info['torch_git']}, cuda {info['torch_cuda']}), triton {info['triton']}, "
            f"gpu {info['gpu']}",
            f"python {info['python']}; host CXX={self.orig_cxx or '<unset>'}; jobs use CXX={SYSTEM_CXX} "
            "except toolchain_segfault.*",
            f"tools: compute-sanitizer={self.sanitizer or 'missing'} cuda-gdb={self.cuda_gdb or 'missing'}",
            f"parallel {self.parallel}, budget {self.budget:.0f}s, total {time.time() - self.t0:.0f}s",
            "",
            f"{'job':50} {'status':40} {'wall_s':>7}  key line",
        ]
        for job in self.jobs.values():
            key = ""
            if job.workdir is not None and job.raw.exists():
                output = job.raw.read_text(errors="replace").splitlines()
                # traceback source lines (indented) and the example's own report are weak evidence
                hits = [ln for ln in output if KEY_LINE.search(ln)]
                strong = [h for h in hits if not h[:1].isspace() and not h.startswith(("output: ", "matches eager"))]
                key = (strong or hits or [""])[0].strip()[:160]
            extra = f" [{job.reason}]" if job.reason and job.status != "skipped" else ""
            lines.append(f"{job.id:50} {self.status_text(job)[:40]:40} {job.wall:7.1f}  {key}{extra}")
        return "\n".join(lines) + "\n"

    def package(self) -> Path:
        text = self.summary()
        (self.root / "summary.txt").write_text(text)
        table = []
        for j in self.jobs.values():
            table.append(
                {
                    "id": j.id,
                    "argv": j.argv,
                    "env": j.env,
                    "status": j.status,
                    "rc": j.rc,
                    "signal": j.signal,
                    "timed_out": j.timed_out,
                    "wall_s": round(j.wall, 1),
                    "reason": j.reason,
                    "note": j.note,
                    "deps": j.deps,
                    "workdir": str(j.workdir) if j.workdir else None,
                    "package": str(j.package) if j.package else None,
                }
            )
        (self.root / "jobs.json").write_text(json.dumps(table, indent=1))
        pk = self.root / "packages"
        pk.mkdir(exist_ok=True)
        used = 0
        for j in sorted(self.jobs.values(), key=lambda j: -j.keep_package):
            if j.keep_package and j.package is not None and j.package.exists():
                size = j.package.stat().st_size
                if used + size <= PACKAGE_BUDGET:
                    shutil.copy2(j.package, pk / f"{j.id}.pt2")
                    used += size
        tar = self.out / "gpu_capture.tar.gz"
        for attempt in range(3):
            with tarfile.open(tar, "w:gz") as t:
                t.add(self.root, arcname="gpu_capture")
            if tar.stat().st_size <= TAR_LIMIT:
                break
            if attempt == 0:  # too big: keep only the index_oob package
                for p in pk.glob("*.pt2"):
                    if p.name != "index_oob.base.pt2":
                        p.unlink()
            else:  # still too big: no packages, no large artifacts
                shutil.rmtree(pk, ignore_errors=True)
                for p in self.artifacts.rglob("*"):
                    if p.is_file() and p.stat().st_size > 256 * 1024:
                        p.unlink()
        (self.out / "summary.txt").write_text(text + f"\ntarball: {tar} ({tar.stat().st_size} bytes)\n")
        return tar


def _last_unmatched_kernel(text: str, hint: str) -> tuple[str | None, str]:
    """The level-3 kernel to filter on: the last unmatched before_launch, else the first matching ``hint``."""
    open_: list[str] = []
    order: list[str] = []
    for m in re.finditer(r"\[ (before_launch|after_launch): (\S+) \]", text):
        kind, name = m.groups()
        if kind == "before_launch":
            open_.append(name)
            order.append(name)
        elif name in open_:
            open_.remove(name)
    if open_:
        return open_[-1], "last before_launch without after_launch"
    generated = [k for k in order if k.startswith(("triton_", "cpp_"))]
    for k in generated:
        if hint in k:
            return k, f"no unmatched launch; first generated kernel containing {hint!r}"
    if generated:
        return generated[0], "no unmatched launch; first generated kernel"
    return None, "no kernel names in the level-3 log"


def _filter_from_level3(dep: str, hint: str) -> Callable[[Job, dict[str, Job]], None]:
    def prepare(job: Job, jobs: dict[str, Job]) -> None:
        src = jobs[dep]
        if src.workdir is None or not src.raw.exists():
            raise Skip(f"no level-3 log from {dep}")
        kernel, why = _last_unmatched_kernel(src.raw.read_text(errors="replace"), hint)
        if kernel is None:
            raise Skip(why)
        job.env["AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT"] = kernel
        job.note = f"filter {kernel} from {dep} ({why})"

    return prepare


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--list", action="store_true", help="print the job table and exit")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    cap = Capture(a.out.resolve(), a.work.resolve())
    cap.define_jobs()
    if a.list:
        for j in cap.jobs.values():
            print(
                f"{j.id:58} timeout={j.timeout:4.0f} deps={','.join(j.deps) or '-'} "
                f"env={' '.join(f'{k}={v}' for k, v in j.env.items())}\n    {shlex.join(j.argv)}"
            )
        return 0

    def on_signal(signum, _frame):
        print(f"[capture] got {signal.Signals(signum).name}: stopping jobs, writing the tarball", flush=True)
        cap.stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    cap.start_probe()
    print(
        f"[capture] {len(cap.jobs)} jobs, device {cap.device}, parallel {cap.parallel}, "
        f"budget {cap.budget:.0f}s, work {cap.work}",
        flush=True,
    )
    try:
        cap.run()
    finally:
        tar = cap.package()
        print(f"[capture] wrote {tar} ({tar.stat().st_size} bytes) after {time.time() - cap.t0:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
