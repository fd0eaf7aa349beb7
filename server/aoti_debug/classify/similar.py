"""The public reports a log reads most like (data/reports.json): the `dev` split of the real-report corpus and the
fresh reports gathered beside it (tests/corpus/fresh.jsonl), each quoted from an issue thread with the pattern a person
chose for it, compared by the words they share (TF-IDF cosine).

The nearest reports are evidence an agent or a user can check (each has its thread's URL), and the patterns those
reports carry rank among the rules' alternatives by confidence. A log is compared by its last KiB, cleaned
as the rules read it (ANSI codes, escapes, the prefixes tools add, boilerplate), and a report counts only when it
shares at least 3 words with it. The `test` split is never indexed: it measures how this generalizes (no fresh report
is a thread of the corpus)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path

from pydantic import BaseModel, Field

from aoti_debug.common.logread import clean_line, normalize_chunk

DATA = Path(__file__).parent.parent / "data" / "reports.json"
WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{2,}")
# A log is compared by its end, where the error is, about as long as a quoted report (median 440 bytes, longest 1.8 KB):
# a longer end lets what a long log printed before the error outweigh it.
TAIL = 1024
# A report counts only when it shares this many words with the log: "hello world" or "(no output)" reads like nothing.
SHARED = 3
KEEP = 8 * TAIL  # raw bytes kept, cleaned, then cut to TAIL
NEIGHBOURS = 7  # the reports that vote; SHOWN of them are returned
SHOWN = 3
_skip: ContextVar[frozenset[str]] = ContextVar("similar_skip", default=frozenset())


class SimilarReport(BaseModel):
    """A public report (the corpus's dev split or a fresh report) whose words the end of the log shares: a thread to
    read, not a diagnosis."""

    url: str = Field(description="The public thread the report is quoted from")
    pattern: str = Field(description="The pattern a person chose for it ('unknown': no AOTI failure, or none we know)")
    similarity: float = Field(ge=0, le=1, description=(
        "Cosine of the words the log's last KiB and the report share (TF-IDF weights; 1: the same words)"))


def words(text: bytes) -> Counter[str]:
    return Counter(w.decode().lower() for w in WORD.findall(text))


def cleaned(text: bytes) -> bytes:
    """The text as the rules read it: ANSI codes and escapes gone, each line without the prefixes tools add (CI
    timestamps, a rank, docker compose's service, a JSON record's wrapper) and boilerplate lines dropped, so that a
    log reads like the same reports in whatever form it is handed over."""
    lines = (clean_line(line) for line in normalize_chunk(text).decode("utf-8", "replace").split("\n"))
    return "\n".join(line for line in lines if line).encode()


def report_words(text: str) -> dict[str, int]:
    """A quoted report's word counts as the index holds them: cleaned as the rules read it, sorted by word."""
    return dict(sorted(words(cleaned(text.encode())).items()))


def index_text(cases: Iterable[dict], fresh: Iterable[dict] = ()) -> str:
    """What data/reports.json holds: each `dev` case's URL, label and word counts, in corpus order, then each fresh
    report's (fresh.jsonl's rows carry no split: none is a thread of the corpus), a line each. A fresh report whose
    words are a corpus case's (another thread quoting the same message) is left out: a twin of a `test` case would
    let the test split be read through the index, and a twin of a `dev` case adds nothing."""
    counted = [(c, report_words(c["text"])) for c in cases]
    quoted = {tuple(w.items()) for _c, w in counted}
    reports = [(c, w) for c, w in counted if c["split"] == "dev"]
    reports += [(f, w) for f in fresh if tuple((w := report_words(f["text"])).items()) not in quoted]
    rows = [json.dumps({"url": c["url"], "label": c["label"], "words": w}, ensure_ascii=False, separators=(",", ":"))
            for c, w in reports]
    return '{"reports": [\n' + ",\n".join(rows) + "\n]}\n"


class _Index:
    def __init__(self, reports: list[dict]) -> None:
        self.reports = reports
        df = Counter(w for r in reports for w in r["words"])
        self.idf = {w: math.log(len(reports) / (1 + n) + 1) for w, n in df.items()}
        self.postings: dict[str, list[tuple[int, float]]] = {}
        for i, r in enumerate(reports):
            for w, x in self._vector(Counter(r["words"])).items():
                self.postings.setdefault(w, []).append((i, x))

    def _vector(self, counts: Counter[str]) -> dict[str, float]:
        v = {w: (1 + math.log(c)) * self.idf[w] for w, c in counts.items() if w in self.idf}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {w: x / norm for w, x in v.items()}

    def nearest(self, counts: Counter[str], skip: frozenset[str]) -> list[tuple[float, dict]]:
        sims: Counter[int] = Counter()
        shared: Counter[int] = Counter()
        for w, x in self._vector(counts).items():
            for i, y in self.postings[w]:
                sims[i] += x * y
                shared[i] += 1
        ranked = sorted(((s, i) for i, s in sims.items() if shared[i] >= SHARED and self.reports[i]["url"] not in skip),
                        key=lambda p: -p[0])
        return [(min(round(s, 4), 1.0), self.reports[i]) for s, i in ranked[:NEIGHBOURS]]


@cache
def _index() -> _Index:
    try:
        return _Index(json.loads(DATA.read_text(encoding="utf-8"))["reports"])
    except (OSError, ValueError, KeyError, TypeError):  # an install without the index compares with nothing
        return _Index([])


@contextmanager
def excluding(*urls: str) -> Iterator[None]:
    """Leave these threads' reports out (a benchmark scoring a `dev` case never finds the case itself)."""
    token = _skip.set(_skip.get() | frozenset(urls))
    try:
        yield
    finally:
        _skip.reset(token)


class Tail:
    """Passes a log's chunks on and keeps its last bytes: KEEP of them, so that the last TAIL are left once ANSI codes
    and escapes are cleaned away."""

    def __init__(self) -> None:
        self.parts: deque[bytes] = deque()
        self.size = 0

    def __call__(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            self.parts.append(chunk[-KEEP:])
            self.size += len(self.parts[-1])
            while self.size - len(self.parts[0]) >= KEEP:
                self.size -= len(self.parts.popleft())
            yield chunk

    def text(self) -> bytes:
        return b"".join(self.parts)[-KEEP:]


def nearest(text: bytes) -> tuple[list[SimilarReport], list[tuple[str, float]]]:
    """The reports nearest the text, and the patterns they point to: each with its share of their summed similarity
    times its best report's similarity, best first."""
    near = _index().nearest(words(cleaned(text)[-TAIL:]), _skip.get())
    total = sum(s for s, _r in near) or 1.0
    share: Counter[str] = Counter()
    best: dict[str, float] = {}
    for s, r in near:
        share[r["label"]] += s / total
        best.setdefault(r["label"], s)
    votes = sorted(((p, round(v * best[p], 4)) for p, v in share.items() if v * best[p] > 0), key=lambda m: -m[1])
    shown: dict[str, SimilarReport] = {}  # a thread quoted twice is shown once, by its nearer report
    for s, r in near:
        if s > 0 and r["url"] not in shown and len(shown) < SHOWN:
            shown[r["url"]] = SimilarReport(url=r["url"], pattern=r["label"], similarity=s)
    return list(shown.values()), votes
