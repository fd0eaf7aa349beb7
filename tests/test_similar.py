"""The public reports a log reads most like: the shipped index of the corpus's dev split, and how it fills the
ranking."""

from __future__ import annotations

import json
from pathlib import Path

from aoti_debug.classify import similar
from aoti_debug.classify.engine import classify_text

CORPUS = Path(__file__).parent / "corpus" / "cases.jsonl"


def cases() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def case(case_id: str) -> dict:
    return next(c for c in cases() if c["id"] == case_id)


def test_the_shipped_index_is_the_dev_split_of_the_corpus_and_never_the_test_split() -> None:
    assert similar.DATA.read_text(encoding="utf-8") == similar.index_text(cases())  # tests/corpus/merge.py writes it
    indexed = {r["url"] for r in json.loads(similar.DATA.read_text(encoding="utf-8"))["reports"]}
    assert indexed == {c["url"] for c in cases() if c["split"] == "dev"}
    assert not indexed & {c["url"] for c in cases() if c["split"] == "test"}


def test_a_quoted_report_finds_its_own_thread_first_unless_that_thread_is_left_out() -> None:
    c = case("pytorch/pytorch#118177-1")  # "ValueError: diff value", a compiled model's output compared with eager's
    found = classify_text(c["text"]).similar
    assert found[0].url == c["url"] and found[0].similarity > 0.99 and found[0].pattern == c["label"]
    assert len({s.url for s in found}) == len(found) <= 3
    with similar.excluding(c["url"]):
        assert c["url"] not in {s.url for s in classify_text(c["text"]).similar}


def test_where_the_rules_rank_nothing_the_nearest_reports_fill_the_ranking_and_say_so() -> None:
    c = case("pytorch/pytorch#118177-1")
    with similar.excluding(c["url"]):
        result = classify_text(c["text"])
        _shown, votes = similar.nearest(c["text"].encode())
    assert result.pattern == "unknown" and 1 <= len(result.alternatives) <= 2
    assert all(a.similar and a.evidence == [] and 0 < a.confidence < 1 for a in result.alternatives)
    assert [(a.pattern, a.confidence) for a in result.alternatives] == [v for v in votes if v[0] != "unknown"][:2]
    assert "wrong_output" in {a.pattern for a in result.alternatives}  # what the other threads it reads like carry


def test_the_rules_alternatives_come_before_any_the_reports_add_and_three_patterns_are_never_exceeded() -> None:
    for c in cases()[:300]:
        with similar.excluding(c["url"]):
            result = classify_text(c["text"])
        marks = [a.similar for a in result.alternatives]
        assert marks == sorted(marks), c["id"]  # False (the rules') first
        if any(marks):
            assert len(result.alternatives) <= 2, c["id"]
        assert result.pattern not in {a.pattern for a in result.alternatives}


def test_the_tail_keeps_the_last_bytes_across_chunks() -> None:
    tail = similar.Tail()
    data = bytes(range(256)) * 300  # 76,800 bytes
    out = b"".join(tail(data[i:i + 1000] for i in range(0, len(data), 1000)))
    assert out == data and tail.text() == data[-similar.TAIL:]
    big = similar.Tail()
    list(big([b"x" * (3 * similar.TAIL), b"end"]))
    assert big.text() == (b"x" * (3 * similar.TAIL) + b"end")[-similar.TAIL:]
