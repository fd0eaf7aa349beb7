"""How classify_error holds up when the same logs come wrapped the way tools and people hand them over.

Each corpus case (tests/corpus/cases.jsonl) is classified as quoted, then rewritten in one format at a time: CRLF
line ends, ANSI colors, CI timestamps, `gh run view --log` (job, step, timestamp), a markdown quote, HTML escaping,
`cat -n`, torchrun's rank prefix, docker compose's service column, vLLM's worker tag and logger, SGLang's logger,
one JSON record per line (docker's json-file, kubectl), the whole log as an escaped string (a Python repr: literal
backslash-n between lines), and a notebook's saved traceback (one colored JSON string per line). Printed per
format: top-1 against the label, and the share classified exactly as the plain text (the reference).

    PYTHONPATH=server python benchmarks/classify_formats.py [--split dev|test]   (test: these aggregates only)
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from aoti_debug.classify.engine import classify_text  # noqa: E402

CORPUS = ROOT / "tests" / "corpus" / "cases.jsonl"


def _lines(prefix: Callable[[int, str], str]) -> Callable[[str], str]:
    return lambda text: "\n".join(prefix(i, line) for i, line in enumerate(text.split("\n")))


FORMATS: dict[str, Callable[[str], str]] = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "ansi colors": _lines(lambda i, line: f"\x1b[31m{line}\x1b[0m"),
    "ci timestamp": _lines(lambda i, line: f"2025-03-01T12:00:00.1234567Z {line}"),
    "gh run view --log": _lines(lambda i, line: f"build\tRun tests\t2025-03-01T12:00:00.1234567Z {line}"),
    "markdown quote": _lines(lambda i, line: f"> {line}"),
    "html escaped": lambda t: html.escape(t, quote=False),
    "cat -n": _lines(lambda i, line: f"{i + 1:6d}\t{line}"),
    "torchrun rank": _lines(lambda i, line: f"[rank0]: {line}"),
    "docker compose": _lines(lambda i, line: f"worker-1  | {line}"),
    "vllm worker": _lines(lambda i, line: f"(VllmWorker rank=0 pid=1234) ERROR 07-01 14:28:21 [core.py:515] {line}"),
    "sglang": _lines(lambda i, line: f"[2025-08-31 17:30:33 TP0] {line}"),
    "json records": _lines(lambda i, line: json.dumps({"log": line + "\n", "stream": "stderr"})),
    "escaped string": repr,
    "notebook traceback": _lines(lambda i, line: "      " + json.dumps(f"\x1b[0;31m{line}\x1b[0m") + ","),
}


def load(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score(cases: list[dict]) -> dict[str, tuple[float, float]]:
    """Format -> (top-1 against the label, share classified as the plain text), the plain text first."""
    plain = [classify_text(c["text"]).pattern for c in cases]
    out = {"plain": (sum(p == c["label"] for p, c in zip(plain, cases, strict=True)) / len(cases), 1.0)}
    for name, wrap in FORMATS.items():
        got = [classify_text(wrap(c["text"])).pattern for c in cases]
        out[name] = (sum(g == c["label"] for g, c in zip(got, cases, strict=True)) / len(cases),
                     sum(g == p for g, p in zip(got, plain, strict=True)) / len(cases))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    args = ap.parse_args()
    cases = [c for c in load() if c["split"] == args.split]
    print(f"{len(cases)} {args.split} cases")
    print(f"   {'format':20} {'top-1':>6} {'as plain':>9}")
    for name, (top1, same) in score(cases).items():
        print(f"   {name:20} {top1:6.3f} {same:9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
