"""classify_error: stream a log, match the guides' rules, return the pattern with its evidence and fields."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from aoti_debug.classify import context, similar
from aoti_debug.classify import phase as phases
from aoti_debug.classify.guides import PATTERN_IDS, NextStep, load_guides, rules
from aoti_debug.classify.logscan import EVIDENCE_PER_PATTERN, Hits, Matcher
from aoti_debug.classify.similar import SimilarReport
from aoti_debug.common import logread
from aoti_debug.common.errors import BadInput
from aoti_debug.common.signals import signal_name

CHUNK = 1 << 20
DECISIVE, STRONG = 0.5, 0.9
# That nothing matched is weak evidence that no known pattern applies: `unknown` is never surer than this.
UNKNOWN_MAX = 0.5
# With no decisive line in a log that shows a compiled model (a phase marker or a rule's cue, not aoti_only), the
# family that the weak cues rank at least this high is named, at a confidence below DECISIVE: a guess, and said to
# be one.
GUESS, GUESS_MAX = 0.3, 0.45
# `unknown` as an alternative in a log with no sign of a compiled model: the absence is itself weak evidence.
NO_AOTI_MIN = 0.1
# Every id: a line that yields to any of them never counts (a rule's score from its causes alone).
ALL_IDS = frozenset(PATTERN_IDS)


class Evidence(BaseModel):
    line: int = Field(description="1-based line number in the log (0: from the exit status, not the text)")
    text: str = Field(description="The cleaned line, cut to 400 characters")
    pattern: str = Field(description="Pattern id this line is evidence for")
    weight: float = Field(description="Weight of the regex that matched")


class Alternative(BaseModel):
    pattern: str
    title: str
    confidence: float = Field(ge=0, le=1)
    evidence: list[Evidence] = Field(default_factory=list, description="Its strongest line")
    source: Literal["rules", "similar_reports", "silent"] = Field(default="rules", description=(
        "What ranked it: 'rules' (a line or weak cue of the log; for 'unknown', a log with no compiled model or a "
        "weak winner), 'similar_reports' (the patterns of the public "
        "reports nearest the log, see the result's similar_reports; confidence: their share of similarity times "
        "its nearest report's; no evidence line), or 'silent' (nothing else ranked anything: the failures that "
        "need no error line of their own, a wrong or NaN result, are a guess of last resort; a fixed prior, no "
        "evidence line)"))


class GuideRef(BaseModel):
    id: str
    title: str
    path: str = Field(description="Absolute path of the guide's markdown file")
    uri: str = Field(description="MCP resource URI, aoti-guide://<id>")


class Classification(BaseModel):
    """The diagnosis of one log."""

    pattern: str = Field(description="Pattern id (a public contract), 'unknown' if no rule matched")
    title: str
    summary: str = Field(description="What the pattern is; for 'unknown', what was seen (weak cues, the phase)")
    confidence: float = Field(ge=0, le=1, description=(
        "Noisy-OR of the weights of the winner's matched regexes; for 'unknown', at most 0.5 and lower the "
        "more weak cues point at a pattern (0.5 for an outsider's log: another engine's, a hand-written Triton "
        "kernel's or a native build's, whatever it reads like); for a best "
        "guess from agreeing weak cues (no decisive line), at most "
        "0.45 and the summary says so"))
    guess: bool = Field(default=False, description=(
        "True when no line decided and weak cues that agree (the exception type with a frame, cue or phase of the same "
        "family) named the pattern: a best guess, at a confidence of at most 0.45"))
    phase: phases.LogPhase | None = Field(default=None, description=(
        "Where it failed: export, compile, load or run, from the last phase marker in the log (export or "
        "Inductor frames, the package loader, the run call), else the pattern's own phase, else the last marker any "
        "program prints (a compiler's diagnostic, the loader's words for a library it could not load), else where "
        "the pattern usually happens (see phase_basis); null if none says"))
    phase_basis: phases.PhaseBasis | None = Field(default=None, description=(
        "What the phase rests on: 'marker' (a line of the log), 'pattern' (the winning pattern happens in that "
        "phase only), 'usual' (no line says; where this pattern usually happens, a prior to confirm), 'observed' "
        "(a tool saw it happen)"))
    alternatives: list[Alternative] = Field(default_factory=list, description=(
        "Next best patterns, up to 3, ranked by their regexes and weak cues (frames, file names, wrappers, "
        "exception types, the phase); 'unknown' (no AOTI failure: the error may be eager PyTorch's own) comes first "
        "when the log shows no compiled model (no phase marker or cue but those any program prints), and second when "
        "it does but the winner is short of 0.9 (first when the rules rank no other pattern). The patterns of the "
        "nearest public reports rank among the others by their confidence (source 'similar_reports'; that can be "
        "'unknown' too); a pattern both rank is listed once, at the surer of the two"))
    evidence: list[Evidence] = Field(default_factory=list, description="Lines that decided it")
    fields: dict[str, str] = Field(default_factory=dict, description="Values the rule captured")
    guide: GuideRef
    outsider: str | None = Field(default=None, description=(
        "Whose failure the log is when it is no compiled model's: engine (another ML runtime), triton (a Triton kernel "
        "the program launched itself), torchscript (a TorchScript program), build (a build of its own native code), "
        "install (torch itself failed to import or to load its own libraries), onnx (an ONNX export checked against "
        "ONNX Runtime), compile_dynamo (torch.compile's own Dynamo tracing limit, no export or AOTI); null otherwise"))
    next_steps: list[NextStep] = Field(default_factory=list, description=(
        "The guide's steps to take next, in order (none for an outsider's log, another engine's, a hand-written Triton "
        "kernel's or a native build's: no AOTI tool applies)"))
    similar_reports: list[SimilarReport] = Field(default_factory=list, description=(
        "The public reports (the corpus's dev split and the fresh reports beside it, each with its thread's URL and "
        "the pattern a person chose) whose words the end of the log shares most, up to 3: evidence to check, not a "
        "diagnosis"))
    lines_scanned: int = 0
    bytes_scanned: int = 0


def _guide_ref(pattern: str) -> GuideRef:
    g = load_guides()[pattern]
    return GuideRef(id=g.id, title=g.title, path=str(g.path), uri=g.uri)


def _evidence(h: Hits, limit: int | None = None, cues: bool = False) -> list[Evidence]:
    ev = [Evidence(line=line, text=text, pattern=h.rule.id, weight=h.patterns[idx].weight)
          for idx, line, text, _ in h.evidence(cues)]
    return ev if limit is None else sorted(ev, key=lambda e: -e.weight)[:limit]


def _winner(scored: dict[str, tuple[float, Hits]]) -> tuple[float, Hits]:
    """The decisive rule of highest priority, else the best weak one; a symptom only when nothing else matched."""
    matched = [(s, h) for s, h in scored.values() if s > 0]
    causes = [m for m in matched if not m[1].rule.symptom]
    matched = causes or matched
    tier = [m for m in matched if m[0] >= STRONG] or [m for m in matched if m[0] >= DECISIVE]
    if tier:
        return max(tier, key=lambda m: m[1].rule.priority)
    if matched:
        return max(matched, key=lambda m: (m[0], m[1].rule.priority))
    return 0.0, scored["unknown"][1]


def _seen(others: list[Hits], marker: phases.Marker | None, excs: Hits | None = None, aoti: bool = True) -> str:
    """What an `unknown` log showed: the weak cues, the exception types that counted and the phase marker."""
    counted = [(i, g) for i, _l, _t, g in (excs.evidence() if excs else []) if aoti or not excs.patterns[i].aoti_only]
    notes = [f"exception {g['exception']}" if "exception" in g else excs.patterns[i].note for i, g in counted[-2:]]
    for h in others:
        for idx, _line, _text, _ in h.evidence(cues=True)[-1:] + h.evidence()[-1:]:
            note = h.patterns[idx].note.split(";")[0].rstrip(".")
            if note and note not in notes:
                notes.append(note)
    if marker is not None:
        notes.append(f"phase {marker.phase} ({marker.note})")
    if not notes:
        return "Nothing matched: no known error line, no AOTI or Inductor frame, no phase marker."
    likely = ", ".join(h.rule.id for h in others)
    return f"No decisive line. Seen: {'; '.join(notes[:4])}." + (f" Weakly suggests: {likely}." if likely else "")


def _with_reports(alternatives: list[Alternative], votes: list[tuple[str, float]], winner: str) -> list[Alternative]:
    """The rules' alternatives and the patterns the nearest public reports carry, ranked together by confidence (a
    rule's first at equal confidence), up to 3; a pattern both rank is listed once, at the surer of the two. `unknown`
    as the rules place it (no AOTI failure) keeps its slot, and a report's `unknown` then adds nothing."""
    nope = next((i for i, a in enumerate(alternatives) if a.pattern == "unknown"), None)
    guides = load_guides()
    near = [Alternative(pattern=p, title=guides[p].title, confidence=v, source="similar_reports")
            for p, v in votes if p != winner]
    ranked: dict[str, Alternative] = {}
    for a in sorted([a for a in alternatives if a.pattern != "unknown"] + near, key=lambda a: -a.confidence):
        if a.pattern not in ranked and not (nope is not None and a.pattern == "unknown"):
            ranked[a.pattern] = a
    out = list(ranked.values())[:3 if nope is None else 2]
    if nope is not None:
        out.insert(nope, alternatives[nope])
    return out


