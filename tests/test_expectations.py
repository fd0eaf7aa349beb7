"""Hand-reviewed expectations (tests/fixtures/expectations.yaml): per pattern, the evidence lines and values a person
picked by reading a fixture log. Unlike the golden markers, UPDATE_GOLDENS never rewrites them."""

from __future__ import annotations

from pathlib import Path

import golden
import pytest
import yaml
from aoti_debug.classify.guides import PATTERN_IDS

EXPECTATIONS = Path(__file__).resolve().parent / "fixtures" / "expectations.yaml"
ENTRIES = yaml.safe_load(EXPECTATIONS.read_text(encoding="utf-8"))
KEYS = {"log", "evidence", "fields", "not_evidence", "reviewed", "diverges"}


def entry_id(e: dict) -> str:
    return e["log"].removesuffix(".log")


def test_every_pattern_has_a_reviewed_expectation_on_an_existing_fixture() -> None:
    assert {e["log"].split("__")[0] for e in ENTRIES} == set(PATTERN_IDS)
    for e in ENTRIES:
        assert set(e) <= KEYS and {"log", "evidence", "fields", "reviewed"} <= set(e), e["log"]
        assert (golden.FIXTURES / e["log"]).is_file(), e["log"]
    assert EXPECTATIONS not in golden.all_fixtures()  # what UPDATE_GOLDENS rewrites


def _params():
    for e in ENTRIES:
        marks = [pytest.mark.xfail(reason=f"classifier diverges: {e['diverges']}", strict=True)] if e.get(
            "diverges") else []
        yield pytest.param(e, id=entry_id(e), marks=marks)


@pytest.mark.parametrize("entry", list(_params()))
def test_the_classifier_reproduces_the_reviewed_expectation(entry) -> None:
    g = golden.load(golden.FIXTURES / entry["log"])
    r = golden.classify(g)
    assert r.pattern == entry["log"].split("__")[0]
    lines = [e.text for e in r.evidence]
    missing = [want for want in entry["evidence"] if not any(want in line for line in lines)]
    assert missing == [], f"picked lines not among the evidence {lines}"
    assert {k: r.fields.get(k) for k in entry["fields"]} == entry["fields"]
    noise = [n for n in entry.get("not_evidence", []) if any(n in line for line in lines)]
    assert noise == [], "noise reported as evidence"
