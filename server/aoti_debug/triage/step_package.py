"""triage's check_parity step: the package against the runtime, then the culprit steps that need the package (an
OOM request matched to a buffer and an input dim, a constant name against the package's FQNs)."""

from __future__ import annotations

from aoti_debug.classify.engine import classify_text
from aoti_debug.common.errors import AotiDebugError
from aoti_debug.package.pt2zip import open_pt2
from aoti_debug.parity.engine import check_parity
from aoti_debug.parity.model import ParityReport
from aoti_debug.runs import store as runs
from aoti_debug.triage import culprits
from aoti_debug.triage.causes import from_parity
from aoti_debug.triage.context import PARITY_S, TAIL, Ctx, prefetched, reroute, skip
from aoti_debug.triage.model import Step
from aoti_debug.triage.rules import rules

# Parity kinds that say the package's device and the load side differ.
DEVICE_KINDS = {"load_device", "no_cuda_build", "no_gpu", "compute_capability", "device_type"}
MAX_WRAPPER_CHARS = 32 * 2**20


def _same_device(ctx: Ctx, rep: ParityReport) -> str | None:
    """Record that the runtime has the package's device type when parity compared them and found nothing."""
    model = rep.package.model()
    rt = rep.runtime
    if model is None or rt is None or rt.torch_version is None or not model.device_key:
        return None
    if any(m.kind in DEVICE_KINDS for m in rep.mismatches if m.severity == "error"):
        return None
    if model.device_key == "cuda" and not rt.cuda_available:
        return None
    on = rep.load_device or model.device_key
    sentence = (f"check_parity: the package was compiled for {model.device_key} and torch {rt.torch_version} loads "
                f"it on {on} (same device type)")
    ctx.establish("same_device", sentence)
    return sentence


def _wrapper(ctx: Ctx, member: str | None) -> str | None:
    if ctx.package is None or member is None:
        return None
    try:
        with open_pt2(ctx.package) as arc:
            return arc.read_text(member, MAX_WRAPPER_CHARS)
    except (AotiDebugError, OSError):
        return None


def _package_culprit(ctx: Ctx, step: Step, wrapper_member: str | None) -> None:
    """Culprit steps of the current pattern that need the package's facts."""
    pattern = ctx.report.pattern
    if pattern not in ("out_of_memory", "constant_loading") or ctx.log_path is None:
        return
    text = runs.tail(ctx.log_path, TAIL)
    c = ctx.classification if ctx.classification and ctx.classification.pattern == pattern else classify_text(text)
    if pattern == "out_of_memory":
        cause = culprits.oom(c, text, _wrapper(ctx, wrapper_member), ctx.contract, step.index)
        what = "the failed request matched to a buffer of the package"
    else:
        cause = culprits.constant(c, step.index, ctx.contract)
        what = "the constant name against the package's constants"
    if cause is None:
        step.found.append(f"could not name the culprit from {what}")
        return
    step.found.append(f"{what}: {cause.summary}")
    ctx.consider(cause)
    step.named_root_cause = step.named_root_cause or cause.named


def parity(ctx: Ctx, step: Step) -> Step:
    if ctx.package is None or not ctx.package.is_file():
        return skip(step, "no package known: pass package_path (the command's output named no existing .pt2)"
                    if ctx.package is None else f"{ctx.package} is a folder of sources, not a .pt2")
    if ctx.left() < PARITY_S:
        ctx.budget_hit = True
        return skip(step, f"budget: {ctx.left():.0f} s left")
    step.ran = [str(ctx.package)]
    captured = ctx.calls is not None and any(r.kind == "call" and r.inputs for r in ctx.calls.records)
    rep = check_parity(ctx.package, probe_runtime=ctx.req.probe_runtime, roots=ctx.roots,
                       inputs_run=ctx.calls_run if captured else None, runtime=prefetched(ctx, step))
    if captured:
        step.found.append(f"inputs compared: {rep.inputs_source} (captured by the baseline)")
        # parity compares one call's inputs: with more calls the others would go unchecked
        if ctx.calls.calls == 1 and rep.inputs and rep.predicted_check_error is None and not any(
                m.severity == "error" and m.input_index is not None for m in rep.mismatches):
            ctx.establish("inputs_within_contract", "check_parity compared the inputs of the one call the baseline "
                          "made with the package's contract and found none outside it (what "
                          "AOTI_RUNTIME_CHECK_INPUTS=1 checks)")
    model = rep.package.model()
    if model is not None:
        ctx.contract = model.contract
        ctx.compiler = model.toolchain.compiler if model.toolchain else None
        step.found.append(f"compiled for {model.device_key or '?'}" + (f" by {ctx.compiler}" if ctx.compiler else "")
                          + (f"; {len(model.contract.inputs)} inputs: " + ", ".join(
                              f"{s.index} {s.name} {s.describe()}" for s in model.contract.inputs[:4])
                              if model.contract else ""))
    step.found.append(rep.summary)
    pattern = ctx.report.pattern or "unknown"
    explains = set(rules().parity_explains.get(pattern, []))
    suggests = set(rules().parity_suggests.get(pattern, []))
    for m in rep.mismatches[:4]:
        step.evidence.append(f"{m.severity}: {m.message}")
        if m.severity == "error" and m.kind in explains and not step.named_root_cause:
            # an input mismatch the captured call shows is the input's failure class, whatever surfaced first
            owner = rules().parity_cause_pattern.get(m.kind) if m.input_index is not None else None
            cause = from_parity(m, owner or pattern, step.index)
            if cause.named and owner:
                reroute(ctx, step, owner)
            ctx.consider(cause)
            step.named_root_cause = cause.named
        elif m.kind in suggests and ctx.root is None:
            ctx.consider(from_parity(m, pattern, step.index).model_copy(update={"named": False}))
            step.found.append(f"likely cause, to be confirmed: {m.title}")
    if ctx.req.probe_runtime:
        same = _same_device(ctx, rep)
        step.found += [same] if same else []
    else:
        step.found.append("runtime not probed (probe_runtime=false): package facts only")
    _package_culprit(ctx, step, model.wrapper if model else None)
    return step
