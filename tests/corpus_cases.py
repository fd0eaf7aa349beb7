"""The real-report corpus as the accuracy benchmark reads it (benchmarks/classify_accuracy.py's `load`), read once per
test process, for the tests that look cases up or classify them."""

from __future__ import annotations

from functools import cache

import byfile
from aoti_debug.classify.engine import Classification


@cache
def accuracy():
    """The accuracy benchmark's module (its `load` and `score`)."""
    return byfile.load("benchmarks/classify_accuracy.py")


@cache
def cases() -> tuple[dict, ...]:
    """Every case, in file order."""
    return tuple(accuracy().load())


@cache
def fresh() -> tuple[dict, ...]:
    """Every fresh report (tests/corpus/fresh.jsonl: gathered outside the corpus, no split), in file order."""
    return tuple(accuracy().load(accuracy().FRESH))


@cache
def held_out() -> dict:
    """The test split's aggregate score (classify_accuracy.py's `score`): read in aggregate, never per case."""
    return accuracy().score([c for c in cases() if c["split"] == "test"])


def dev_case(case_id: str) -> dict:
    """A `dev` case by its id: tests read `test` cases only in aggregate, never one by one."""
    c = next(c for c in cases() if c["id"] == case_id)
    assert c["split"] == "dev", f"{case_id} is a {c['split']} case"
    return c


def classify_dev_case(case_id: str) -> Classification:
    """A `dev` case classified with its own thread left out of the similar-reports index, as the benchmark scores it."""
    return accuracy().classify_case(dev_case(case_id))
