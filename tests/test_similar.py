"""The public reports a log reads most like: the shipped index of the corpus's dev split and the fresh reports, and
how it fills the ranking."""

from __future__ import annotations

import json
import random
from unittest import mock

import byfile
import pytest
from aoti_debug.classify import similar
from aoti_debug.classify.engine import Alternative, _with_reports, classify_text
from corpus_cases import cases, fresh
from corpus_cases import dev_case as case


def urls(result) -> list[str]:
    return [s.url for s in result.similar_reports]


def ranked(result) -> list[tuple[str, float, str]]:
    return [(a.pattern, a.confidence, a.source) for a in result.alternatives]


def test_the_shipped_index_is_the_dev_split_and_the_fresh_reports_and_never_the_test_split() -> None:
    # tests/corpus/merge.py writes it
    assert similar.DATA.read_text(encoding="utf-8") == similar.index_text(cases(), fresh())
    reports = json.loads(similar.DATA.read_text(encoding="utf-8"))["reports"]
    indexed = {r["url"] for r in reports}
    dev = {c["url"] for c in cases() if c["split"] == "dev"}
    assert dev <= indexed <= dev | {c["url"] for c in fresh()}
    assert not indexed & {c["url"] for c in cases() if c["split"] == "test"}
    # nor does a fresh report bring in a test case's words, quoted by another thread (only how many, never which;
    # the corpus's own dev and test threads may quote one message alike, as users do)
    test_words = {tuple(similar.report_words(c["text"]).items()) for c in cases() if c["split"] == "test"}
    assert sum(tuple(r["words"].items()) in test_words for r in reports if r["url"] not in dev) == 0


def test_a_quoted_report_finds_its_own_thread_first_unless_that_thread_is_left_out() -> None:
    c = case("pytorch/pytorch#118177-1")  # "ValueError: diff value", a compiled model's output compared with eager's
    found = classify_text(c["text"]).similar_reports
    assert found[0].url == c["url"] and found[0].similarity > 0.99 and found[0].pattern == c["label"]
    assert len({s.url for s in found}) == len(found) <= 3
    with similar.excluding(c["url"]):
        assert c["url"] not in {s.url for s in classify_text(c["text"]).similar_reports}


@pytest.mark.parametrize("text", ["hello world\n", "(no output)\n", "zzqqxx yyyqqq\n"])
def test_a_log_sharing_fewer_than_three_words_with_any_report_reads_like_none(text) -> None:
    result = classify_text(text)
    assert result.similar_reports == [] and all(a.source != "similar_reports" for a in result.alternatives)


def test_the_nearest_reports_never_change_the_winner_and_displace_only_a_less_sure_alternative(monkeypatch) -> None:
    sample = cases()[::6]
    with_reports = {}
    for c in sample:
        with similar.excluding(c["url"]):
            with_reports[c["id"]] = classify_text(c["text"])
    monkeypatch.setattr(similar, "nearest", lambda text: ([], []))
    filled = displaced = 0
    for c in sample:
        alone, r = classify_text(c["text"]), with_reports[c["id"]]
        assert (r.pattern, r.confidence, r.summary, r.phase) == (alone.pattern, alone.confidence, alone.summary,
                                                                  alone.phase), c["id"]
        rules, kept = [x for x in ranked(alone) if x[2] == "rules"], [x for x in ranked(r) if x[2] == "rules"]
        # in the same order, with the same confidence (`unknown` apart: it keeps its slot, below)
        assert [x for x in kept if x[0] != "unknown"] == [x for x in rules if x in kept and x[0] != "unknown"], c["id"]
        reports = [x for x in r.alternatives if x.source == "similar_reports"]
        assert all(x.evidence == [] and 0 < x.confidence < 1 for x in reports), c["id"]
        for x in rules:  # one left out gave way to a report surer than it (of its pattern or another), never `unknown`
            assert x in kept or (x[0] != "unknown" and any(y.confidence >= x[1] for y in reports)), c["id"]
        assert [i for i, x in enumerate(ranked(r)) if x[0] == "unknown" and x[2] == "rules"] == [
            i for i, x in enumerate(rules) if x[0] == "unknown"], c["id"]  # the rules' `unknown` keeps its slot
        # up to three, each pattern once and never the winner
        assert len(ranked(r)) <= 3 and len({x[0] for x in ranked(r)} | {r.pattern}) == len(ranked(r)) + 1, c["id"]
        filled += bool(reports)
        displaced += len(kept) < len(rules)
    assert filled > 0 and displaced > 0


def test_where_the_rules_rank_nothing_the_nearest_reports_fill_the_ranking_from_their_votes() -> None:
    c = case("pytorch/pytorch#147672-1")  # an export failure cut at the user's frame: no rule ranks anything
    with similar.excluding(c["url"]):
        result = classify_text(c["text"])
        _shown, votes = similar.nearest(c["text"].encode())
    assert result.pattern == "unknown" and {a.source for a in result.alternatives} == {"similar_reports"}
    patterns = [v for v in votes if v[0] != "unknown"]  # `unknown` is the winner: its votes fill nothing
    assert [(a.pattern, a.confidence) for a in result.alternatives] == patterns[:3]
    assert len(result.alternatives) == min(3, len(patterns)) >= 1


