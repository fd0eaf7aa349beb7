"""benchmarks/classify_speed.py's grep reference: each rule regex's POSIX ERE matches the lines the regex matches."""

from __future__ import annotations

import re
import shutil
import subprocess

import byfile
import pytest
from aoti_debug.classify.guides import rules


def speed():
    return byfile.load("benchmarks/classify_speed.py")


def test_escapes_inside_a_bracket_class_become_posix_class_names_not_nested_brackets() -> None:
    to_ere = speed().to_ere
    assert to_ere(r"[^\s:]+\.so") == r"[^[:space:]:]+\.so"
    assert to_ere(r"[\w.]+ x\d") == r"[[:alnum:]_.]+ x[0-9]"
    assert to_ere(r"a[\.\/]b") == r"a[./]b"


def test_constructs_without_an_ere_form_are_left_out() -> None:
    to_ere = speed().to_ere
    assert [to_ere(r) for r in (r"(?<!\w)x", r"(?i)abc", r"[^\S]x", r"a(?=b)")] == [None] * 4


def test_counts_above_posix_dup_max_are_open_ended_and_lazy_quantifiers_greedy() -> None:
    to_ere = speed().to_ere
    assert to_ere(r"Command .{0,8192}\.cpp .{1,255}?x") == r"Command .{0,}\.cpp .{1,255}x"


@pytest.mark.spawns
@pytest.mark.skipif(shutil.which("grep") is None, reason="no grep")
def test_every_ere_matches_each_example_line_its_regex_matches() -> None:
    to_ere, missed = speed().to_ere, []
    for rule in rules():
        lines = [ln for ex in (rule.examples.match if rule.examples else []) for ln in ex.splitlines()]
        for p in rule.patterns:
            ere = to_ere(p.regex)
            hit = [ln for ln in lines if re.search(p.regex, ln)]
            if ere is None or not hit:
                continue
            out = subprocess.run(["grep", "-E", "-c", "-e", ere], input="\n".join(hit) + "\n", capture_output=True,
                                 text=True, env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}, check=False)
            if out.stdout.strip() != str(len(hit)):
                missed.append((rule.id, ere, out.stdout.strip(), len(hit), out.stderr.strip()[:200]))
    assert missed == []
