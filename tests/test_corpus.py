"""The real-report corpus: every case is well formed, and the test split's aggregate stays above its floor."""

from __future__ import annotations

import re

import byfile
import pytest
from aoti_debug.classify.guides import PATTERN_IDS
from corpus_cases import accuracy, cases, held_out

FIELDS = ["id", "url", "torch", "text", "label", "phase", "split", "why"]
# What the rules reach on the held-out split (measured, not a target): a change that loses cases fails here.
TEST_TOP1_FLOOR, TEST_TOP3_FLOOR = 0.795, 0.955  # 2245 cases, 2026-11-27, seventeenth session: 0.797 / 0.959 (top-3
# 0.878 before `unknown` ranked where a negative is likelier and the nearest public reports and the silent failures
# filled short rankings; 0.953 before the fresh reports, less the twins of corpus cases, joined the nearest-reports
# index)


def test_every_case_has_exactly_the_fields_in_order_with_valid_values() -> None:
    bad = {}
    for c in cases():
        problems = []
        if list(c) != FIELDS:
            problems.append(f"fields {list(c)}")
        if c.get("label") not in PATTERN_IDS:
            problems.append(f"label {c.get('label')!r} is not a pattern id")
        if c.get("split") not in ("dev", "test"):
            problems.append(f"split {c.get('split')!r}")
        if c.get("phase") not in ("export", "compile", "load", "run", None):
            problems.append(f"phase {c.get('phase')!r}")
        if not re.match(r"^https://\S+$", c.get("url") or ""):
            problems.append("url")
        if not (c.get("text") or "").strip() or not (c.get("why") or "").strip():
            problems.append("empty text or why")
        if c.get("torch") is not None and not isinstance(c["torch"], str):
            problems.append("torch must be a string or null")
        if problems:
            bad[c.get("id")] = problems
    assert bad == {}


def test_ids_and_texts_are_unique_and_a_thread_lies_in_one_split() -> None:
    all_cases = cases()
    ids = [c["id"] for c in all_cases]
    texts = [c["text"].strip() for c in all_cases]
    assert len(set(ids)) == len(ids), sorted({i for i in ids if ids.count(i) > 1})
    assert len(set(texts)) == len(texts)
    splits: dict[str, set[str]] = {}
    for c in all_cases:
        splits.setdefault(c["url"], set()).add(c["split"])
    assert {u: s for u, s in splits.items() if len(s) > 1} == {}


FRESH_FIELDS = ["id", "url", "text", "label", "why", "round", "family", "checked"]


def test_fresh_reports_are_well_formed_and_none_quotes_a_corpus_thread() -> None:
    """tests/corpus/fresh.jsonl: reports gathered outside the corpus, so a thread in both would be measured twice."""
    fresh = accuracy().load(accuracy().FRESH)
    bad = {c.get("id"): c for c in fresh if list(c) != FRESH_FIELDS or c["label"] not in PATTERN_IDS
           or not isinstance(c["checked"], bool)
           or not re.match(r"^https?://\S+$", c["url"]) or not c["text"].strip() or not c["why"].strip()}
    assert bad == {}
    urls = [c["url"] for c in fresh]
    assert len(set(urls)) == len(urls) and len({c["id"] for c in fresh}) == len(fresh)
    assert set(urls) & {c["url"] for c in cases()} == set()


def test_both_splits_hold_cases_of_the_new_patterns_and_negatives() -> None:
    for split in ("dev", "test"):
        labels = {c["label"] for c in cases() if c["split"] == split}
        assert {"toolchain_setup", "unknown"} <= labels, split


@pytest.mark.timeout(600)
@pytest.mark.xdist_group("held_out")
def test_the_held_out_split_stays_above_its_measured_floor() -> None:
    s = held_out()
    assert s["top1"] >= TEST_TOP1_FLOOR and s["top3"] >= TEST_TOP3_FLOOR, (round(s["top1"], 3), round(s["top3"], 3))


# SKILL.md tells agents how far each confidence band can be trusted, from the test split (2026-11-28: a pattern at 0.9
# or more 0.92, 0.5 to 0.9 0.81, below 0.5 0.67, a weak line and a best guess together: 33 cases, too few to tell
# apart); a change that makes a surer band no more often right than a less sure one, or drops the strong band well
# below what SKILL.md says, fails here.
STRONG_TOP1_FLOOR = 0.9


