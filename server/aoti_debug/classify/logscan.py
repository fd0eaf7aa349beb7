"""Stream a log and find the lines the rules match: needles first, then regexes, with bounded memory."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate

from aoti_debug.classify.guides import Pattern, Rule
from aoti_debug.common import logread

# Of a "line" longer than this (binary junk, a progress bar without newlines) only the tail is kept: the
# message usually ends the line, and memory stays bounded.
MAX_LINE = 1 << 20
EVIDENCE_PER_PATTERN = 4
EVIDENCE_TEXT = 400
# Logs repeat lines (printer stats, per-thread asserts): a bounded memo matches each distinct line once.
MEMO_LINE, MEMO_ENTRIES = 4096, 20000
# Up to this many distinct matched lines in a chunk, their places are found by bytes.find (C), not a Python loop.
FEW_MATCHED = 16


Entry = tuple[int, int, re.Pattern[str], bool]


@dataclass
class Hits:
    """Matches of one group of regexes (a rule's patterns then its cues): bounded first/last lines per regex."""

    patterns: list[Pattern]
    decisive: int  # patterns[:decisive] decide; the rest are cues
    first_match: bool = False
    rule: Rule | None = None
    first: dict[int, list[tuple[int, str, dict[str, str]]]] = field(default_factory=dict)
    last: dict[int, deque[tuple[int, str, dict[str, str]]]] = field(default_factory=dict)

    @classmethod
    def of(cls, rule: Rule) -> Hits:
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

    def score(self, aoti_context: bool = True, decided: frozenset[str] = frozenset()) -> float:
        """Noisy-OR of the matched patterns (eager-shared text counts only in a log that shows AOTI; a line that
        yields to a pattern in `decided`, the ones decisive in the same log, does not count)."""
        return self._noisy_or(i for i in self.first if i < self.decisive
                              and (aoti_context or not self.patterns[i].aoti_only)
                              and not decided.intersection(self.patterns[i].yields_to))

    def rank(self) -> float:
        """Patterns and cues together: orders the alternatives."""
        return self._noisy_or(self.first)

    def cued(self, model: bool = False) -> bool:
        """A cue matched that shows a compiled model (an aoti_only cue is printed without one too); with `model`, not
        counting a marker that lets eager-shared lines decide but shows no model by itself (shows_model: false)."""
        return any(i >= self.decisive and not self.patterns[i].aoti_only
                   and (not model or getattr(self.patterns[i], "shows_model", True)) for i in self.first)

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
        # by line; on one line the first-listed regex comes where it wins (last, or first for first_match), so the
        # fields do not depend on the order the needles were tried in (a hash-seeded set)
        hits.sort(key=lambda h: (h[1], h[0] if self.first_match else -h[0]))
        return hits[:EVIDENCE_PER_PATTERN * 2] if self.first_match else hits[-EVIDENCE_PER_PATTERN * 2:]


def _excerpt(line: str, m: re.Match[str]) -> str:
    """The cleaned line cut to EVIDENCE_TEXT characters around the match (a long line's message is at its end)."""
    if len(line) <= EVIDENCE_TEXT:
        return line
    start = max(0, min(m.start(), len(line) - EVIDENCE_TEXT))
    return line[start:start + EVIDENCE_TEXT]


class Matcher:
    """Compiled groups of regexes: needle -> [(group index, pattern index, regex, on the raw line)]."""

    # (key, needle -> [(group, pattern, regex, matched on the raw line)], minimal needles)
    _built: tuple[object, dict[bytes, list[Entry]], dict[bytes, list[bytes]]] | None = None

    def __init__(self, groups: list[list[Pattern]], key: object):
        built = Matcher._built
        if built is None or built[0] is not key:  # the tables depend only on the loaded guides: build them once
            by_needle: dict[bytes, list[Entry]] = {}
            for gi, patterns in enumerate(groups):
                for pi, p in enumerate(patterns):
                    rx = re.compile(p.regex)
                    for needle in p.needles:
                        by_needle.setdefault(needle.encode(), []).append((gi, pi, rx, p.raw))
            built = Matcher._built = (key, by_needle, _minimal(list(by_needle)))
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
        present = [n for n in {n for seed in seeds for n in self.within[seed]} if n in raw]
        text = raw.decode("utf-8", errors="replace") if present else ""
        line = logread.clean_line(text) if present else None
        for needle in present if line is not None else ():
            for gi, pi, rx, on_raw in self.by_needle[needle]:
                if (gi, pi) in tried:
                    continue
                tried.add((gi, pi))
                m = rx.search(text if on_raw else line)
                if m:
                    groups = {k: v for k, v in m.groupdict().items() if v is not None}
                    found.append((gi, pi, line[-EVIDENCE_TEXT:] if on_raw else _excerpt(line, m), groups))
        if len(raw) <= MEMO_LINE:
            if len(self.memo) >= MEMO_ENTRIES:
                self.memo.clear()
            self.memo[raw] = found
        return found

    def scan(self, chunks: Iterable[bytes], hits: list[Hits]) -> tuple[int, int, bool]:
        """Fill hits (one per group); return the line count, the byte count, and whether the log was blank."""
        lineno = nbytes = 0
        blank = True
        for chunk, skipped in _lines_chunks(chunks):
            nbytes += len(chunk) + skipped
            blank = blank and chunk.isspace()
            lines = chunk.split(b"\n")
            newlines = len(lines) - 1  # counted by the split, not by another pass over the chunk
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
                    order = _line_places(lines, matched, keep)
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
            lineno += newlines
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


def _first(seq: list[bytes], item: bytes, keep: int) -> list[int]:
    """The indexes of item's first `keep` places in seq (list.index: a C loop)."""
    out, i = [], -1
    while len(out) < keep:
        try:
            i = seq.index(item, i + 1)
        except ValueError:
            break
        out.append(i)
    return out


def _line_places(lines: list[bytes], matched: Iterable[bytes], keep: int) -> list[tuple[int, bytes]]:
    """(0-based line index, line) of the first and last `keep` places of each line, sorted: searched in the
    chunk's lines from the front and over the reversed list from the back, with no pass over the bytes."""
    places: set[tuple[int, bytes]] = set()
    back: list[bytes] | None = None
    for raw in matched:
        places.update((i, raw) for i in _first(lines, raw, keep))
        back = lines[::-1] if back is None else back
        places.update((len(lines) - 1 - i, raw) for i in _first(back, raw, keep))
    return sorted(places)


def _lines_chunks(chunks: Iterable[bytes]) -> Iterator[tuple[bytes, int]]:
    """Re-chunk so every chunk ends at a line boundary; normalized (CR is a line break). Of an over-long line
    only its last MAX_LINE bytes are kept: yields (chunk, bytes of line heads dropped before it)."""
    carry = b""
    skipped = 0
    for raw in chunks:
        data = carry + logread.normalize_chunk(raw)
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
