"""classify_error: stream a log, match the guides' rules, return the pattern with its evidence and fields."""

from __future__ import annotations

import re
import signal as _signal
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from pydantic import BaseModel, Field

from aoti_debug import logclean
from aoti_debug import phase as phases
from aoti_debug.errors import BadInput
from aoti_debug.guides import NextStep, Pattern, Rule, load_guides, rules

CHUNK = 1 << 20
# Of a "line" longer than this (binary junk, a progress bar without newlines) only the tail is kept: the
# message usually ends the line, and memory stays bounded.
MAX_LINE = 1 << 20
EVIDENCE_PER_PATTERN = 4
EVIDENCE_TEXT = 400
# Logs repeat lines (printer stats, per-thread asserts): a bounded memo matches each distinct line once.
MEMO_LINE, MEMO_ENTRIES = 4096, 20000
# Up to this many distinct matched lines in a chunk, their places are found by bytes.find (C), not a Python loop.
FEW_MATCHED = 16
DECISIVE, STRONG = 0.5, 0.9
# That nothing matched is weak evidence that no known pattern applies: `unknown` is never surer than this.
UNKNOWN_MAX = 0.5


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
        "more weak cues point at a pattern"))
    phase: phases.LogPhase | None = Field(default=None, description=(
        "Where it failed: export, compile, load or run, from the last phase marker in the log (export or "
        "Inductor frames, the package loader, the run call), else the pattern's own phase; null if neither says"))
    alternatives: list[Alternative] = Field(default_factory=list, description=(
        "Next best patterns, up to 3, ranked by their regexes and weak cues (frames, file names, wrappers)"))
    evidence: list[Evidence] = Field(default_factory=list, description="Lines that decided it")
    fields: dict[str, str] = Field(default_factory=dict, description="Values the rule captured")
    guide: GuideRef
    next_steps: list[NextStep] = Field(default_factory=list)
    lines_scanned: int = 0
    bytes_scanned: int = 0


@dataclass
class _Hits:
    """Matches of one group of regexes (a rule's patterns then its cues): bounded first/last lines per regex."""

    patterns: list[Pattern]
    decisive: int  # patterns[:decisive] decide; the rest are cues
    first_match: bool = False
    rule: Rule | None = None
    first: dict[int, list[tuple[int, str, dict[str, str]]]] = field(default_factory=dict)
    last: dict[int, deque[tuple[int, str, dict[str, str]]]] = field(default_factory=dict)

    @classmethod
    def of(cls, rule: Rule) -> _Hits:
        return cls([*rule.patterns, *rule.cues], len(rule.patterns), rule.first_match, rule)

    def add(self, idx: int, lineno: int, text: str, groups: dict[str, str]) -> None:
        hit = (lineno, text, groups)
        first = self.first.setdefault(idx, [])
        if len(first) < EVIDENCE_PER_PATTERN:
            first.append(hit)
        self.last.setdefault(idx, deque(maxlen=EVIDENCE_PER_PATTERN)).append(hit)

    def _noisy_or(self, idxs: Iterable[int]) -> float:
        miss = 1.0
        for idx in idxs:
            miss *= 1.0 - self.patterns[idx].weight
        return round(1.0 - miss, 4)

    def score(self, aoti_context: bool = True) -> float:
        """Noisy-OR of the matched patterns (eager-shared text counts only in a log that shows AOTI)."""
        return self._noisy_or(i for i in self.first if i < self.decisive
                              and (aoti_context or not self.patterns[i].aoti_only))

    def rank(self) -> float:
        """Patterns and cues together: orders the alternatives."""
        return self._noisy_or(self.first)

    def cued(self) -> bool:
        return any(i >= self.decisive for i in self.first)

    def evidence(self, cues: bool = False, every: bool = False) -> list[tuple[int, int, str, dict[str, str]]]:
        """(pattern index, line, text, groups) sorted by line; first or last hits as the rule asks."""
        source = self.first if self.first_match else self.last
        hits = [(idx, *h) for idx, hs in source.items() for h in hs if (idx >= self.decisive) == cues]
        if any(not self.patterns[h[0]].frame for h in hits):  # a stated failure beats the frames around it
            hits = [h for h in hits if not self.patterns[h[0]].frame]
        if not every:  # one entry per line: its strongest regex (the first listed on a tie)
            best: dict[int, tuple[int, int, str, dict[str, str]]] = {}
            for h in hits:
                b = best.get(h[1])
                if b is None or (-self.patterns[h[0]].weight, h[0]) < (-self.patterns[b[0]].weight, b[0]):
                    best[h[1]] = h
            hits = [h for h in hits if best[h[1]] is h]
        hits.sort(key=lambda h: h[1])
        return hits[:EVIDENCE_PER_PATTERN * 2] if self.first_match else hits[-EVIDENCE_PER_PATTERN * 2:]


