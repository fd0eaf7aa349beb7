"""Every golden log classifies as its file name says, with its marked evidence; UPDATE_GOLDENS=1 re-blesses."""

from __future__ import annotations

import os

import make_fixture_logs as mfl
import pytest
from aoti_debug.classify.guides import PATTERN_IDS
from golden import all_fixtures, capture_spans, captured_by_line, classify, load, rebless

HEADER_LINES_SEARCHED = 12


def test_every_golden_log_classifies_with_its_marked_evidence() -> None:
    problems = []
    for path in all_fixtures():
        g = load(path)
        result = classify(g)
        got_lines = {e.line for e in result.evidence if e.line > 0}
        captured = captured_by_line(result, g) if result.pattern == g.pattern else {}
        if os.environ.get("UPDATE_GOLDENS") and result.pattern == g.pattern:
            rebless(g, capture_spans(result, g))
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
    g = load(path)
    head = g.text.split("\n")[:min(g.header, HEADER_LINES_SEARCHED)]
    assert any(line.startswith("# source: ") for line in head), f"{path.name}: no '# source:' line in its header"


@pytest.mark.parametrize("path", all_fixtures(), ids=lambda p: p.name)
def test_every_marked_line_is_log_text_not_header(path) -> None:
    g = load(path)
    assert all(n > g.header for n in g.match_lines), f"{path.name}: a MATCH marker inside the header"
    assert g.text.split("\n")[g.header:] != [], f"{path.name}: a header with no log"


def test_every_case_of_the_fixture_script_has_its_golden_log() -> None:
    expected = {f"{c.pattern}__{c.name}.log" for c in [*mfl.CASES, *mfl.GPU_FIXTURES]}
    missing = expected - {p.name for p in all_fixtures()}
    assert missing == set(), f"run: python tests/make_fixture_logs.py {' '.join(sorted(missing))}"
