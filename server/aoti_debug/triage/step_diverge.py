"""triage for a finite wrong output: the first kernel diverging from eager (printer against the aoti_debug_eager
hook's node statistics), else the outputs' mismatch summary with the next step."""

from __future__ import annotations

from pathlib import Path

from aoti_debug.kernels.divergence import first_divergence, read_nodes
from aoti_debug.runs.eager_diff import HOOK_HELP
from aoti_debug.triage.context import Ctx
from aoti_debug.triage.fixes import select
from aoti_debug.triage.model import RootCause, Step

# The user's own comparison, as classify_error captures it (guides/wrong_output.md captures).
SUMMARY_FIELDS = ("mismatched", "mismatched_share", "greatest_diff", "greatest_rel_diff", "rmse", "error_value", "rtol",
                  "atol")


def nodes_file(ctx: Ctx) -> tuple[int, Path] | None:
    """The first captured call with the eager model's per-node statistics: (call index, their file)."""
    for rec in ctx.calls.records if ctx.calls else []:
        if rec.kind == "call" and rec.eager and rec.eager.nodes_file and Path(rec.eager.nodes_file).is_file():
            return rec.index, Path(rec.eager.nodes_file)
    return None


def diverge(ctx: Ctx, step: Step) -> None:
    """After a level-2 printer pass: the first kernel whose output no eager node agrees with."""
    found = nodes_file(ctx)
    if found is None or not step.log_path or not Path(step.log_path).is_file():
        why = next((r.eager.nodes_error for r in (ctx.calls.records if ctx.calls else [])
                    if r.eager and r.eager.nodes_error), None)
        step.found.append("no eager node statistics to compare the kernels with: " + (
            f"the eager graph could not be exported ({why})" if why else HOOK_HELP))
        return
    call, nodes_path = found
    d = first_divergence(Path(step.log_path), read_nodes(nodes_path), call)
    step.found.append(f"against eager (call {call}, {nodes_path.name}): {d.detail}")
    if d.kernel is None:
        return
    inputs = (f"its inputs agree with eager ({', '.join(d.inputs_agree)})" if d.inputs_agree and
              not d.inputs_unchecked else f"inputs not matched to eager: {', '.join(d.inputs_unchecked)}")
    reads = (f" The eager op(s) it computes read {', '.join(d.reads)}: a constant the package was built with "
             "that differs from the eager model's (weights or statistics changed after the build) shows here, "
             "as does an op lowered wrong in this kernel." if d.reads else
             " It reads no constant in eager: the op as compiled in this kernel is the suspect.")
    summary = (f"{d.kernel} is the first kernel whose output diverges from eager on the captured inputs "
               f"({d.buffer}, computing {', '.join(d.ops)}); {inputs}.{reads}")
    evidence = [d.detail] + ([f"earlier kernels agree: {', '.join(d.agreed[:4])}"] if d.agreed else [])
    cause = RootCause(named=not d.inputs_unchecked, level="culprit", kind="kernel_diverges", summary=summary,
                      pattern="wrong_output", kernel=d.kernel, op=d.ops[0] if d.ops else None,
                      evidence=evidence + ctx.calls.eager_mismatches[:2], step=step.index,
                      fixes=select("wrong_output", {"kind": "kernel_diverges", "kernel": d.kernel,
                                                    "op": ", ".join(d.ops) or "the op", "reads": ", ".join(d.reads)}))
    ctx.consider(cause)
    step.named_root_cause = cause.named


def output_mismatch(ctx: Ctx) -> RootCause | None:
    """No culprit found for a wrong output: the mismatch as measured, and what would locate it."""
    c = ctx.classification
    measured = list(ctx.calls.eager_mismatches[:3]) if ctx.calls else []
    if not measured and c is not None:
        fields = {k: c.fields[k] for k in SUMMARY_FIELDS if c.fields.get(k)}
        if fields:
            measured = ["the repro's comparison: " + ", ".join(f"{k} {v}" for k, v in fields.items())]
    hooked = bool(ctx.calls and any(r.eager for r in ctx.calls.records))
    nxt = ("run the triage with a command that rebuilds the package, so the printer pass can compare each kernel "
           "with eager" if hooked else HOOK_HELP)
    return RootCause(named=False, level="pattern", kind="output_mismatch", pattern="wrong_output",
                     summary="The package's outputs differ from eager with finite values"
                             + (f" ({measured[0]})" if measured else "") + f"; no kernel was located: {nxt}.",
                     evidence=measured)
