"""Fixes chosen by the evidence: a pattern guide's `fixes` whose `when` holds for the diagnosis' facts."""

from __future__ import annotations

import string

from aoti_debug.classify.guides import load_guides


class _Facts(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def render(text: str, facts: dict[str, str]) -> str:
    """A fix's text with {fact} placeholders filled (missing facts read '?')."""
    names = {f for _, f, _, _ in string.Formatter().parse(text) if f}
    return text.format_map(_Facts(facts)) if names else text


def select(pattern: str, facts: dict[str, str]) -> list[str]:
    """The guide's fixes whose condition holds, in the guide's order; [] if the guide states none."""
    g = load_guides().get(pattern)
    rule = g.rule if g else None
    return [render(f.fix, facts) for f in (rule.fixes if rule else []) if f.applies(facts)]


def has_conditional_fixes(pattern: str) -> bool:
    g = load_guides().get(pattern)
    return bool(g and g.rule and g.rule.fixes)
