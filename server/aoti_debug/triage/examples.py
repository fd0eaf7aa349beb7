"""The planted-bug examples (examples/examples.yaml): run one through triage in a temporary folder, check the
diagnosis against the manifest's expectation (MATCH / MISMATCH)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.common.errors import BadInput, DataError
from aoti_debug.common.paths import examples_dir
from aoti_debug.common.yamlio import YAMLError, load_yaml
from aoti_debug.runs import proc
from aoti_debug.triage.engine import execute_held, plan, save
from aoti_debug.triage.model import DEFAULT_BUDGET_S, ExampleCheck, TriageReport, TriageRequest
from aoti_debug.triage.rules import rules

# The README's main job: the full chain (baseline, explain_index_oob, parity, sanity, dump_kernel_inputs).
DEFAULT_EXAMPLE = "index_oob"
# Expectations, most informed first: triage runs the sanity rerun and the backtrace when the guide asks.
STAGES = ("with_backtrace", "sanity", "baseline")  # most informed first
TORCH_CHECK_S = 120
FIND_TORCH = ("import importlib.util, sys; "
              "sys.exit(importlib.util.find_spec('torch') is None and 'No module named torch')")
# Manifest keys compared with the root cause's field of the same name when stated.
CULPRIT_KEYS = ("level", "op", "constant")


class Example(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    script: str
    args: list[str] = Field(default_factory=list)
    devices: list[str]
    description: str = ""
    bug: str = ""
    expected: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def runnable(self) -> bool:
        """Placeholders (<a CUDA .pt2>) and host-specific env mean a person must set it up."""
        return not any(a.startswith("<") for a in self.args) and "env" not in (self.model_extra or {})


@cache
def manifest() -> dict[str, Example]:
    path = examples_dir() / "examples.yaml"
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
        return {e["name"]: Example.model_validate(e) for e in data["examples"]}
    except (OSError, YAMLError, KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: {exc}") from exc


def get(name: str) -> Example:
    ex = manifest().get(name)
    if ex is None:
        raise BadInput(f"no example {name!r}; known: {', '.join(manifest())} (aoti-debug triage --list-examples)")
    return ex


# Per-stage facts compared with the report's root cause when the manifest states them (kernel: a substring).
FIELDS = ("input_index", "dim", "kernel")


def expectation(ex: Example, device: str) -> dict[str, Any]:
    """What triage should end with: one of the stages' patterns (it may stop before a later stage when the
    evidence already names the cause), the most informed stage's root cause, and per stage the input index,
    dim and kernel it states (compared for the stage the report ended at)."""
    exp = ex.expected.get(device) or {}
    stages = [(st, exp[st]) for st in STAGES if isinstance(exp.get(st), dict)]
    if not stages:
        return {}
    out: dict[str, Any] = {"pattern": stages[0][1].get("pattern"), "stage": stages[0][0],
                           "patterns": [d["pattern"] for _, d in stages if d.get("pattern")],
                           "verified": exp.get("verified", True),
                           "root_cause": next((d["root_cause"] for _, d in stages if d.get("root_cause")), None),
                           "stages": {st: {k: d[k] for k in ("pattern", *FIELDS) if d.get(k) is not None}
                                      for st, d in stages}}
    for key in (*FIELDS, *CULPRIT_KEYS):  # the most informed stage's value, for display
        out[key] = next((d[key] for _, d in stages if d.get(key) is not None), None)
    return out


def ended_at(exp: dict[str, Any], pattern: str | None) -> str:
    """The stage a report corresponds to: the most informed stage with its pattern, else the most informed."""
    return next((st for st, d in exp["stages"].items() if d.get("pattern") == pattern), exp["stage"])


def _same(key: str, want: object, got: object) -> bool:
    if key == "kernel":
        return isinstance(got, str) and str(want) in got
    return got == want


def check(ex: Example, device: str, report: TriageReport) -> ExampleCheck:
    """Compare the report with the manifest: pattern, root-cause kind (named), and the input index, dim and
    kernel that the stage it ended at states; every difference is listed."""
    exp = expectation(ex, device)
    rc = report.root_cause
    got = {"pattern": report.pattern, "root_cause": rc.kind if rc else None, "named": bool(rc and rc.named),
           **{k: getattr(rc, k) if rc else None for k in FIELDS}}
    diffs = []
    if exp.get("patterns") and report.pattern not in exp["patterns"]:
        diffs.append(f"pattern: expected {' or '.join(exp['patterns'])}, got {report.pattern}")
    want = exp.get("root_cause")
    if want is not None:
        kinds = rules().example_root_causes.get(want, [want])
        if not (rc and rc.named and rc.kind in kinds):
            diffs.append(f"root cause: expected {want} ({' or '.join(kinds)}), got "
                         + (f"{rc.kind} ({'named' if rc.named else 'not named'})" if rc else "none"))
    if exp:
        stage = ended_at(exp, report.pattern)
        for key in FIELDS:
            w = exp["stages"][stage].get(key)
            if w is not None and not _same(key, w, got[key]):
                what = f"a name containing {w!r}" if key == "kernel" else w
                diffs.append(f"{key.replace('_', ' ')}: expected {what} ({stage}), got "
                             + ("none" if got[key] is None else str(got[key])))
    for key in CULPRIT_KEYS:  # the culprit's level, op and constant, where the manifest states them
        want, have = exp.get(key), getattr(rc, key, None) if rc else None
        got[key] = have
        if want is not None and have != want:
            diffs.append(f"{key}: expected {want}, got {have}")
    return ExampleCheck(name=ex.name, device=device, expected=exp, got=got, match=not diffs, differences=diffs)


def command(ex: Example, device: str, python: str) -> tuple[list[str], list[str]]:
    """(argv that builds and runs, argv that only loads); the script puts its package in the working directory
    and prints its path."""
    args = list(ex.args)
    if "--device" not in args:
        args += ["--device", device]
    argv = [python, f"examples/{ex.script}", *args]
    return argv, [*argv, "--load-only"]


def _check_python(python: str) -> None:
    """torch is installed in python: found, not imported (an import is seconds the baseline run pays again; a torch
    that is there but broken fails the baseline, whose output says why)."""
    try:
        out = subprocess.run([python, "-c", FIND_TORCH], capture_output=True, text=True, timeout=TORCH_CHECK_S,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BadInput(f"cannot run {python}: {exc}") from exc
    if out.returncode != 0:
        raise BadInput(f"{python} cannot import torch: the examples need it (pass --python /path/to/python with "
                       f"torch installed): {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ''}")


def run_example(name: str = DEFAULT_EXAMPLE, *, device: str = "cpu", python: str | None = None,
                folder: Path | None = None, budget_s: float = DEFAULT_BUDGET_S, cancel: threading.Event | None = None,
                note: proc.Note | None = None, force: bool = False) -> TriageReport:
    """Copy the bundled example scripts to a temporary folder, triage the example there, check the result."""
    ex = get(name)
    if device not in ex.devices:
        raise BadInput(f"example {name} runs on {', '.join(ex.devices)}: pass --device {ex.devices[0]}")
    if not ex.runnable and not force:  # force: the host is set up (the GPU suite's toolchain case)
        raise BadInput(f"example {name} needs a set-up host ({ex.model_extra.get('needs') or ex.args}); "
                       "see examples/README.md")
    python = python or sys.executable
    _check_python(python)
    folder = Path(folder or tempfile.mkdtemp(prefix=f"aoti-debug-{name}-")).resolve()
    dest = folder / "examples"
    dest.mkdir(parents=True, exist_ok=True)
    for script in examples_dir().glob("*.py"):
        shutil.copy2(script, dest / script.name)
    argv, load_argv = command(ex, device, python)
    req = TriageRequest(argv=argv, load_argv=load_argv, cwd=str(folder), budget_s=budget_s)
    p = plan(req, [folder])
    report = execute_held(p, cancel=cancel, note=note)  # the run slot is given back
    report.example = c = check(ex, device, report)
    report.markdown += (f"\n\nExample `{name}` ({device}): **{'MATCH' if c.match else 'MISMATCH'}** with the "
                        f"manifest's expected diagnosis ({c.expected.get('pattern')}, {c.expected.get('root_cause')})"
                        + (": " + "; ".join(c.differences) if c.differences else "."))
    save(p, report)
    return report