def classify_chunks(chunks: Iterable[bytes], exit_status: int | str | None = None) -> Classification:
    """Classify a stream of byte chunks (bounded memory for any log size)."""
    rule_list = rules()
    hits = [Hits.of(r) for r in rule_list]
    marks = Hits(list(phases.markers()), 0)  # every marker is a cue: it says the phase and may mark a compiled model
    excs = Hits(list(phases.exception_cues()), len(phases.exception_cues()))
    engines, ours = Hits(context.engines(), 0), context.watches()
    for watch in ours.values():
        chunks = watch(chunks)
    tail = similar.Tail()
    chunks = tail(chunks)
    matcher = Matcher([h.patterns for h in hits] + [marks.patterns, excs.patterns, engines.patterns],
                      key=load_guides())
    nlines, nbytes, blank = matcher.scan(chunks, [*hits, marks, excs, engines])
    if blank:
        raise BadInput("the log is empty: pass the full output of the failing run (stdout and stderr)")
    sig = signal_name(exit_status)
    # A compiled model or package shows itself by a phase marker or a weak cue of some rule (an aoti_only one, text any
    # program prints, says the phase or ranks but shows nothing).
    rule_cued = any(h.cued() for h in hits)
    aoti_context = marks.cued() or rule_cued
    # A kernel's fault (an illegal access, a device-side assert) says the phase and lets eager-shared lines decide,
    # but every CUDA program prints one: it does not show a compiled model when no AOTI failure is weighed below.
    model_shown = marks.cued(model=True) or rule_cued
    # A line that is the consequence of another failure (yields_to) stops counting when that failure decides by
    # its other lines: a consequence never makes its cause decisive, so chains and cycles settle in a pass.
    causes = frozenset(h.rule.id for h in hits if h.score(aoti_context, ALL_IDS) >= DECISIVE)
    scored = {h.rule.id: (h.score(aoti_context, causes - {h.rule.id}), h) for h in hits}
    if sig:  # the exit status is evidence too, though not a line of the log: strong only when nothing else is
        seg_score, seg = scored["segfault_no_message"]
        cause_printed = any(sc >= DECISIVE for pid, (sc, _) in scored.items() if pid != "segfault_no_message")
        scored["segfault_no_message"] = (max(seg_score, DECISIVE if cause_printed else STRONG), seg)
    score, win = _winner(scored)
    # An outsider's log (another engine's lines and no word of PyTorch; a Triton kernel launched by Triton's own JIT,
    # or a build of the program's own code, and no word of Inductor): what it reads like is only an alternative, since
    # none of our fixes applies to it, unless the outsider keeps that pattern (the hardware's, the environment's).
    foreign = context.foreign(engines, ours, win.rule.id)
    if foreign is not None:
        score, win = 0.0, scored["unknown"][1]
    seen = [(line, idx) for idx, line, _t, _g in marks.evidence(cues=True)]
    # Alternatives: the other rules that matched or that weak cues (the phase, exception types) point at, together.
    marked_phase = phases.decide(seen, [])[0]
    phase_hint = phases.hints(marked_phase, [], aoti_context)
    exc_hint = phases.hints(None, sorted(excs.first), aoti_context)
    hint = phases.hints(marked_phase, sorted(excs.first), aoti_context)
    ranked = {pid: (round(1 - (1 - max(s, h.rank())) * (1 - hint.get(pid, 0.0)), 4), h)
              for pid, (s, h) in scored.items()}
    guessed = False
    if win.rule.id == "unknown" and aoti_context and foreign is None:
        # Two independent weak signals that agree (the exception type, and a frame, cue or the phase of the same
        # family) name the family; one alone, such as a generic wrapper line, never does.
        agree = [m for pid, m in ranked.items() if m[0] >= GUESS and exc_hint.get(pid, 0.0) > 0
                 and (max(scored[pid][0], m[1].rank()) > 0 or phase_hint.get(pid, 0.0) > 0)]
        if agree:
            score, win = max(agree, key=lambda m: (m[0], m[1].rule.priority))
            score, guessed = min(score, GUESS_MAX), True
    guides = load_guides()
    fields: dict[str, str] = {}
    for _idx, _line, _text, groups in win.evidence(every=True):  # later (or, for first_match, earlier) hits win
        for k, v in groups.items():
            if k in win.rule.captures and (not win.rule.first_match or k not in fields):
                fields[k] = win.rule.value_maps.get(k, {}).get(v, v)
    if sig:
        fields["signal"] = sig
    evidence = [e for e in _evidence(win) or (_evidence(win, cues=True) if guessed else []) if e.line > 0]
    if sig and win.rule.id == "segfault_no_message":
        evidence.append(Evidence(line=0, text=f"process ended by {sig} (exit status {exit_status})",
                                 pattern="segfault_no_message", weight=STRONG))
    log_phase, marker, basis = phases.decide(seen, win.rule.phase, win.rule.usual_phase)
    others = sorted((m for m in ranked.values() if m[0] > 0 and m[1] is not win and m[1].rule.id != "unknown"),
                    key=lambda m: (-m[0], -m[1].rule.priority))[:3]
    if win.rule.id != "unknown" and (not model_shown or score < STRONG):
        # That the log is no AOTI failure at all (an eager-only error that reads like a pattern, or none we know) is
        # an alternative, surer the weaker the winner is: the first one in a log that shows no compiled model (no
        # cue, no phase marker but a kernel's fault), the second after a winner short of strong in one that does. In
        # the corpus's dev split, such a winner when wrong was a negative more often than any other alternative was
        # right.
        at = 1 if model_shown else 0
        nope = (round(max(NO_AOTI_MIN, UNKNOWN_MAX * (1.0 - score)), 4), scored["unknown"][1])
        others = [*others[:at], nope, *others[at:2]]
    alternatives = [Alternative(pattern=h.rule.id, title=guides[h.rule.id].title, confidence=s,
                                evidence=[e for e in _evidence(h, 1) or _evidence(h, 1, cues=True) if e.line > 0])
                    for s, h in others]
    g = guides[win.rule.id]
    summary, confidence = g.summary, score
    if guessed:
        summary = f"{_seen([win], marker, excs, aoti_context)} Best guess: {g.summary}"
    if win.rule.id == "unknown":
        confidence = round(UNKNOWN_MAX * (1.0 - max((m[0] for m in others), default=0.0)), 4)
        summary = _seen([h for _s, h in others], marker, excs, aoti_context)
        evidence = [e for _s, h in others for e in _evidence(h, 1, cues=True) if e.line > 0][:EVIDENCE_PER_PATTERN]
        if foreign is not None:  # the outsider's line, then the lines of what it reads like
            outsider, idx, line, text = foreign
            confidence = UNKNOWN_MAX
            reads = ", ".join(h.rule.id for _s, h in others)
            summary = (outsider.says.format(line=line, note=engines.patterns[idx].note)
                       + (f" It reads like: {reads}." if reads else ""))
            evidence = [Evidence(line=line, text=text, pattern="unknown", weight=engines.patterns[idx].weight),
                        *(e for a in alternatives for e in a.evidence if e.line != line)][:EVIDENCE_PER_PATTERN]
    reports, votes = similar.nearest(tail.text())
    alternatives = _with_reports(alternatives, votes, win.rule.id)
    if not alternatives and win.rule.id == "unknown" and foreign is None:
        # Nothing ranked anything: if the run failed, its values are what is left to suspect (a last-resort guess).
        silent = sorted((g.rule for g in guides.values() if g.rule and g.rule.silent_prior),
                        key=lambda r: -(r.silent_prior or 0))
        alternatives = [Alternative(pattern=r.id, title=guides[r.id].title, confidence=r.silent_prior, source="silent")
                        for r in silent]
    return Classification(
        pattern=win.rule.id, title=g.title, summary=summary, confidence=confidence, guess=guessed, phase=log_phase,
        phase_basis=basis, alternatives=alternatives, similar_reports=reports,
        evidence=evidence, fields=fields, guide=_guide_ref(win.rule.id),
        outsider=foreign[0].name if foreign is not None else None,
        next_steps=[] if foreign is not None else win.rule.next_steps,
        lines_scanned=nlines, bytes_scanned=nbytes,
    )


