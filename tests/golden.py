"""Golden log fixtures: a real log with its verdict in-band.

A fixture is `tests/fixtures/logs/<pattern_id>__<case>.log`. Markers:
- `#=MATCH=# ` starts a line the classifier must report as evidence (the marker is not part of the log);
- `‹` and `›` surround text the rule must capture from that line;
- a file with no MATCH marker must still classify as <pattern_id> (used for `unknown`);
- header lines `# key: value` at the top describe provenance (torch, GPU, command); `# exit status: N`
  is passed to the classifier as the run's exit status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "logs"
MATCH = "#=MATCH=# "
CAPTURE = re.compile("‹(.*?)›")
EXIT = re.compile(r"^# exit status: (-?\d+|SIG\w+)", re.M)


@dataclass
class Golden:
    path: Path
    pattern: str
    text: str  # markers removed: the real log
    match_lines: set[int] = field(default_factory=set)
    captures: dict[int, set[str]] = field(default_factory=dict)
    exit_status: str | None = None


def load(path: Path) -> Golden:
    pattern = path.name.split("__", 1)[0]
    g = Golden(path=path, pattern=pattern, text="")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="surrogateescape").split("\n"), 1):
        if line.startswith(MATCH):
            line = line[len(MATCH):]
            g.match_lines.add(n)
            g.captures[n] = set(CAPTURE.findall(line))
        out.append(CAPTURE.sub(r"\1", line))
    g.text = "\n".join(out)
    m = EXIT.search(g.text)
    g.exit_status = m.group(1) if m else None
    return g


def all_fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.log"))


def rebless(g: Golden, evidence_lines: set[int], captured: dict[int, set[str]]) -> None:
    """Rewrite the markers from the classifier's current answer (UPDATE_GOLDENS=1)."""
    lines = g.text.split("\n")
    for n in sorted(evidence_lines):
        line = lines[n - 1]
        for value in sorted(captured.get(n, set()), key=len, reverse=True):
            if value and value in line:
                line = line.replace(value, f"‹{value}›", 1)
        lines[n - 1] = MATCH + line
    g.path.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
