"""The short markdown explanation of an OobExplanation: what failed, where it comes from, the cause, the fixes."""

from __future__ import annotations

from aoti_debug.kernels.index_oob_model import CallArg, OobExplanation

MAX_CALL_CHARS = 300


def _who(a: CallArg) -> str:
    if a.model_input:
        return f"`{a.name}` (model input {a.input_index})"
    if a.size_of:
        return f"`{a.name}` = `{a.size_of}`"
    return f"`{a.name}`"


def _guard(e: OobExplanation) -> str:
    g = e.bound.guard if e.bound else None
    if g is None:
        return "guards: unknown (no check_input code read)"
    lo = f">= {g.min}" if g.min is not None else "**no lower bound**"
    hi = f"<= {g.max}" if g.max is not None else "no upper bound"
    when = {"runtime_env": "checked only with AOTI_RUNTIME_CHECK_INPUTS=1", "always": "always checked",
            "absent": "no input checks in this package"}.get(g.enforced, "check state unknown")
    return f"guards on it: {lo}, {hi} ({when})"


def markdown(e: OobExplanation) -> str:
    if e.assertion is None:
        return "No `index out of bounds` assertion in the log: nothing to explain. Pass the full output of the " \
               "failing run (stderr included)."
    a = e.assertion
    out = [f"**`index out of bounds: {a.text}`** in "
           + (f"`{e.kernel}` ({'Triton' if e.kernel_kind == 'triton' else 'C++ CPU'} kernel)" if e.kernel
              else "a kernel not found in these sources")]
    if e.assert_source:
        out.append(f"- Assertion: `{e.assert_source.file}:{e.assert_source.line}`: `{e.assert_source.text}`")
    if len(e.candidates) > 1:
        out.append(f"- Same assertion text in: {', '.join(f'`{c}`' for c in e.candidates)}")
    if e.source_nodes:
        ops = f"; ATen: {', '.join(e.aten_ops)}" if e.aten_ops else ""
        src = "" if e.ops_from == "comment" else " (from the kernel name)"
        out.append(f"- Made from: {', '.join(e.source_nodes)}{ops}{src}")
    if e.call_site:
        text = e.call_site.text if len(e.call_site.text) <= MAX_CALL_CHARS else e.call_site.text[:MAX_CALL_CHARS] + "…"
        out.append(f"- Call site `{e.call_site.file}:{e.call_site.line}`: `{text}`")
    b = e.bound
    if b and b.input is not None:
        rt = f"; at run time it was **{b.runtime_value}**" if b.runtime_value is not None else ""
        out.append(f"- Bound `{b.text}`: `{b.param}` = `{b.call_expr}` = `{b.input}.size({b.dim})`, model input "
                   f"{b.input_index} dimension {b.dim}{rt}; {_guard(e)}")
    elif b and b.value is not None:
        out.append(f"- Bound `{b.text}` is static" + (f": `{b.tensor}` dimension {b.dim}" if b.tensor else ""))
    if e.index_from:
        clamp = ", clamped to the size" if e.clamped else ""
        into = f"; it indexes {', '.join(_who(x) for x in e.indexed)}" if e.indexed else ""
        out.append(f"- Index `{a.tmp_var}` is loaded from {', '.join(_who(x) for x in e.index_from)}{clamp}{into}")
    out.append("")
    out.append(f"**Likely root cause: {e.root_cause_title}.** " + " ".join(e.why))
    if e.fixes:
        out.append("")
        out.append("Fix options:")
        out += [f"{i}. {f}" for i, f in enumerate(e.fixes, 1)]
    if e.notes:
        out.append("")
        out += [f"_Note: {n}_" for n in e.notes]
    return "\n".join(out)
