"""Every rule regex (patterns and cues of guides/*.md, phase markers and exception cues of data/phases.yaml, the
engine lines of data/engines.yaml) on adversarial long lines, beside a plain needle search.

    python benchmarks/regex_worst.py [--chars 20000] [--over 0.02] [--guides ID,ID] [--timeout 60]

A regex is tried only on a line that holds one of its needles, and a line is at most 1 MiB
(classify/logscan.py), so a regex whose time grows faster than the line can stall classify_error on one crafted
or glued line. For each regex this builds lines from each needle and a filler (letters, spaces, digits,
punctuation: the needle then the filler, the filler then the needle, the needle on both ends, the needle and the
filler repeated; and each of the guide's own example lines that the regex matches, repeated whole and repeated
cut to two thirds, so that every repeat starts a match that fails late), at CHARS and at 4x CHARS characters,
and prints the worst `re.search` time at each size and their ratio: about 4 for a regex whose time grows with
the line, about 16 for one that grows with its square (a ratio is counted only where the larger time is over 5
ms: below that it is noise; a ratio over 7 is measured twice more and the fastest time of each size kept, so a
busy moment is not counted). The reference is `str.find` of the needle over the same lines. Rows are printed for
a counted ratio over 7 or a time over --over seconds; each regex runs in its own Python, stopped after --timeout
seconds.
Target (issue 12, long lines): no regex grows faster than the line.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from aoti_debug.classify import context  # noqa: E402
from aoti_debug.classify import phase as phases  # noqa: E402
from aoti_debug.classify.guides import load_guides  # noqa: E402

# Below this a search time is noise: its ratio is not counted.
NOISE_S = 0.005
# A ratio over 7 is measured this many times more before it counts.
RETRIES = 2
FILLERS = ["a", " ", "0", "a ", "/a", ":", ".", "_", "-", "'", '"', "x1", "(", ")", "=", ",", "\t", "A", "a.b ",
           "a: ", "[0]", "1 ", "e+", "<", "`"]
# Runs in a child Python: (regex, needles, chars, fillers, examples) on stdin; prints the worst search and find
# times.
CHILD = r"""
import json, re, sys, time
rx, needles, n, fillers, examples = json.loads(sys.stdin.read())
r = re.compile(rx)
worst, worst_find, what = 0.0, 0.0, ""
def lines():
    for nd in needles:
        for f in fillers:
            body = f * (n // len(f))
            for shape, line in (("needle+fill", nd + body), ("fill+needle", body + nd), ("needle+fill+needle",
                                nd + body + nd), ("(needle+fill)*", (nd + f) * (n // (len(nd) + len(f))))):
                yield f"{shape}, needle {nd!r}, filler {f!r}", nd, line
    for ex in examples:
        for shape, unit in (("(example)*", ex + " "), ("(example cut)*", ex[: max(1, 2 * len(ex) // 3)] + " ")):
            yield f"{shape}, {ex[:40]!r}", unit[:8], unit * max(1, n // len(unit))
for label, nd, line in lines():
    t = time.perf_counter()
    r.search(line)
    dt = time.perf_counter() - t
    t = time.perf_counter()
    line.find(nd)
    worst_find = max(worst_find, time.perf_counter() - t)
    if dt > worst:
        worst, what = dt, label
print(json.dumps([worst, worst_find, what]))
"""


def worst(regex: str, needles: list[str], chars: int, timeout: float,
          examples: list[str] = ()) -> tuple[float, float, str]:
    try:
        p = subprocess.run([sys.executable, "-c", CHILD],
                           input=json.dumps([regex, needles, chars, FILLERS, list(examples)]),
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return float("inf"), 0.0, f"over {timeout:.0f} s"
    if p.returncode != 0:
        return float("nan"), 0.0, p.stderr.strip().splitlines()[-1][:120]
    w, f, what = json.loads(p.stdout)
    return w, f, what


def _ratio(small: float, big: float) -> float:
    """How much slower 4x the characters made the search; 0 where the larger time is noise."""
    return big / max(small, 1e-6) if big >= NOISE_S else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chars", type=int, default=20_000)
    ap.add_argument("--over", type=float, default=0.02, help="also print rows whose 4x time is over this (s)")
    ap.add_argument("--guides", default="", help="comma list of guide ids, phases or engines (default: all)")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    only = {g for g in a.guides.split(",") if g}
    t0 = time.perf_counter()
    rows, total = [], 0
    print(f"| guide | kind | {a.chars} chars s | {4 * a.chars} chars s | ratio | needle find s | worst line | "
          "regex |")
    print("|---|---|---|---|---|---|---|---|")
    groups = [(gid, [("pattern", x) for x in g.rule.patterns] + [("cue", x) for x in g.rule.cues],
               [ln for ex in (g.rule.examples.match if g.rule.examples else []) for ln in ex.splitlines()])
              for gid, g in load_guides().items() if g.rule is not None and (not only or gid in only)]
    if not only or "phases" in only:
        groups.append(("phases", [("marker", x) for x in phases.markers()]
                       + [("exception", x) for x in phases.exception_cues()], []))
    if not only or "engines" in only:
        groups.append(("engines", [("engine", x) for x in context.engines()], []))
    for gid, regexes, example_lines in groups:
        for kind, p in regexes:
            total += 1
            own = [ln for ln in example_lines if re.search(p.regex, ln)]
            small, _, _ = worst(p.regex, p.needles, a.chars, a.timeout, own)
            big, find, what = worst(p.regex, p.needles, 4 * a.chars, a.timeout, own)
            ratio = _ratio(small, big)
            for _ in range(RETRIES if ratio > 7 and math.isfinite(big) else 0):
                small = min(small, worst(p.regex, p.needles, a.chars, a.timeout, own)[0])
                big = min(big, worst(p.regex, p.needles, 4 * a.chars, a.timeout, own)[0])
                ratio = _ratio(small, big)
            if ratio > 7 or big > a.over or big != big:
                rows.append(ratio)
                print(f"| {gid} | {kind} | {small:.4f} | {big:.4f} | {ratio:.1f} | {find:.5f} | {what} | "
                      f"`{p.regex[:80]}` |", flush=True)
    quadratic = sum(r > 7 for r in rows)
    print(f"\n{total} regexes in {time.perf_counter() - t0:.0f} s; {quadratic} grow faster than the line "
          f"(ratio over 7 for 4x the characters, over {NOISE_S * 1000:.0f} ms); target 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
