"""How many of PyTorch's own AOTI and Inductor error messages classify_error routes where they belong.

`tests/corpus/source_strings.jsonl` holds the user-facing failure messages of torch's AOTI runtime, package loader,
runner and proxy executor (torch/csrc/inductor/...) and of Inductor's build and package code (torch/_inductor/...,
torch/export/pt2_archive, torch/_export), read from the sources, each with the pattern a person chose for it
(`unknown` for wrappers that only pass another error on, `benign` for warnings). Later harvests added Triton,
ExecuTorch, c10/ATen, Inductor's lowering and C++ wrapper codegen, higher-order ops and AOTAutograd, the CUDA, XPU,
MPS and ROCm device layers, and the host's own words (glibc's loader and malloc, CPython's faulthandler and
importers, libstdc++'s terminate, lld); the `file` root names the project (cuda-runtime/: the CUDA runtime's
error strings as public copies of its table give them). Each `{}` (a value formatted at run
time) is filled with a number, then a name, then a dotted name; a message counts as routed when one filling,
raised as `RuntimeError: <message>`, classifies as its pattern. The reference column is the share a classifier
that answers `unknown` to everything would reach.

    PYTHONPATH=server python benchmarks/source_strings.py [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from aoti_debug.classify.engine import classify_text  # noqa: E402

STRINGS = ROOT / "tests" / "corpus" / "source_strings.jsonl"
FILLINGS = ("1", "foo", "x.y")


def load(path: Path = STRINGS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def routed(entry: dict) -> tuple[bool, str]:
    """Whether a filling of the message classifies as its pattern; with the first filling's verdict."""
    first = ""
    for filling in FILLINGS:
        text = entry["string"].replace("{}", filling).strip().splitlines()
        got = classify_text(f"RuntimeError: {text[0] if text else ''}").pattern
        first = first or got
        if got == entry["pattern"]:
            return True, got
    return False, first


def score(entries: list[dict]) -> dict:
    per: dict[str, list[int]] = {}
    misses = []
    for e in entries:
        if e["pattern"] == "benign":
            continue
        ok, got = routed(e)
        row = per.setdefault(e["pattern"], [0, 0])
        row[0] += 1
        row[1] += ok
        if not ok:
            misses.append((e["pattern"], got, e["file"], e["string"]))
    n = sum(r[0] for r in per.values())
    return {"n": n, "routed": sum(r[1] for r in per.values()) / max(n, 1),
            "all_unknown": per.get("unknown", [0, 0])[0] / max(n, 1), "per": per, "misses": misses}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--misses", action="store_true", help="list each message routed elsewhere")
    args = ap.parse_args(argv)
    s = score(load())
    print(f"{s['n']} messages (benign ones left out): routed {s['routed']:.3f}   "
          f"reference (all unknown) {s['all_unknown']:.3f}")
    for pattern, (n, ok) in sorted(s["per"].items()):
        print(f"   {pattern:28} {n:4d} {ok / n:6.2f}")
    if args.misses:
        for pattern, got, file, string in s["misses"]:
            print(f"   miss {pattern} -> {got}: {file}: {string[:120]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
