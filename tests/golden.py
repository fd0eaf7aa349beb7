"""Golden log fixtures: a real log with its verdict in-band.

A fixture is `tests/fixtures/logs/<pattern_id>__<case>.log`. Markers:
- `#=MATCH=# ` starts a line the classifier must report as evidence (the marker is not part of the log);
- `‹` and `›` surround text the rule must capture from that line;
- a file with no MATCH marker must still classify as <pattern_id> (used for `unknown`);
- the header is the leading block of `# key: value` lines (and bare `#`): provenance (`# source:`,
  required, then torch, GPU, command...). It is blanked before classifying, so it is never evidence;
  `# exit status: N` (or the GPU capture's `# exit_status: N (signal ...)`) is passed to the
  classifier as the run's exit status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from aoti_debug.classify.engine import Classification, classify_text
from aoti_debug.classify.guides import load_guides
from aoti_debug.common import logread

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "logs"
MATCH = "#=MATCH=# "
CAPTURE = re.compile("‹(.*?)›")
HEADER_LINE = re.compile(r"^#(?: .*)?$")
EXIT = re.compile(r"^# exit[ _]status: (-?\d+|SIG\w+)")


@dataclass
class Golden:
    path: Path
    pattern: str
    text: str  # markers removed: the real log, header included
    header: int = 0  # number of header lines at the top
    match_lines: set[int] = field(default_factory=set)
    captures: dict[int, set[str]] = field(default_factory=dict)
    exit_status: str | None = None

    @property
    def log(self) -> str:
        """What the classifier sees: the text with the header lines blanked (line numbers unchanged)."""
        lines = self.text.split("\n")
        return "\n".join([""] * self.header + lines[self.header:])

    def header_value(self, key: str) -> str | None:
        for line in self.text.split("\n")[:self.header]:
            if line.startswith(f"# {key}: "):
                return line.split(": ", 1)[1]
        return None


def load(path: Path) -> Golden:
    pattern = path.name.split("__", 1)[0]
    g = Golden(path=path, pattern=pattern, text="")
    out = []
    in_header = True
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="surrogateescape").split("\n"), 1):
        if line.startswith(MATCH):
            line = line[len(MATCH):]
            g.match_lines.add(n)
            g.captures[n] = set(CAPTURE.findall(line))
            in_header = False
        elif in_header and HEADER_LINE.match(line):
            g.header = n
            m = EXIT.match(line)
            if m:
                g.exit_status = m.group(1)
        else:
            in_header = False
        out.append(CAPTURE.sub(r"\1", line))
    g.text = "\n".join(out)
    return g


def all_fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.log"))


def classify(g: Golden) -> Classification:
    return classify_text(g.log, g.exit_status)


def capture_spans(result: Classification, g: Golden) -> dict[int, list[tuple[int, int]]]:
    """Where each evidence line's captured values (before value maps) sit in the raw line: disjoint spans."""
    lines = g.text.split("\n")
    rule = load_guides()[result.pattern].rule
    out: dict[int, list[tuple[int, int]]] = {}
    for e in result.evidence:
        if e.line <= 0:
            continue
        raw = lines[e.line - 1]
        # evidence text is cut to 400 characters: clean the whole line again; the cleaner only strips a
        # prefix (timestamps, rank tags), so the cleaned line normally ends the raw one
        text = logread.clean_line(raw) or e.text
        offset = len(raw) - len(text) if raw.endswith(text) else None
        spans: list[tuple[int, int]] = []
        for p in rule.patterns:
            m = re.search(p.regex, text)
            if not m:
                continue
            for k in rule.captures:
                if k not in m.groupdict() or not m.group(k):
                    continue
                if offset is not None:
                    spans.append((offset + m.start(k), offset + m.end(k)))
                elif (at := raw.find(m.group(k))) >= 0:
                    spans.append((at, at + len(m.group(k))))
        kept: list[tuple[int, int]] = []
        for a, b in sorted(set(spans), key=lambda sp: (sp[1] - sp[0], sp[0])):  # innermost first: markers never nest
            if all(b <= ka or a >= kb for ka, kb in kept):
                kept.append((a, b))
        out[e.line] = sorted(kept)
    return out


def captured_by_line(result: Classification, g: Golden) -> dict[int, set[str]]:
    """The captured substrings per evidence line, as the markers would show them."""
    lines = g.text.split("\n")
    return {n: {lines[n - 1][a:b] for a, b in spans} for n, spans in capture_spans(result, g).items()}


def rebless(g: Golden, spans: dict[int, list[tuple[int, int]]]) -> None:
    """Rewrite the markers from the classifier's current answer (UPDATE_GOLDENS=1)."""
    lines = g.text.split("\n")
    for n, line_spans in spans.items():
        line = lines[n - 1]
        for a, b in sorted(line_spans, reverse=True):
            line = f"{line[:a]}‹{line[a:b]}›{line[b:]}"
        lines[n - 1] = MATCH + line
    g.path.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")


def bless(path: Path) -> Classification:
    """Classify a fixture and, if it lands on the pattern its name gives, rewrite its markers."""
    g = load(path)
    result = classify(g)
    if result.pattern == g.pattern:
        rebless(g, capture_spans(result, g))
    return result
