"""How far a second person agrees with the corpus's labels: the ceiling a log classifier can be held to.

`tests/corpus/second_annotator.jsonl` holds a second, independent labelling of a random sample of the corpus's `dev`
cases (brief: `tests/corpus/second_annotator_brief.md`; the annotator saw each case's text and URL, never the first
label or the classifier). Each case has two labels: `text_label`, decided from the quoted text alone (what a classifier
sees), and `thread_label`, decided after reading the thread where it could be found (`thread_seen`).

Printed: how often each agrees with the corpus's label, with a 95% interval; the classifier's top-1 and top-3 on the
same cases, against the corpus's label and against the second annotator's text label; the annotator's agreement
reweighted to the whole `dev` split (a sample can be easier or harder than its split: the agreement where the
classifier is right and where it is wrong, weighted by the classifier's top-1 on the whole split); and the label
pairs they disagree on. The reference is the second annotator reading the text: a classifier that reads only the
log can hardly agree with the corpus more often than a careful person reading the same text does.

    PYTHONPATH=server python benchmarks/annotator_agreement.py
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

# The corpus as the accuracy benchmark reads it, and a case classified as it scores one (its own thread left out of
# the similar reports).
from classify_accuracy import CORPUS, predict  # noqa: E402
from classify_accuracy import load as load_corpus  # noqa: E402

SECOND = ROOT / "tests" / "corpus" / "second_annotator.jsonl"


def load(corpus: Path = CORPUS, second: Path = SECOND) -> list[tuple[dict, dict]]:
    """(corpus case, second annotation) pairs, in the annotations' order; every annotated case is a `dev` case."""
    cases = {c["id"]: c for c in load_corpus(corpus)}
    pairs = []
    for a in load_corpus(second):
        case = cases.get(a["id"])
        if case is None or case["split"] != "dev":
            raise ValueError(f"{a['id']}: not a dev case of the corpus")
        pairs.append((case, a))
    return pairs


def interval(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% interval for k agreements in n."""
    if n == 0:
        return 0.0, 0.0
    z, p = 1.96, k / n
    mid, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (mid - half) / (1 + z * z / n), (mid + half) / (1 + z * z / n)


def reweighted(pairs: list[tuple[dict, dict]], preds: list[list[str]], key: str, split_top1: float) -> float:
    """The annotator's agreement (by `key`) where the classifier is right and where it is wrong, weighted by the
    classifier's top-1 on the whole split."""
    def share(hit: bool) -> float:
        rows = [(c, a) for p, (c, a) in zip(preds, pairs, strict=True) if (p[0] == c["label"]) == hit]
        return sum(a[key] == c["label"] for c, a in rows) / max(len(rows), 1)

    return split_top1 * share(True) + (1 - split_top1) * share(False)


# Two draws of 120 from the dev split made the sample (tests/corpus/second_annotator_brief.md); DRAWS other draws of
# its size, seeded in turn, show how far a sample's classify_error top-1 can stray from the split's.
DRAWS = 200


def draws(hits: list[bool], size: int, count: int = DRAWS) -> tuple[float, float]:
    """The lowest and highest top-1 over `count` random draws of `size` cases (seeds 0..count-1) from the split."""
    tops = [sum(random.Random(seed).sample(hits, size)) / size for seed in range(count)]
    return min(tops), max(tops)


def score(pairs: list[tuple[dict, dict]], split: list[dict]) -> dict:
    """The agreements and classify_error's figures on the pairs; `split` (holding every paired case) for the
    reweighting and the draws. Each case of the split is classified once."""
    ranked = {c["id"]: predict(c)[0] for c in split}
    preds = [ranked[case["id"]] for case, _a in pairs]
    seen = [(c, a) for c, a in pairs if a["thread_seen"]]
    hits = [ranked[c["id"]][0] == c["label"] for c in split]
    split_top1 = sum(hits) / len(hits)

    def agree(rows: list[tuple[dict, dict]], key: str) -> tuple[int, int]:
        return sum(a[key] == c["label"] for c, a in rows), len(rows)

    return {
        "n": len(pairs),
        "text": agree(pairs, "text_label"),
        "thread": agree(pairs, "thread_label"),
        "thread_seen": agree(seen, "thread_label"),
        "text_where_seen": agree(seen, "text_label"),
        "top1": (sum(p[0] == c["label"] for p, (c, _a) in zip(preds, pairs, strict=True)), len(pairs)),
        "top3": (sum(c["label"] in p[:3] for p, (c, _a) in zip(preds, pairs, strict=True)), len(pairs)),
        "top1_vs_text": (sum(p[0] == a["text_label"] for p, (_c, a) in zip(preds, pairs, strict=True)), len(pairs)),
        "split_top1": split_top1,
        "draws": draws(hits, len(pairs)),
        "text_reweighted": reweighted(pairs, preds, "text_label", split_top1),
        "thread_reweighted": reweighted(pairs, preds, "thread_label", split_top1),
        "pairs": Counter((c["label"], a["text_label"]) for c, a in pairs if a["text_label"] != c["label"]),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--second", type=Path, default=SECOND)
    args = ap.parse_args(argv)
    dev = [c for c in load_corpus() if c["split"] == "dev"]
    s = score(load(second=args.second), dev)

    def line(name: str, kn: tuple[int, int]) -> None:
        k, n = kn
        lo, hi = interval(k, n)
        print(f"   {name:62} {k / max(n, 1):.3f}  [{lo:.3f}, {hi:.3f}]  ({k}/{n})")

    print(f"== {s['n']} dev cases labelled a second time (agreement with the corpus's label, 95% interval)")
    line("second annotator, the text alone (the reference)", s["text"])
    line("second annotator, after the thread", s["thread"])
    line("second annotator, after the thread, where it was found", s["thread_seen"])
    line("second annotator, the text alone, same cases", s["text_where_seen"])
    line("classify_error top-1 (dev: the rules were written from it)", s["top1"])
    line("classify_error top-3", s["top3"])
    line("classify_error top-1 against the second annotator's text label", s["top1_vs_text"])
    print(f"   reweighted to the whole dev split (classify_error top-1 there {s['split_top1']:.3f}): the text alone "
          f"{s['text_reweighted']:.3f}, after the thread {s['thread_reweighted']:.3f}")
    print(f"   classify_error top-1 on {DRAWS} other random draws of {s['n']} dev cases: "
          f"{s['draws'][0]:.3f}-{s['draws'][1]:.3f}")
    print("   text label disagreements (corpus label -> second annotator's):")
    for (label, other), count in s["pairs"].most_common():
        print(f"     {label:30} -> {other:30} {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
