"""The culprit fixtures from real CPU runs: a generated kernel's segfault, plain and under the backtrace preset's gdb.

    python tests/culprit_fixture_logs.py          # writes both logs of tests/fixtures/culprit/ and the sources

examples/embedding_unchecked.py's package (built without the indirect-index asserts, cached by tests/pkgs.py) is
called with an id far past its table. `base`: the command as a user runs it; `backtrace`: the same command in the
batch gdb session the rerun tool's backtrace preset runs (aoti_debug.runs.forensics.debugger_argv / exec_env, with the
preset's environment). These logs are not goldens (no markers: the triage tests read them as a user's log and a
given backtrace log), so they are kept apart from tests/make_fixture_logs.py's. Trimmed by whole lines only.

The generated C++ the gdb frames name (the package's wrapper.cpp and kernel.cpp) is kept beside the logs, under
embedding_unchecked.sources/: inductor names and writes a CPU kernel by the host's vector ISA, so a package built
again on another machine can have other file names and lines than the ones this backtrace names.
"""

from __future__ import annotations

import json
import platform
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pkgs  # noqa: E402
from aoti_debug.package import kernel_sources  # noqa: E402
from aoti_debug.runs.forensics import debugger_argv, exec_env, find_debugger  # noqa: E402
from logtrim import TRIM_NOTE, trim  # noqa: E402
from make_fixture_logs import RUN_TIMEOUT_S, _base_env, _compiler, torch_version  # noqa: E402

ROOT = pkgs.ROOT
CULPRIT = ROOT / "tests" / "fixtures" / "culprit"
EXAMPLE = "embedding_unchecked"
BUG = "an embedding id of 10**12 for a 100-row table, in a package built with assert_indirect_indexing=False"
# The backtrace preset's environment (guides/debug-flags.md presets.backtrace); the baseline of a triage sets it too.
ENV = {"PYTHONFAULTHANDLER": "1"}


@dataclass
class Log:
    name: str  # tests/fixtures/culprit/embedding_unchecked.<name>.log
    command: str
    env_shown: dict[str, str]
    exit_status: int
    text: str
    tool: str = ""  # the debugger's version line, for the header


def _shown(s: str, pkg: Path) -> str:
    return s.replace(str(pkg), "$PKG").replace(str(ROOT) + "/", "")


def _run(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.run(argv, cwd=ROOT, env={**_base_env(), **env}, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S)
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")


def run_base(pkg: Path) -> Log:
    argv = [sys.executable, f"examples/{EXAMPLE}.py", "--load-only", "--package", str(pkg)]
    status, text = _run(argv, ENV)
    return Log("base", "python " + _shown(shlex.join(argv[1:]), pkg), ENV, status, text)


def run_backtrace(pkg: Path) -> Log:
    dbg = find_debugger()
    if not dbg:
        raise SystemExit("no gdb or cuda-gdb on PATH: the backtrace log needs one")
    target = [sys.executable, f"examples/{EXAMPLE}.py", "--load-only", "--package", str(pkg)]
    argv, extra = debugger_argv(dbg), exec_env(target)
    status, text = _run(argv, {**ENV, **extra})
    shown_target = json.dumps(["python", *target[1:]])
    env_shown = {**ENV, **{k: _shown(shown_target, pkg) for k in extra}}
    command = _shown(shlex.join([Path(dbg).name, *argv[1:]]).replace(shlex.quote(sys.executable), "python"), pkg)
    version = subprocess.run([dbg, "--version"], capture_output=True, text=True, timeout=60).stdout.split("\n")[0]
    return Log("backtrace", command, env_shown, status, text, version)


def write(log: Log) -> Path:
    body, dropped = trim(log.text)
    env = " ".join(f"{k}={v}" for k, v in log.env_shown.items())
    tool = f", {log.tool}" if log.tool else ""
    header = [
        f"# source: real CPU run, tests/culprit_fixture_logs.py {log.name} (python tests/culprit_fixture_logs.py)",
        f"# torch: {torch_version()}",
        f"# host: {platform.machine()}, Python {platform.python_version()}, {_compiler()}{tool}",
        f"# bug: {BUG}",
        f"# command: {log.command}",
        f"# package: examples/{EXAMPLE}.py --build-only (tests/pkgs.py build_example)",
        f"# env: {env}",
        f"# exit status: {log.exit_status}",
    ]
    if dropped:
        header.append(f"# trimmed: {dropped} lines, {TRIM_NOTE}")
    header.append("#")
    path = CULPRIT / f"{EXAMPLE}.{log.name}.log"
    path.write_text("\n".join(header) + "\n" + body.rstrip("\n") + "\n", encoding="utf-8")
    return path


def keep_sources(pkg: Path) -> Path:
    """The package's generated C++ as aoti_debug.package.kernel_sources reads it from the .pt2, kept as an extracted
    package folder (data/aotinductor/model/) that the same module reads back."""
    out = CULPRIT / f"{EXAMPLE}.sources"
    shutil.rmtree(out, ignore_errors=True)
    folder = out / "data" / "aotinductor" / "model"
    folder.mkdir(parents=True)
    src = kernel_sources.from_package(pkg)
    for s in src.wrappers + src.kernel_cpps:
        (folder / s.path.rsplit("/", 1)[-1]).write_text(s.text, encoding="utf-8")
    return out


def main() -> int:
    pkg = pkgs.build_example(EXAMPLE)
    CULPRIT.mkdir(parents=True, exist_ok=True)
    for run in (run_base, run_backtrace):
        log = run(pkg)
        print(f"{write(log).relative_to(ROOT)}: exit {log.exit_status}", flush=True)
    print(f"{keep_sources(pkg).relative_to(ROOT)}/", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