def _excerpt(line: str, m: re.Match[str]) -> str:
    """The cleaned line cut to EVIDENCE_TEXT characters around the match (a long line's message is at its end)."""
    if len(line) <= EVIDENCE_TEXT:
        return line
    start = max(0, min(m.start(), len(line) - EVIDENCE_TEXT))
    return line[start:start + EVIDENCE_TEXT]


class _Matcher:
    """Compiled groups of regexes: needle -> [(group index, pattern index, regex)]."""

    _built: tuple[object, dict[bytes, list[tuple[int, int, re.Pattern[str]]]], dict[bytes, list[bytes]]] | None = None

    def __init__(self, groups: list[list[Pattern]], key: object):
        built = _Matcher._built
        if built is None or built[0] is not key:  # the tables depend only on the loaded guides: build them once
            by_needle: dict[bytes, list[tuple[int, int, re.Pattern[str]]]] = {}
            for gi, patterns in enumerate(groups):
                for pi, p in enumerate(patterns):
                    rx = re.compile(p.regex)
                    for needle in p.needles:
                        by_needle.setdefault(needle.encode(), []).append((gi, pi, rx))
            built = _Matcher._built = (key, by_needle, _minimal(list(by_needle)))
        _, self.by_needle, self.within = built
        self.search = list(self.within)
        self.memo: dict[bytes, list[tuple[int, int, str, dict[str, str]]]] = {}

    def _match_line(self, raw: bytes, seeds: set[bytes]) -> list[tuple[int, int, str, dict[str, str]]]:
        """(group, pattern, cleaned text, groups) for one raw line, found by the searched needles `seeds` (only
        the needles that contain one of them can be in it); identical lines are matched once."""
        if len(raw) <= MEMO_LINE and raw in self.memo:
            return self.memo[raw]
        found = []
        tried: set[tuple[int, int]] = set()  # a regex listed under several needles is tried once
        line = logclean.clean_line(raw.decode("utf-8", errors="replace"))
        if line is not None:
            for needle in {n for seed in seeds for n in self.within[seed]}:
                if needle in raw:
                    entries = self.by_needle[needle]
                    for gi, pi, rx in entries:
                        if (gi, pi) in tried:
                            continue
                        tried.add((gi, pi))
                        m = rx.search(line)
                        if m:
                            groups = {k: v for k, v in m.groupdict().items() if v is not None}
                            found.append((gi, pi, _excerpt(line, m), groups))
        if len(raw) <= MEMO_LINE:
            if len(self.memo) >= MEMO_ENTRIES:
                self.memo.clear()
            self.memo[raw] = found
        return found

    def scan(self, chunks: Iterable[bytes], hits: list[_Hits]) -> tuple[int, int, bool]:
        """Fill hits (one per group); return the line count, the byte count, and whether the log was blank."""
        lineno = nbytes = 0
        blank = True
        for chunk, skipped in _lines_chunks(chunks):
            nbytes += len(chunk) + skipped
            blank = blank and chunk.isspace()
            lines = chunk.split(b"\n")
            if chunk.endswith(b"\n"):
                lines.pop()
            # Logs repeat lines (printer stats, per-thread asserts, frames): search each distinct line once.
            distinct = b"\n".join(set(lines))
            candidates: dict[bytes, set[bytes]] = {}
            for needle in self.search:
                pos = distinct.find(needle)
                while pos != -1:
                    start = distinct.rfind(b"\n", 0, pos) + 1
                    end = distinct.find(b"\n", pos)
                    end = len(distinct) if end == -1 else end
                    candidates.setdefault(distinct[start:end], set()).add(needle)
                    pos = distinct.find(needle, end)
            matched = {raw: found for raw, seeds in candidates.items() if (found := self._match_line(raw, seeds))}
            if matched:
                keep = EVIDENCE_PER_PATTERN
                if len(matched) <= FEW_MATCHED:  # their first and last places, found in C
                    buf = b"\n" + chunk + (b"" if chunk.endswith(b"\n") else b"\n")
                    order = _line_places(buf, matched, keep)
                else:  # many distinct matched lines: one pass over the chunk's lines
                    where: dict[bytes, list[int]] = {}
                    for i, raw in enumerate(lines):
                        if raw in matched:
                            where.setdefault(raw, []).append(i)
                    order = sorted((i, raw) for raw, idx in where.items()
                                   for i in (idx if len(idx) <= 2 * keep else idx[:keep] + idx[-keep:]))
                for i, raw in order:
                    for gi, pi, text, groups in matched[raw]:
                        hits[gi].add(pi, lineno + i + 1, text, groups)
            lineno += chunk.count(b"\n")
        return lineno, nbytes, blank