def test_a_reports_pattern_ranks_above_a_less_sure_rules_alternative_and_the_rules_unknown_keeps_its_slot() -> None:
    # torchao's extension built for another torch aborts as torch loads it: the abort decides (short of 0.9, so
    # `unknown` is second), the rules rank native_abi (0.44) above version_skew (0.405), the reports version_skew
    c = case("pytorch/ao#2901-1")
    with similar.excluding(c["url"]):
        result = classify_text(c["text"])
        _shown, votes = similar.nearest(c["text"].encode())
    assert result.pattern == "segfault_no_message" and result.confidence < 0.9
    assert [(a.pattern, a.source) for a in result.alternatives] == [
        ("version_skew", "similar_reports"), ("unknown", "rules"), ("native_abi", "rules")]  # version_skew once
    assert result.alternatives[0].confidence == dict(votes)["version_skew"] > result.alternatives[2].confidence
    assert result.alternatives[0].evidence == [] and result.alternatives[2].evidence


def test_what_a_long_log_printed_before_the_error_does_not_change_the_reports_it_reads_like() -> None:
    rng = random.Random(0)
    noise = "".join(f"Epoch {e} step {s}/500 loss={rng.random():.4f} lr=0.0003 grad_norm={rng.random():.3f}\n"
                    for e in range(3) for s in range(0, 500, 3)) * 20
    checked = 0
    for c in cases():
        if c["split"] != "dev" or len(similar.cleaned(c["text"].encode())) <= similar.TAIL:
            continue
        with similar.excluding(c["url"]):
            alone, late = classify_text(c["text"]), classify_text(noise + "\n" + c["text"])
        assert late.similar_reports == alone.similar_reports, c["id"]
        checked += 1
    assert checked >= 20


def test_the_form_a_log_is_handed_over_in_does_not_change_the_reports_it_reads_like() -> None:
    formats = byfile.load("benchmarks/classify_formats.py").FORMATS
    sample = [c for c in cases() if c["split"] == "dev"][::10]
    for name, wrap in formats.items():
        same = sum(urls(classify_text(wrap(c["text"]))) == urls(classify_text(c["text"])) for c in sample)
        assert same >= 0.9 * len(sample), (name, same, len(sample))


def test_the_tail_keeps_the_last_bytes_across_chunks() -> None:
    tail = similar.Tail()
    data = bytes(range(256)) * 300  # 76,800 bytes
    out = b"".join(tail(data[i:i + 1000] for i in range(0, len(data), 1000)))
    assert out == data and tail.text() == data[-similar.KEEP:]
    big = similar.Tail()
    list(big([b"x" * (3 * similar.KEEP), b"", b"end"]))
    assert big.text() == (b"x" * (3 * similar.KEEP) + b"end")[-similar.KEEP:]


@pytest.mark.parametrize("case_id", ["pytorch/pytorch#150629-1", "pytorch/pytorch#113143-1"])
def test_a_log_that_names_no_failure_lists_the_failures_that_print_no_error_line(case_id: str) -> None:
    # Two wrong-output reports that are only printed values: no rule or cue ranks anything, and with no public report
    # near either (the index grows: one that prints tensors alike may come near), the silent failures are listed.
    c = case(case_id)
    with mock.patch.object(similar, "nearest", return_value=([], [])):
        r = classify_text(c["text"])
    assert r.pattern == "unknown"
    assert ranked(r) == [("wrong_output", 0.05, "silent"), ("nan_inf", 0.03, "silent")]
    assert all(a.evidence == [] for a in r.alternatives)


def test_the_silent_failures_never_join_a_ranking_that_anything_else_filled() -> None:
    sample = random.Random(7).sample(cases(), len(cases()) // 6)
    for c in sample:
        with similar.excluding(c["url"]):
            r = classify_text(c["text"])
        sources = {a.source for a in r.alternatives}
        assert "silent" not in sources or sources == {"silent"}, c["id"]
        assert "silent" not in sources or (r.pattern == "unknown" and r.outsider is None), c["id"]


def test_a_rules_alternative_comes_before_a_report_of_equal_confidence_and_the_others_fall_by_confidence() -> None:
    def alt(pattern: str, confidence: float) -> Alternative:
        return Alternative(pattern=pattern, title=pattern, confidence=confidence)

    rules = [alt("lowering_error", 0.3), alt("unknown", 0.25), alt("toolchain_setup", 0.1)]
    votes = [("cpp_compile_error", 0.3), ("toolchain_setup", 0.2), ("lowering_error", 0.05)]
    merged = _with_reports(rules, votes, winner="custom_op")
    assert [(a.pattern, a.source) for a in merged] == [
        ("lowering_error", "rules"), ("unknown", "rules"), ("cpp_compile_error", "similar_reports")]
    others = [a.confidence for a in _with_reports(rules[:1] + rules[2:], votes, winner="custom_op")]
    assert others == sorted(others, reverse=True) == [0.3, 0.3, 0.2]  # toolchain_setup once, at the surer 0.2
