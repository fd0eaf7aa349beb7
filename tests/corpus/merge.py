"""Merge gathered corpus parts into cases.jsonl and give each new case its split, once.

A case keeps the split it has; a new case (split null) gets one from a hash of its URL, so every log quoted
from one thread lands in the same split and a rule tuned on `dev` never sees its thread's twin in `test`.
Cases whose text repeats an existing one are dropped. The index of the reports that classify_error compares a log with
(server/aoti_debug/data/reports.json: the `dev` cases, then fresh.jsonl's reports) is rewritten from the result; with
no PART it is only rewritten (after fresh.jsonl changed).

    python tests/corpus/merge.py PART.jsonl [PART.jsonl ...]
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "server"))

from aoti_debug.classify import similar  # noqa: E402

CASES = HERE / "cases.jsonl"
FRESH = HERE / "fresh.jsonl"
FIELDS = ("id", "url", "torch", "text", "label", "phase", "split", "why")
PHASES = {"export", "compile", "load", "run", None}
# Half the threads tune the rules, the other half measure them.
TEST_SHARE = 0.5


def split_for(url: str) -> str:
    """`dev` or `test`, fixed by the URL alone."""
    h = int(hashlib.sha256(url.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "test" if h < TEST_SHARE else "dev"


def check(case: dict) -> dict:
    """The case with its fields in order, or ValueError naming what is wrong."""
    missing = [f for f in FIELDS if f not in case]
    if missing:
        raise ValueError(f"{case.get('id')}: missing {missing}")
    if case["phase"] not in PHASES:
        raise ValueError(f"{case['id']}: phase {case['phase']!r}")
    if not case["url"].startswith("https://") or not case["text"].strip():
        raise ValueError(f"{case['id']}: url or text empty")
    return {f: case[f] for f in FIELDS}


def main(parts: list[str]) -> int:
    cases = [json.loads(x) for x in CASES.read_text().splitlines() if x.strip()] if CASES.exists() else []
    ids, texts = {c["id"] for c in cases}, {c["text"].strip() for c in cases}
    added = 0
    for part in parts:
        for line in Path(part).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            case = check(json.loads(line))
            if case["text"].strip() in texts:
                continue
            base, k = case["id"], 1
            while case["id"] in ids:  # two gatherers may number the same thread's logs alike
                k += 1
                case["id"] = f"{base}~{k}"
            case["split"] = case["split"] or split_for(case["url"])
            cases.append(case)
            ids.add(case["id"])
            texts.add(case["text"].strip())
            added += 1
    CASES.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    fresh = [json.loads(x) for x in FRESH.read_text(encoding="utf-8").splitlines() if x.strip()]
    similar.DATA.write_text(similar.index_text(cases, fresh), encoding="utf-8")
    print(f"{added} added, {len(cases)} cases; {similar.DATA.name} rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