def _minimal(needles: list[bytes]) -> dict[bytes, list[bytes]]:
    """The needles that contain no other needle (a line holding a needle holds every needle inside it, so only
    these are searched), each with the needles that contain it. Found with bytes.find over the needles joined
    (C), not a Python loop over pairs."""
    joined = b"\0".join(needles)
    starts = list(accumulate((len(n) + 1 for n in needles[:-1]), initial=0))
    holds_another: set[int] = set()
    holders: dict[bytes, set[bytes]] = {}
    for needle in needles:
        pos = joined.find(needle)
        while pos != -1:
            i = bisect_right(starts, pos) - 1
            holders.setdefault(needle, set()).add(needles[i])
            if needles[i] != needle:
                holds_another.add(i)
            pos = joined.find(needle, pos + 1)
    return {n: sorted(holders[n]) for i, n in enumerate(needles) if i not in holds_another}


def _line_places(buf: bytes, matched: Iterable[bytes], keep: int) -> list[tuple[int, bytes]]:
    """(0-based line index, line) of the first and last `keep` places of each line in buf ("\\n" + lines + "\\n"),
    sorted; newlines are counted once over the buffer, between consecutive places."""
    places: set[tuple[int, bytes]] = set()
    for raw in matched:
        pattern = b"\n" + raw + b"\n"
        pos, n = buf.find(pattern), 0
        while pos != -1 and n < keep:
            places.add((pos, raw))
            pos, n = buf.find(pattern, pos + 1), n + 1
        pos, n = buf.rfind(pattern), 0
        while pos != -1 and n < keep:
            places.add((pos, raw))
            pos, n = buf.rfind(pattern, 0, pos + len(pattern) - 1), n + 1
    out, last, line = [], 0, 0
    for pos, raw in sorted(places):
        line += buf.count(b"\n", last, pos)
        last = pos
        out.append((line, raw))
    return out


def _lines_chunks(chunks: Iterable[bytes]) -> Iterator[tuple[bytes, int]]:
    """Re-chunk so every chunk ends at a line boundary; normalized (CR is a line break). Of an over-long line
    only its last MAX_LINE bytes are kept: yields (chunk, bytes of line heads dropped before it)."""
    carry = b""
    skipped = 0
    for raw in chunks:
        data = carry + logclean.normalize_chunk(raw)
        cut = data.rfind(b"\n") + 1
        carry = data[cut:]
        if len(carry) > MAX_LINE:
            skipped += len(carry) - MAX_LINE
            carry = carry[-MAX_LINE:]
        if cut:
            yield data[:cut], skipped
            skipped = 0
    if carry or skipped:
        yield carry, skipped


def _signal_name(exit_status: int | str | None) -> str | None:
    if exit_status is None:
        return None
    if isinstance(exit_status, str):
        if exit_status.lstrip("-").isdigit():
            exit_status = int(exit_status)
        else:
            return exit_status.upper() if exit_status.upper().startswith("SIG") else None
    num = -exit_status if exit_status < 0 else exit_status - 128 if 128 < exit_status < 160 else None
    try:
        return _signal.Signals(num).name if num else None
    except ValueError:
        return f"signal {num}"


def _guide_ref(pattern: str) -> GuideRef:
    g = load_guides()[pattern]
    return GuideRef(id=g.id, title=g.title, path=str(g.path), uri=g.uri)


def _evidence(h: _Hits, limit: int | None = None, cues: bool = False) -> list[Evidence]:
    ev = [Evidence(line=line, text=text, pattern=h.rule.id, weight=h.patterns[idx].weight)
          for idx, line, text, _ in h.evidence(cues)]
    return ev if limit is None else sorted(ev, key=lambda e: -e.weight)[:limit]


def _winner(scored: dict[str, tuple[float, _Hits]]) -> tuple[float, _Hits]:
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


def _seen(others: list[_Hits], marker: phases.Marker | None) -> str:
    """What an `unknown` log showed: the weak cues and the phase marker, in words."""
    notes = []
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


