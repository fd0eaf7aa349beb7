"""The crash explanation for a person: what failed, the root cause, the evidence, the fix; short enough for chat."""

from __future__ import annotations

from aoti_debug.classify import context
from aoti_debug.classify.guides import load_guides
from aoti_debug.triage.causes import guide_fix
from aoti_debug.triage.model import Step, TriageReport

MAX_EVIDENCE = 5
MAX_FIXES = 3
LINE_CHARS = 240
STOPPED = {
    "root_cause_named": "the evidence names the root cause",
    "steps_exhausted": "the guide's steps ran out before the evidence named a cause",
    "budget": "the time budget ran out (some steps were skipped)",
    "cancelled": "it was cancelled",
    "error": "a step failed with an internal error",
}


def _cut(text: str, n: int = LINE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def step_label(s: Step) -> str:
    if s.tool == "rerun_with_flags" and not s.preset:
        return "baseline run"
    return s.tool + (f" {s.preset}" if s.preset else "")


def key_line(r: TriageReport) -> str | None:
    """The line that shows what failed: the first step's strongest evidence."""
    for s in r.steps:
        if s.evidence:
            return s.evidence[0]
    return None


def outsider(r: TriageReport) -> context.Outsider | None:
    """Whose failure the log is, when the report ended unknown and the classifier named an outsider."""
    return context.named(r.outsider) if r.outsider and r.unnamed else None


def next_thing(r: TriageReport) -> str:
    """What to do when no cause was named: the first step that was skipped or could not conclude."""
    skipped = [s for s in r.steps if s.status == "skipped"]
    if r.root_cause and r.root_cause.named:
        return r.root_cause.fixes[0] if r.root_cause.fixes else "Apply the fix above and rerun the repro."
    if skipped:
        s = skipped[0]
        return f"Run {step_label(s)} ({s.why.rstrip('.')}); it was skipped: {s.skipped_because}."
    if (foreign := outsider(r)) is not None:
        return f"Not an AOTI failure. {foreign.next}"
    if r.unnamed:
        return ("Keep the full output (stdout and stderr) and rerun with the minifier preset to shrink the model; "
                "report it with the log if nothing above applies.")
    return f"Read the guide {load_guides()[r.pattern].uri} and try its fixes one by one."


def markdown(r: TriageReport) -> str:
    """A short markdown explanation of the report."""
    g = load_guides().get(r.pattern or "unknown")
    title = r.title or (g.title if g else "unknown")
    out = [f"### AOTI crash: {title} (`{r.pattern}`)", ""]
    what = r.seen if r.unnamed and r.seen else (g.summary if g else "")
    foreign = outsider(r)
    line = key_line(r)
    out.append(f"**What failed.** {what}" + (f" Key line: `{_cut(line)}`" if line else ""))
    if r.initial_pattern and r.initial_pattern != r.pattern:
        out.append(f"(The first run looked like `{r.initial_pattern}`; a later step showed the real pattern.)")
    rc = r.root_cause
    out.append("")
    if rc and rc.named:
        by = next((s for s in r.steps if s.index == rc.step), None)
        out.append(f"**Root cause** (shown by step {rc.step}" + (f", {step_label(by)}" if by else "") + f"): "
                   f"{rc.summary}")
    elif rc and rc.against:
        out.append(f"**A cause the evidence contradicts (not the root cause):** {rc.summary}")
    elif rc and rc.level == "pattern":
        out.append(f"**Failure class known, culprit not named:** {rc.summary}")
    elif rc:
        out.append(f"**Most likely cause (not confirmed):** {rc.summary}")
    else:
        out.append("**Root cause:** not named by the evidence gathered.")
    evidence = list(dict.fromkeys((rc.evidence if rc else []) + [e for s in r.steps for e in s.evidence[:1]]))
    if evidence:
        out += ["", "**Evidence for**"] + [f"- `{_cut(e)}`" for e in evidence[:MAX_EVIDENCE] if e]
    if rc and rc.against:
        out += ["", "**Evidence against**"] + [f"- {_cut(e)}" for e in rc.against[:MAX_EVIDENCE]]
    fixes = ([f for f in (rc.fixes if rc else []) if f] or ([foreign.next] if foreign else [])
             or [x for x in [guide_fix(r.pattern or "unknown")] if x])
    if fixes:
        out += ["", "**Fix**"] + [f"{i}. {_cut(f, 400)}" for i, f in enumerate(fixes[:MAX_FIXES], 1)]
    if not (rc and rc.named) and not foreign:  # an outsider's fix above is its next step
        out += ["", f"**Next:** {next_thing(r)}"]
    if r.similar_reports and r.unnamed:  # no pattern: the threads it reads like are the next lead
        out += ["", "**Public reports it reads like**"] + [
            f"- {s.url} (`{s.pattern}`, similarity {s.similarity:.2f})" for s in r.similar_reports]
    chain = "; ".join(f"{s.index}. {step_label(s)} " + (f"({s.cost_s:.0f} s)" if s.status != "skipped"
                                                            else "(skipped)") for s in r.steps)
    out += ["", f"Steps: {chain}. Stopped because {STOPPED.get(r.stopped_because or '', 'it ended')}; "
                f"{r.tool_calls} tool calls, {r.elapsed_s:.0f} s."]
    return "\n".join(out)
