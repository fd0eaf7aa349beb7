"""The rules in the guides' front matter: examples, needles, priorities."""

from __future__ import annotations

import re

import pytest
from aoti_debug.classify.engine import classify_text
from aoti_debug.classify.guides import PATTERN_IDS, load_guides, rules

RULES = rules()


@pytest.mark.parametrize("rule", [r for r in RULES if r.examples], ids=lambda r: r.id)
def test_each_match_example_classifies_as_its_rule(rule) -> None:
    wrong = {ex: classify_text(ex).pattern for ex in rule.examples.match}
    assert {ex: p for ex, p in wrong.items() if p != rule.id} == {}


@pytest.mark.parametrize("rule", [r for r in RULES if r.examples], ids=lambda r: r.id)
def test_no_regex_of_a_rule_matches_its_no_match_examples(rule) -> None:
    hits = {ex: p.regex for ex in rule.examples.no_match for line in ex.splitlines()
            for p in rule.patterns if re.search(p.regex, line)}
    assert hits == {}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_every_regex_match_in_the_examples_contains_its_needle(rule) -> None:
    missing = []
    for ex in rule.examples.match if rule.examples else []:
        for line in ex.splitlines():
            for p in rule.patterns:
                if re.search(p.regex, line) and not any(n in line for n in p.needles):
                    missing.append((p.needle, line))
    assert missing == []


def test_every_pattern_id_has_a_rule_and_a_guide() -> None:
    assert {r.id for r in RULES} == set(PATTERN_IDS)


def test_priorities_are_unique_and_the_fallbacks_rank_lowest() -> None:
    prios = [r.priority for r in RULES]
    assert len(prios) == len(set(prios))
    by_id = {r.id: r.priority for r in RULES}
    others = [p for i, p in by_id.items() if i not in ("unknown", "segfault_no_message")]
    assert by_id["unknown"] < by_id["segfault_no_message"] < min(others)


def test_every_rule_except_unknown_has_examples_and_next_steps() -> None:
    lacking = {r.id for r in RULES if r.id != "unknown" and not (r.examples and r.next_steps)}
    assert lacking == set()


def test_needles_are_literal_text_of_their_regex() -> None:
    """A needle must be text the regex itself requires, not a guess."""
    bad = [(r.id, p.needle) for r in RULES for p in r.patterns if isinstance(p.needle, str)
           and re.escape(p.needle) not in p.regex and p.needle not in p.regex]
    assert bad == []


def test_the_guides_load_with_one_guide_per_pattern() -> None:
    guides = load_guides()
    assert {g.id for g in guides.values() if g.kind == "pattern"} == set(PATTERN_IDS)


FIXES = [(r.id, i, f) for r in RULES for i, f in enumerate(r.fixes)]


@pytest.mark.parametrize("fix", FIXES, ids=lambda f: f"{f[0]}-{f[1]}")
def test_each_fix_is_chosen_under_its_example_facts_and_not_under_its_counter_example(fix) -> None:
    pattern, i, f = fix
    assert f.when, "a fix with no condition applies everywhere: state when it applies"
    assert f.applies(f.example)
    assert f.not_for is not None and not f.applies(f.not_for), "each fix needs facts under which it does not apply"


def test_every_guide_that_states_a_culprit_names_the_step_that_finds_it() -> None:
    stated = {r.id: r.culprit for r in RULES if r.culprit}
    assert {"out_of_memory", "custom_op", "constant_loading", "cpp_compile_error", "segfault_no_message"} <= set(stated)
    steps = {"check_parity", "classify_error", "dump_kernel_inputs", "rerun_with_flags", "explain_index_oob"}
    assert {i: c for i, c in stated.items() if not any(f"step {s}" in c for s in steps)} == {}


def test_yields_to_any_means_every_other_pattern_but_unknown() -> None:
    skew = next(r for r in rules() if r.id == "version_skew")
    xformers = next(p for p in skew.patterns if "xFormers was built for" in p.regex)
    assert set(xformers.yields_to) == set(PATTERN_IDS) - {"version_skew", "unknown"}
