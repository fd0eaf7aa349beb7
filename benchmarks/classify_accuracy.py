"""Classification accuracy on the real-report corpus (tests/corpus/cases.jsonl), per split.

Prints, for each split, top-1 and top-3 overall and per labelled pattern, the `unknown` rate, how often the
reported phase is given and agrees with the thread's, top-1 by confidence band (how far an agent can trust each: the
bands SKILL.md quotes), and a confusion table (label -> predicted). Tune rules on
`dev` only; read only the aggregate lines of `test` (`--split test --aggregate`), never its per-case output.

    PYTHONPATH=server python benchmarks/classify_accuracy.py [--split dev|test|all|fresh] [--aggregate] [--misses]

`--split fresh` scores tests/corpus/fresh.jsonl instead, round by round: public reports gathered outside the corpus,
each labelled before it was classified; their first score is each round's measure of how the rules generalize
(tests/corpus/README.md), and rules were written from them afterwards, so they are tuning material like `dev`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from aoti_debug.classify import similar  # noqa: E402
from aoti_debug.classify.engine import DECISIVE, STRONG, Classification, classify_text  # noqa: E402

CORPUS = ROOT / "tests" / "corpus" / "cases.jsonl"
FRESH = ROOT / "tests" / "corpus" / "fresh.jsonl"


def load(path: Path = CORPUS) -> list[dict]:
    """Every case of the corpus, in file order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# How sure the classification said it was, in the bands an agent acts on (SKILL.md's workflow, step 1).
BANDS = ("strong, 0.9 or more", "decisive, 0.5 to 0.9", "a weak line, below 0.5", "a best guess",
         "unknown, an outsider's log", "unknown, alternatives ranked", "unknown, nothing ranked")


def band(result: Classification) -> str:
    """The confidence band of a classification."""
    if result.pattern != "unknown":
        if result.guess:
            return BANDS[3]
        return BANDS[0] if result.confidence >= STRONG else BANDS[1] if result.confidence >= DECISIVE else BANDS[2]
    if result.outsider is not None:
        return BANDS[4]
    return BANDS[5] if any(a.source != "silent" for a in result.alternatives) else BANDS[6]


def classify_case(case: dict) -> Classification:
    """The classification of a case, its own thread left out of the reports it is compared with."""
    with similar.excluding(case["url"]):
        return classify_text(case["text"])


def ranked(result: Classification) -> list[str]:
    """The winner then its alternatives, best first."""
    return [result.pattern, *(a.pattern for a in result.alternatives)]


def predict(case: dict) -> tuple[list[str], str | None]:
    """The winner then its alternatives, best first; and the phase the classification reports."""
    result = classify_case(case)
    return ranked(result), result.phase


def score(cases: list[dict]) -> dict:
    """Top-1/top-3 overall and per label, the unknown rate and the confusion counts."""
    per = defaultdict(lambda: [0, 0, 0])  # label -> [n, top1, top3]
    confusion: Counter[tuple[str, str]] = Counter()
    unknown = 0
    misses = []
    phased = [0, 0, 0]  # cases whose thread states the phase; of them, a phase reported; of those, the same one
    bands: dict[str, list[int]] = {b: [0, 0] for b in BANDS}  # band -> [n, top1]
    for case in cases:
        result = classify_case(case)
        ranking, phase, label = ranked(result), result.phase, case["label"]
        right = ranking[0] == label
        counts = bands[band(result)]
        counts[0] += 1
        counts[1] += right
        stated = case.get("phase")  # the fresh reports carry none
        if stated:
            phased[0] += 1
            phased[1] += phase is not None
            phased[2] += phase == stated
        row = per[label]
        row[0] += 1
        row[1] += right
        row[2] += label in ranking[:3]
        unknown += ranking[0] == "unknown"
        confusion[(label, ranking[0])] += 1
        if not right:
            misses.append((case["id"], label, ranking[:3]))
    n = sum(r[0] for r in per.values())
    return {
        "n": n,
        "top1": sum(r[1] for r in per.values()) / max(n, 1),
        "top3": sum(r[2] for r in per.values()) / max(n, 1),
        "unknown_rate": unknown / max(n, 1),
        "per": dict(per),
        "confusion": confusion,
        "misses": misses,
        "bands": bands,
        "phase_n": phased[0],
        "phase_said": phased[1] / max(phased[0], 1),
        "phase_right": phased[2] / max(phased[1], 1),
    }


def report(title: str, s: dict, aggregate: bool, show_misses: bool) -> None:
    print(f"== {title}: {s['n']} cases  top-1 {s['top1']:.3f}  top-3 {s['top3']:.3f}  "
          f"unknown rate {s['unknown_rate']:.3f}")
    if s["phase_n"]:
        print(f"   phase: reported for {s['phase_said']:.3f} of the {s['phase_n']} cases whose thread states it, "
              f"the thread's phase in {s['phase_right']:.3f} of those")
    print("   top-1 by confidence: " + "; ".join(f"{b} {t / n:.2f} ({n})" for b, (n, t) in s["bands"].items() if n))
    if aggregate:
        worst = min(((r[1] / r[0]), lab) for lab, r in s["per"].items()) if s["per"] else (0.0, "-")
        print(f"   lowest per-pattern top-1: {worst[0]:.2f}")
        return
    print(f"   {'pattern':30} {'n':>4} {'top-1':>6} {'top-3':>6}")
    for label, (n, t1, t3) in sorted(s["per"].items()):
        print(f"   {label:30} {n:4d} {t1 / n:6.2f} {t3 / n:6.2f}")
    print("   confusion (label -> predicted: count), misses only:")
    for (label, pred), count in sorted(s["confusion"].items()):
        if label != pred:
            print(f"     {label:30} -> {pred:30} {count}")
    if show_misses:
        for cid, label, ranked in s["misses"]:
            print(f"     miss {cid}: {label} ranked {ranked}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=["dev", "test", "all", "fresh"], default="all")
    ap.add_argument("--aggregate", action="store_true", help="print only the aggregate lines (always for test)")
    ap.add_argument("--misses", action="store_true", help="list each miss (dev and fresh only)")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    args = ap.parse_args(argv)
    if args.split == "fresh":
        fresh = load(FRESH)
        for rnd in dict.fromkeys(c["round"] for c in fresh):
            report(f"fresh round {rnd}", score([c for c in fresh if c["round"] == rnd]), args.aggregate, args.misses)
        report("fresh, all rounds", score(fresh), args.aggregate, args.misses)
        return 0
    cases = load(args.corpus)
    splits = ["dev", "test"] if args.split == "all" else [args.split]
    for split in splits:
        chosen = [c for c in cases if c["split"] == split]
        # the test split is read in aggregate only: per-case output would invite tuning to it
        report(f"split {split}", score(chosen), args.aggregate or split == "test", args.misses and split == "dev")
    return 0


if __name__ == "__main__":
    sys.exit(main())