@pytest.mark.timeout(600)
@pytest.mark.xdist_group("held_out")
def test_the_held_out_split_is_right_more_often_the_surer_the_classification_says_it_is() -> None:
    strong, decisive, weak, guess = (held_out()["bands"][b] for b in accuracy().BANDS[:4])
    below = [weak[0] + guess[0], weak[1] + guess[1]]
    assert all(n > 0 for n, _t in (strong, decisive, below)), (strong, decisive, below)
    share = [t / n for n, t in (strong, decisive, below)]
    assert share[0] >= STRONG_TOP1_FLOOR and share[0] > share[1] > share[2], share


# What share of torch's own AOTI/Inductor failure messages route to the pattern a person chose (measured, not a
# target; benchmarks/source_strings.py): a change that loses them fails here.
SOURCE_ROUTED_FLOOR = 0.484  # 2328 messages, 2026-11-26: 0.488 (0.479 before rules were written from the sixth harvest,
# whose 299 alone routed 0.408); the 2029 before it: 0.490 (0.483 before the fifth harvest's rules). 0.485 -> 0.484
# (round 22, 0.4845): two bare messages that any program of their kind raises decide only next to a compiled model,
# so alone they no longer route: Triton's `triton.runtime.errors.PTXASError` (a hand-written kernel raises it too, as
# its `PTXAS error: ` sibling, already gated) and cpp_extension's `CUDA_HOME environment variable is not set` (every
# CUDA extension build raises it first, `unknown` by the policy, as its Ninja and MSVC checks are).


def test_every_source_string_names_its_file_and_a_pattern_or_benign() -> None:
    mod = byfile.load("benchmarks/source_strings.py")
    roots = ("torch/", "aten/", "c10/", "triton/", "executorch/", "glibc/", "cpython/", "gcc/", "llvm/",
             "cuda-runtime/", "cuda-toolkit/", "binutils/", "msvc/", "vllm/", "torchvision/", "torchaudio/", "torio/",
             "xformers/", "flash-attention/", "bitsandbytes/", "apex/", "torchao/")
    bad = [e for e in mod.load() if list(e) != ["string", "file", "raise", "means", "pattern"]
           or e["pattern"] not in {*PATTERN_IDS, "benign"} or not e["file"].startswith(roots)]
    assert bad == []


def test_torchs_own_failure_messages_route_to_their_patterns_above_the_floor() -> None:
    mod = byfile.load("benchmarks/source_strings.py")
    s = mod.score(mod.load())
    assert s["routed"] >= SOURCE_ROUTED_FLOOR, round(s["routed"], 3)


# The same logs wrapped the way tools hand them over (benchmarks/classify_formats.py): CI and gh prefixes, cat -n,
# docker compose, JSON records, an escaped string, a notebook's traceback. Measured 2026-11-26 on dev: 0.979 for the
# escaped string, 0.999 or 1.000 for the rest (0.893 to 0.952 for six of them before logread learned them).
FORMAT_SAME_FLOOR = {"escaped string": 0.97}


def test_the_corpus_classifies_the_same_in_every_format_tools_hand_logs_over_in() -> None:
    mod = byfile.load("benchmarks/classify_formats.py")
    s = mod.score([c for c in cases() if c["split"] == "dev"])
    low = {name: round(same, 3) for name, (_top1, same) in s.items() if same < FORMAT_SAME_FLOOR.get(name, 0.995)}
    assert low == {}


def test_second_annotations_are_of_dev_cases_with_pattern_labels_and_agree_as_measured() -> None:
    mod = byfile.load("benchmarks/annotator_agreement.py")
    pairs = mod.load()  # raises on a case that is not a dev case of the corpus
    assert len(pairs) == len({c["id"] for c, _a in pairs}) == 240
    for _case, a in pairs:
        assert list(a) == ["id", "text_label", "thread_label", "thread_seen", "note"], a["id"]
        assert {a["text_label"], a["thread_label"]} <= set(PATTERN_IDS), a["id"]
        assert isinstance(a["thread_seen"], bool) and a["note"].strip(), a["id"]
    # the text-alone agreement the docs quote (0.821 of 240; 0.838 before this session's audits made the policy the
    # second annotator read more precise): a relabel that moves it must update them
    agree = sum(a["text_label"] == c["label"] for c, a in pairs)
    assert agree == 197
