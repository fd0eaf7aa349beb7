"""Shared regex fragments (data/fragments.yaml): a rule's (?&name) reads as the fragment's text, and the data and the
rules that call it agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from aoti_debug.classify.guides import Pattern
from aoti_debug.common import logread
from aoti_debug.common.fragments import CALL, _Fragments, fragments
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "server" / "aoti_debug" / "data"


def _pattern(regex: str) -> Pattern:
    return Pattern(regex=regex, needle=".c:", weight=0.5)


def test_a_fragment_call_matches_what_the_fragment_spells_and_nothing_else() -> None:
    p = _pattern(r"(?:^|[\s/\\])(?P<stem>(?&triton_c_file))\.c:\d+")
    assert "(?&" not in p.regex
    assert re.search(p.regex, "/tmp/tmpab12/cuda_utils.c:6:23: fatal error: Python.h").group("stem") == "cuda_utils"
    assert re.search(p.regex, " __triton_launcher.c:3:10: error").group("stem") == "__triton_launcher"
    assert re.search(p.regex, "/src/my_module.c:12:1: error: expected") is None


def test_a_fragment_is_a_group_of_its_own_so_its_alternatives_do_not_spill_into_the_regex() -> None:
    p = _pattern(r"^(?&triton_c_file)\.c:")
    assert re.search(p.regex, "launcher.c:1: error")
    assert re.search(p.regex, "x launcher.c:1: error") is None  # ^ binds every alternative, not only the first


def test_an_unknown_fragment_fails_the_load_naming_it() -> None:
    with pytest.raises(ValidationError, match=r"unknown fragment \(\?&no_such_thing\)"):
        _pattern(r"(?&no_such_thing)\.c:")


@pytest.mark.parametrize("bad, why", [
    ("(main|driver)", "capturing group"),
    ("a(?&torch_home)", "calls another fragment"),
    ("(unclosed", "not a regex on its own"),
])
def test_a_fragment_that_captures_calls_another_or_does_not_compile_is_refused(bad: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        _Fragments.model_validate({"fragments": {"bad": bad}})


def test_every_fragment_is_called_by_some_rule_and_every_call_names_a_fragment() -> None:
    files = [*(g for g in sorted((ROOT / "guides").glob("*.md")) if g.name != "README.md"),
             DATA / "phases.yaml", DATA / "engines.yaml", DATA / "clean.yaml"]
    raw = "".join(p.read_text(encoding="utf-8") for p in files)
    called = set(CALL.findall(raw))
    assert called == set(fragments()), {"unused": set(fragments()) - called, "unknown": called - set(fragments())}


def test_a_misspelt_fragment_name_is_reported_as_unknown_not_as_a_regex_error() -> None:
    with pytest.raises(ValidationError, match=r"unknown fragment \(\?&Torch_home\)"):
        _pattern(r"(?&Torch_home)torch")


def test_the_cleaning_rules_read_a_fragment_as_the_rules_do() -> None:
    _data, prefix, _ignore = logread.load()
    assert "(?&" not in prefix.pattern
    line = "V0606 12:51:18.544000 133019546625856 torch/_dynamo/guards.py:2610] [1/1] Recompiling function forward"
    assert logread.clean_line(line) == "Recompiling function forward"
    assert logread.clean_line("V0606 is no log head") == "V0606 is no log head"
