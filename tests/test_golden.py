"""Every golden log classifies as its file name says, with its marked evidence; UPDATE_GOLDENS=1 re-blesses."""

from __future__ import annotations

import os

import pytest
from aoti_debug.classify import classify_text
from aoti_debug.guides import PATTERN_IDS, load_guides
from golden import Golden, all_fixtures, load, rebless


def _captured_by_line(result, g: Golden) -> dict[int, set[str]]:
    """Raw captured substrings per evidence line (before value maps), found again in the line text."""
    lines = g.text.split("\n")
    rule = load_guides()[result.pattern].rule
    out: dict[int, set[str]] = {}
    import re

    for e in result.evidence:
        if e.line <= 0:
            continue
        text = lines[e.line - 1]
        vals: set[str] = set()
        for p in rule.patterns:
            m = re.search(p.regex, e.text)
            if m:
                vals |= {v for k, v in m.groupdict().items() if v and k in rule.captures and v in text}
        out[e.line] = vals
    return out


def test_every_golden_log_classifies_with_its_marked_evidence() -> None:
    problems = []
    for path in all_fixtures():
        g = load(path)
        result = classify_text(g.text, g.exit_status)
        got_lines = {e.line for e in result.evidence if e.line > 0}
        captured = _captured_by_line(result, g) if result.pattern == g.pattern else {}
        if os.environ.get("UPDATE_GOLDENS") and result.pattern == g.pattern:
            rebless(g, got_lines, captured)
            continue
        if result.pattern != g.pattern:
            problems.append(f"{path.name}: classified as {result.pattern} ({result.confidence}), "
                            f"evidence {[e.text[:80] for e in result.evidence]}")
        elif got_lines != g.match_lines:
            problems.append(f"{path.name}: evidence lines {sorted(got_lines)} != marked {sorted(g.match_lines)}")
        elif {n: v for n, v in captured.items() if v} != {n: v for n, v in g.captures.items() if v}:
            problems.append(f"{path.name}: captures {captured} != marked {g.captures}")
    assert not problems, "\n".join(problems)


def test_every_pattern_has_a_golden_log_and_every_golden_log_names_a_pattern() -> None:
    named = {p.name.split("__", 1)[0] for p in all_fixtures()}
    assert named - set(PATTERN_IDS) == set(), {"fixtures naming no pattern": named - set(PATTERN_IDS)}
    assert set(PATTERN_IDS) - named == set(), {"patterns without a fixture": set(PATTERN_IDS) - named}


@pytest.mark.parametrize("path", all_fixtures(), ids=lambda p: p.name)
def test_every_golden_log_states_where_it_came_from(path) -> None:
    head = path.read_text(encoding="utf-8", errors="replace").split("\n", 12)[:12]
    assert any(line.startswith("# source:") for line in head), f"{path.name}: no '# source:' header line"