def observed(pattern: str, evidence: list[str], phase: phases.LogPhase | None = None) -> Classification:
    """A diagnosis a tool observed instead of reading it in a log (the capture runner's NaN outputs): its evidence
    is at line 0, not a line of the log."""
    g, rule = load_guides()[pattern], next(r for r in rules() if r.id == pattern)
    return Classification(pattern=pattern, title=g.title, summary=g.summary, confidence=STRONG, phase=phase,
                          phase_basis="observed" if phase else None,
                          evidence=[Evidence(line=0, text=t, pattern=pattern, weight=STRONG) for t in evidence],
                          guide=_guide_ref(pattern), next_steps=rule.next_steps)


def classify_text(text: str | bytes, exit_status: int | str | None = None) -> Classification:
    """Classify log text given in memory."""
    data = text.encode("utf-8", errors="replace") if isinstance(text, str) else text
    return classify_chunks((data[i:i + CHUNK] for i in range(0, len(data), CHUNK)), exit_status)


def classify_file(path: str | Path, exit_status: int | str | None = None,
                  within: list[Path] | None = None) -> Classification:
    """Classify a log file, streamed; within: the folders it must lie in (checked on the opened file)."""
    p = Path(path).expanduser()
    if not p.exists():
        raise BadInput(f"no such log file: {p}")
    if not p.is_file():
        raise BadInput(f"not a regular file: {p}")
    try:
        result = classify_chunks(logread.file_chunks(p, CHUNK, within), exit_status)
    except PermissionError as exc:
        raise BadInput(f"cannot read {p}: {exc.strerror}") from exc
    return result