def classify_chunks(chunks: Iterable[bytes], exit_status: int | str | None = None) -> Classification:
    """Classify a stream of byte chunks (bounded memory for any log size)."""
    rule_list = rules()
    hits = [_Hits.of(r) for r in rule_list]
    marks = _Hits(list(phases.markers()), len(phases.markers()))
    matcher = _Matcher([h.patterns for h in hits] + [marks.patterns], key=load_guides())
    nlines, nbytes, blank = matcher.scan(chunks, [*hits, marks])
    if blank:
        raise BadInput("the log is empty: pass the full output of the failing run (stdout and stderr)")
    sig = _signal_name(exit_status)
    # A compiled model or package shows itself by a phase marker or a weak cue of some rule.
    aoti_context = bool(marks.first) or any(h.cued() for h in hits)
    scored = {h.rule.id: (h.score(aoti_context), h) for h in hits}
    if sig:  # the exit status is evidence too, though not a line of the log: strong only when nothing else is
        seg_score, seg = scored["segfault_no_message"]
        cause_printed = any(sc >= DECISIVE for pid, (sc, _) in scored.items() if pid != "segfault_no_message")
        scored["segfault_no_message"] = (max(seg_score, DECISIVE if cause_printed else STRONG), seg)
    score, win = _winner(scored)
    guides = load_guides()
    fields: dict[str, str] = {}
    for _idx, _line, _text, groups in win.evidence(every=True):  # later (or, for first_match, earlier) hits win
        for k, v in groups.items():
            if k in win.rule.captures and (not win.rule.first_match or k not in fields):
                fields[k] = win.rule.value_maps.get(k, {}).get(v, v)
    if sig:
        fields["signal"] = sig
    evidence = [e for e in _evidence(win) if e.line > 0]
    if sig and win.rule.id == "segfault_no_message":
        evidence.append(Evidence(line=0, text=f"process ended by {sig} (exit status {exit_status})",
                                 pattern="segfault_no_message", weight=STRONG))
    seen = [(line, idx) for idx, line, _t, _g in marks.evidence()]
    log_phase, marker = phases.decide(seen, win.rule.phase)
    # Alternatives: the other rules that matched or that weak cues (and the phase) point at, all together.
    hint = phases.likely(marker.phase if marker else None)
    ranked = {pid: (round(1 - (1 - max(s, h.rank())) * (1 - hint.get(pid, 0.0)), 4), h)
              for pid, (s, h) in scored.items()}
    others = sorted((m for m in ranked.values() if m[0] > 0 and m[1] is not win),
                    key=lambda m: (-m[0], -m[1].rule.priority))[:3]
    g = guides[win.rule.id]
    summary, confidence = g.summary, score
    if win.rule.id == "unknown":
        confidence = round(UNKNOWN_MAX * (1.0 - max((m[0] for m in others), default=0.0)), 4)
        summary = _seen([h for _s, h in others], marker)
        evidence = [e for _s, h in others for e in _evidence(h, 1, cues=True) if e.line > 0][:EVIDENCE_PER_PATTERN]
    return Classification(
        pattern=win.rule.id, title=g.title, summary=summary, confidence=confidence, phase=log_phase,
        alternatives=[Alternative(pattern=h.rule.id, title=guides[h.rule.id].title, confidence=s,
                                  evidence=[e for e in _evidence(h, 1) or _evidence(h, 1, cues=True) if e.line > 0])
                      for s, h in others],
        evidence=evidence, fields=fields, guide=_guide_ref(win.rule.id), next_steps=win.rule.next_steps,
        lines_scanned=nlines, bytes_scanned=nbytes,
    )


def classify_text(text: str | bytes, exit_status: int | str | None = None) -> Classification:
    """Classify log text given in memory."""
    data = text.encode("utf-8", errors="replace") if isinstance(text, str) else text
    return classify_chunks((data[i:i + CHUNK] for i in range(0, len(data), CHUNK)), exit_status)


def classify_file(path: str | Path, exit_status: int | str | None = None) -> Classification:
    """Classify a log file, streamed."""
    p = Path(path).expanduser()
    if not p.exists():
        raise BadInput(f"no such log file: {p}")
    if not p.is_file():
        raise BadInput(f"not a regular file: {p}")
    try:
        result = classify_chunks(logclean.file_chunks(p, CHUNK), exit_status)
    except PermissionError as exc:
        raise BadInput(f"cannot read {p}: {exc.strerror}") from exc
    return result
