"""triage's steps as plug-ins: each is a StepRunner registered under the tool a guide's next_steps name.

A runner reads what it needs from the shared context (context.Ctx), runs its tool, records what it found in the
step, and updates the diagnosis through ctx.consider / ctx.adopt / ctx.establish; the engine only picks the next
step and calls the runner registered for its tool. A new kind of step is a module with one runner and a line here.
"""

from __future__ import annotations

from typing import Protocol

from aoti_debug.triage.context import Ctx
from aoti_debug.triage.model import Step
from aoti_debug.triage.step_dump import dump
from aoti_debug.triage.step_oob import oob
from aoti_debug.triage.step_package import parity
from aoti_debug.triage.step_rerun import rerun_preset


class StepRunner(Protocol):
    """Runs one next step of the matched guide and returns it with its findings, cost left to the engine."""

    def __call__(self, ctx: Ctx, step: Step, /) -> Step: ...


STEPS: dict[str, StepRunner] = {
    "check_parity": parity,
    "rerun_with_flags": rerun_preset,
    "explain_index_oob": oob,
    "dump_kernel_inputs": dump,
}


def runner(tool: str) -> StepRunner | None:
    """The runner registered for a guide's next-step tool; None for a tool triage does not run as a step."""
    return STEPS.get(tool)
