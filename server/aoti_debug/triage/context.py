"""What triage's steps share: the context (the request, the diagnosis so far, what earlier steps learned) and
the helpers every step uses; the steps themselves are plug-ins in registry.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from aoti_debug.classify.engine import Classification
from aoti_debug.classify.guides import load_guides
from aoti_debug.kernels.index_oob_model import OobExplanation
from aoti_debug.package.contract import InputContract
from aoti_debug.runs import proc
from aoti_debug.runs import store as runs
from aoti_debug.runs.calls import CallsReport
from aoti_debug.runs.forensics import (
    Faulthandler,
)
from aoti_debug.runs.probe import ProbeOutcome
from aoti_debug.triage.ahead import Ahead
from aoti_debug.triage.causes import from_classification
from aoti_debug.triage.model import RootCause, Step, TriageReport, TriageRequest
from aoti_debug.triage.rules import more_specific, names_cause, rules

# When nothing was measured yet: a CPU compile of a small model.
COMPILE_GUESS_S = 60.0
# A run shorter than this is not worth starting.
MIN_RUN_S = 10.0
PARITY_S = 15.0
TAIL = 4 * 2**20
# On every run of a python script unless the request runs commands exactly as given (capture_calls=false): the ISA
# probe answers of the triage's first run (in its shared inductor cache) serve the later ones (guides/debug-flags.md).
REUSE_PROBE_PRESET = "reuse_isa_probe"
MAX_SOURCE_CHARS = 8 * 2**20


@dataclass
class Ctx:
    """What the steps share: the request, the current diagnosis and what earlier steps learned."""

    req: TriageRequest
    roots: list[Path]
    report: TriageReport
    cwd: str | None = None
    deadline: float = 0.0
    cancel: threading.Event | None = None
    note: proc.Note | None = None
    t0: float = field(default_factory=time.monotonic)
    log_path: Path | None = None  # the failing run's output
    assert_log: Path | None = None  # the latest log holding an index assert
    cache_dir: Path | None = None  # the baseline's inductor cache (sources when there is no package)
    shared_cache: Path | None = None  # the triage's one inductor cache, shared by reruns whose flags allow it
    runtime_probe: Future | None = None  # check_parity's runtime probe, started beside the baseline run
    classification: Classification | None = None
    package: Path | None = None
    contract: InputContract | None = None
    compiler: str | None = None
    fault: Faulthandler | None = None
    oob: OobExplanation | None = None
    root: RootCause | None = None
    argv_compiles: bool | None = None
    run_s: float = COMPILE_GUESS_S  # a plain run of argv (with its compile)
    load_s: float | None = None  # a run of load_argv
    budget_hit: bool = False
    facts: dict[str, str] = field(default_factory=dict)  # what steps established, by name (triage.yaml contradicted_by)
    kernel: str | None = None  # a generated kernel a native backtrace crashed in
    calls: CallsReport | None = None  # the baseline's package loads and calls (the capture runner)
    enrich: Callable[[Ctx, RootCause], None] | None = None  # adds the culprit to a cause named from a log
    calls_run: str | None = None  # the run that captured them
    ahead: Ahead | None = None  # a later step's run started beside the current one (triage_ahead)

    def runner_presets(self) -> list[str]:
        """Presets every rerun of the command gets besides its own."""
        return [REUSE_PROBE_PRESET] if self.req.capture_calls else []

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def progress(self, message: str) -> None:
        if self.note:
            self.note(time.monotonic() - self.t0, 0, message)

    def contradict(self, cause: RootCause) -> RootCause:
        """List the established facts that argue against this cause; a contradicted cause is not named."""
        for f in rules().contradicted_by.get(cause.kind, []):
            if f in self.facts and self.facts[f] not in cause.against:
                cause.against.append(self.facts[f])
        if cause.against:
            cause.named = False
        return cause

    def establish(self, fact: str, sentence: str) -> None:
        """A fact a step showed; it may overturn the current cause."""
        self.facts[fact] = sentence
        if self.root is not None:
            self.contradict(self.root)

    def consider(self, cause: RootCause | None) -> None:
        """Keep a named cause over a hypothesis, a culprit over a pattern, an uncontradicted cause over a
        contradicted one; the first named one ends the chain."""
        if cause is None:
            return
        self.contradict(cause)
        r = self.root
        if r is None or (cause.named and not r.named) or (not r.named and (
                (cause.level == "culprit" and r.level == "pattern") or (r.against and not cause.against))):
            self.root = cause

    def adopt(self, c: Classification | None, step: Step) -> bool:
        """A more specific pattern from this step's output becomes the diagnosis; True if it changed."""
        if c is None:
            return False
        step.pattern = c.pattern
        changed = more_specific(c, self.report.pattern)
        if changed:
            if self.report.pattern is not None:
                step.found.append(f"the diagnosis is now {c.pattern} ({c.title})")
            self.classification, self.report.pattern, self.report.title = c, c.pattern, c.title
        if c.pattern == "triton_index_out_of_bounds" and step.log_path:
            self.assert_log = Path(step.log_path)
        if names_cause(c) and (changed or c.pattern == self.report.pattern):
            log = runs.tail(Path(step.log_path), TAIL) if c.pattern == "cpp_compile_error" and step.log_path else None
            cause = from_classification(c, step.index, self.contract, self.read_source, log)
            if self.enrich is not None:  # the culprit steps' look at the op (step_culprit.enrich_cause)
                self.enrich(self, cause)
            self.consider(cause)
            step.named_root_cause = cause.named
        return changed

    def read_source(self, path: str) -> str | None:
        """A source file a compiler error names, only inside the run's inductor cache or the allowed roots."""
        p = Path(path)
        places = [d for d in (self.cache_dir, *self.roots) if d is not None]
        try:
            rp = p.resolve()
            if not p.is_absolute() or not any(rp.is_relative_to(d.resolve()) for d in places) or not rp.is_file():
                return None
            return rp.read_text(encoding="utf-8", errors="replace")[:MAX_SOURCE_CHARS]
        except OSError:
            return None


def skip(step: Step, why: str) -> Step:
    step.status, step.skipped_because = "skipped", why
    return step


def prefetched(ctx: Ctx, step: Step) -> ProbeOutcome | None:
    """The runtime probe taken beside the baseline (None: probe now); its own cost goes into the step."""
    if ctx.runtime_probe is None or not ctx.req.probe_runtime:
        return None
    try:
        (runtime, _inputs), cost = ctx.runtime_probe.result()
    except Exception as exc:  # the probe failed to run at all: probe again, in the step
        step.found.append(f"the runtime probe beside the baseline failed ({exc}); probed again")
        return None
    step.found.append(f"runtime probed beside the baseline run ({cost:.0f} s)")
    return runtime


def reroute(ctx: Ctx, step: Step, pattern: str) -> None:
    """A named cause of another failure class moves the diagnosis to that class's pattern."""
    if pattern != ctx.report.pattern:
        ctx.report.pattern = pattern
        ctx.report.title = load_guides()[pattern].title
        step.found.append(f"the diagnosis is now {pattern}")
