"""Tokenize the intermediate value printer's output (levels 1-3) by record shape, streaming, in bounded memory.

Records are found by their starts, never by line order: level-2 scalar records end in a literal ``\\n`` and
share a line with what follows, stderr lines interleave, and a dying process cuts a record short. Tensor
bodies are skipped; the stats block is kept raw and parsed only for the records a caller keeps. Hot paths
use bytes.find/split/count (memchr speed), not per-line Python, so the parser keeps pace with grep.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

# Read size; the parser holds about two of these at once.
CHUNK = 4 << 20
# A record (header to stats end) longer than this is broken: parse what is there and move on.
MAX_REGION = 1 << 20
UNPARSED_SAMPLES = 5
SAMPLE_CHARS = 200

INPUTS = b"[  aoti_model_inputs - "
BEFORE = b"[  before_launch - "
# Read record by record at the start (the first launches are kept) and at the end (the crash is there).
HEAD_BYTES, TAIL_BYTES = 256 << 10, 512 << 10
REC = b"[  "  # every level-2 record starts so: "[  before_launch - K - arg  ]:" or "[  ... - K - ks0: 7  ]\n"
PREFIXES = {b"aoti_model_inputs", b"before_launch", b"after_launch"}
L3_BEFORE, L3_AFTER = b"[ before_launch: ", b"[ after_launch: "
L3_RX = re.compile(rb"^\[ (before|after)_launch: ([^\s\]]+) \][^\S\n]*$", re.M)
STAT_KEYS = {b"Number of elements", b"Dtype", b"Mean value", b"Min value", b"Max value", b"Device", b"Size",
             b"Stride", b"Layout", b"Is contiguous", b"Requires grad"}
SAVED_RX = re.compile(rb"Saved tensor to (\S+\.pt)\b")
OOB_RX = re.compile(rb"index out of bounds: ([^`\n\"]*?)(?:` failed|\"|[^\S\n]*$)", re.M)
RAISED_RX = re.compile(rb"Exception raised from (\w+) at (\S+?\.cpp):(\d+)")
TRITON_FILE_RX = re.compile(rb"(\S+\.py):(\d+): \S+: block: \[")
MULTIKERNEL = b"MultiKernel type is not supported in AOTI debug printer"


class Sink(Protocol):
    """Receives what the tokenizer finds, in order of appearance (level-3 lines in bulk per chunk)."""

    def tensor(self, prefix: str, kernel: str, arg: str, line: int, stats: bytes | None) -> None: ...
    def scalar(self, prefix: str, kernel: str, arg: str, line: int, value: int) -> None: ...
    def launches(self, before: int, events: list[tuple[str, str, int]] | None, tail: list[str]) -> None: ...
    def note(self, kind: str, line: int, text: str, where: str = "") -> None: ...
    def wants(self, segment: bytes) -> str: ...
    def skipped(self) -> None: ...


class _Lines:
    """Line numbers of increasing positions in a buffer, counted incrementally."""

    def __init__(self, buf: bytes, base: int):
        self.buf, self.pos, self.line = buf, 0, base

    def at(self, pos: int) -> int:
        self.line += self.buf.count(b"\n", self.pos, pos)
        self.pos = pos
        return self.line


class Tokenizer:
    """feed(bytes) as it arrives, finish() at the end; counts what it could not parse."""

    def __init__(self, sink: Sink, tail_kernels: int = 20):
        self.sink = sink
        self.bytes = self.lines = self.unparsed_lines = self.other_lines = 0
        self.samples: list[str] = []
        self.skipped_bytes = 0
        self._carry = b""
        self._crlf: bool | None = None
        self._seen_rec = self._seen_l3 = False  # printing started (at level 2, at level 3)
        self._held: bytes | None = None  # the latest complete segment, parsed once we know it is not the last
        self._line = 1  # line number at the start of the next segment
        self._tail = tail_kernels
        self._open3 = False  # a level-3 launch was left open by the previous segment

    def _unparsed(self, text: bytes) -> None:
        self.unparsed_lines += 1
        if len(self.samples) < UNPARSED_SAMPLES:
            self.samples.append(text[:SAMPLE_CHARS].decode("utf-8", "replace"))

    def _other(self, text: bytes) -> None:
        """Count non-empty lines outside records (exactly for short texts, newline arithmetic for long ones)."""
        if len(text) > 4096:
            self.other_lines += text.count(b"\n") - text.count(b"\n\n") + (not text.endswith(b"\n"))
        elif text.strip():
            self.other_lines += sum(1 for ln in text.split(b"\n") if ln.strip())

    def _level3(self, seg: bytes, line0: int) -> int:
        """Level-3 lines: counted at memchr speed; walked line by line only where launches do not pair up."""
        nb = seg.count(L3_BEFORE)
        na = seg.count(L3_AFTER) if nb or self._open3 else 0
        if not nb and not na:
            return 0
        self._open3 = nb != na
        self._seen_l3 = True
        tail, pos = [], len(seg)
        while len(tail) < self._tail and (pos := seg.rfind(L3_BEFORE, 0, pos)) >= 0:
            end = seg.find(b" ]", pos)
            tail.append(seg[pos + len(L3_BEFORE):end].decode("utf-8", "replace"))
        events = None
        if nb != na or seg.rfind(L3_BEFORE) > seg.rfind(L3_AFTER):
            events, line, last = [], line0, 0
            for m in L3_RX.finditer(seg):
                line += seg.count(b"\n", last, m.start())
                last = m.start()
                events.append((m.group(1).decode(), m.group(2).decode("utf-8", "replace"), line))
        self.sink.launches(nb, events, tail[::-1])
        return nb + na

    def _extras(self, seg: bytes, line0: int, level2: bool) -> None:
        """Level-1 saves, index-out-of-bounds messages, the CPU kernel that raised, MultiKernel (once printing
        has started at level 2 neither level-1 lines nor the compile-time MultiKernel warning can come)."""
        if not level2 and not self._seen_l3 and b"Saved tensor to" in seg:
            at = _Lines(seg, line0).at
            for m in SAVED_RX.finditer(seg):
                self.sink.note("saved", at(m.start()), m.group(1).decode("utf-8", "replace"))
        if b"index out of bounds" in seg:
            at = _Lines(seg, line0).at
            for m in OOB_RX.finditer(seg):
                ls = seg.rfind(b"\n", 0, m.start()) + 1
                fm = TRITON_FILE_RX.search(seg, ls, m.start())
                where = f"{fm.group(1).decode('utf-8', 'replace')}:{fm.group(2).decode()}" if fm else ""
                self.sink.note("oob", at(m.start()), m.group(1).decode("utf-8", "replace").strip(), where)
        if b"Exception raised from" in seg:
            at = _Lines(seg, line0).at
            for m in RAISED_RX.finditer(seg):
                self.sink.note("raised", at(m.start()), m.group(1).decode(),
                               f"{m.group(2).decode('utf-8', 'replace')}:{m.group(3).decode()}")
        if not self._seen_rec and not self._seen_l3 and (pos := seg.find(MULTIKERNEL)) >= 0:
            self.sink.note("multikernel", line0 + seg.count(b"\n", 0, pos), "MultiKernel silenced the printer")

    def _record(self, piece: bytes, line: int) -> None:
        """One piece after a '[  ' split: a tensor or scalar record, then whatever text follows it."""
        e = piece.find(b"  ]")
        nl = piece.find(b"\n")
        prefix, _, rest = piece[:e].partition(b" - ")
        if e < 0 or (0 <= nl < e) or prefix not in PREFIXES:
            self._other(piece)  # a stray "[  " in the program's own output
            return
        pfx = prefix.decode()
        if pfx == "aoti_model_inputs":
            kernel, arg = "", rest
        else:
            k, _, arg = rest.partition(b" - ")
            kernel = k.decode("utf-8", "replace")
        if piece[e + 3:e + 4] != b":":  # scalar "<arg>: <value>  ]" then a literal \n, same line goes on
            name, _, value = arg.rpartition(b": ")
            try:
                self.sink.scalar(pfx, kernel, name.decode("utf-8", "replace"), line, int(value))
            except ValueError:
                self._unparsed(piece[:e + 3])
            self._other(piece[e + 5:] if piece[e + 3:e + 5] == b"\\n" else piece[e + 3:])
            return
        argname = arg.decode("utf-8", "replace")
        j = piece.find(b"Number of elements: ", e, e + MAX_REGION)
        if j < 0:  # cut short: the process died, or the print failed after a sticky CUDA error
            self.sink.tensor(pfx, kernel, argname, line, None)
            self._other(piece[e + 4:])
            return
        body = piece[e + 4:j]
        if b":" in body:  # body lines are numbers, "Columns a to b", "[ XType{..} ]"; a colon is something else
            for ln in body.split(b"\n"):
                if b":" in ln:
                    self._unparsed(ln)
        k = piece.find(b"Requires grad: ", j)
        end = piece.find(b"\n", k) if k >= 0 else -1
        end = len(piece) if end < 0 else end
        stats = piece[j:end]
        if k < 0 or stats.count(b"\n") not in (7, 10):  # 8 or 11 lines (no Mean/Min/Max when empty)
            for ln in stats.split(b"\n"):
                if ln.partition(b": ")[0] not in STAT_KEYS:
                    self._unparsed(ln)
        self.sink.tensor(pfx, kernel, argname, line, stats)
        self._other(piece[end:])

    def _cut(self, buf: bytes, final: bool) -> int:
        """Where the complete part of buf ends: whole lines, no tensor record or level-3 launch cut in half."""
        limit = len(buf) if final else buf.rfind(b"\n") + 1
        if final:
            return limit
        if limit == 0 and len(buf) > MAX_REGION:  # one endless line: take it as it is
            return len(buf)
        cut, lo = limit, max(0, limit - MAX_REGION)
        k = -1 if self._seen_l3 and not self._seen_rec else buf.rfind(REC, lo, limit)  # a record may go on
        e = buf.find(b"  ]", k, limit) if k >= 0 else -1
        if e >= 0 and buf[e + 3:e + 4] == b":" and buf.find(b"Requires grad: ", k, limit) < 0:
            cut = k
        b3 = buf.rfind(L3_BEFORE, lo, cut)  # keep a level-3 launch and its after_launch together
        if b3 >= 0 and buf.find(L3_AFTER, b3, cut) < 0:
            cut = b3
        return cut

    def _segment(self, seg: bytes, head: int | None, tail: int) -> None:
        """One complete segment: level-2 records one by one in its first head and last tail bytes (cut at launch
        starts), only scanned in between. head None: ask the sink (tail -1: this is the last segment)."""
        has_rec = not (self._seen_l3 and not self._seen_rec) and REC in seg  # a level-3 run prints no records
        n3 = 0 if self._seen_rec and not self._open3 else self._level3(seg, self._line)  # levels never mix
        self._extras(seg, self._line, has_rec)
        if not has_rec:  # no level-2 record at all
            n = seg.count(b"\n")
            self.other_lines += max(0, n - n3)
            self.lines += n
            self._line += n
            return
        self._seen_rec = True
        if head is None:
            head, tail = self._sizes(seg, last=tail == -1)
        h = len(seg) if head >= len(seg) else self._launch_start(seg, head) if head else 0
        t = h if tail >= len(seg) - h else max(h, self._launch_start(seg, len(seg) - tail))
        line = self._detail(seg[:h], self._line) if h else self._line
        if t > h:
            mid = seg[h:t]
            self.skipped_bytes += len(mid)
            self.sink.skipped()
            self._inputs(mid, line)
            line += mid.count(b"\n")
        if t < len(seg):
            line = self._detail(seg[t:], line)
        self.lines += line - self._line
        self._line = line

    @staticmethod
    def _launch_start(seg: bytes, pos: int) -> int:
        """The first record at or after pos that starts a launch (a before_launch not following another one)."""
        p = seg.find(BEFORE, pos)
        while p >= 0:
            q = seg.rfind(REC, 0, p)
            if q < 0 or not seg.startswith(BEFORE, q):
                return p
            p = seg.find(BEFORE, p + 3)
        return len(seg)

    def _detail(self, part: bytes, line: int) -> int:
        pieces = part.split(REC)
        line += pieces[0].count(b"\n")
        self._other(pieces[0])
        for piece in pieces[1:]:
            self._record(piece, line)
            line += piece.count(b"\n")
        return line

    def _inputs(self, seg: bytes, line0: int) -> None:
        """In a skipped stretch, still read the model inputs of the last call that starts in it."""
        k = seg.rfind(INPUTS)
        if k < 0:
            return
        start = k
        while (p := seg.rfind(INPUTS, max(0, start - MAX_REGION), start)) >= 0 and \
                seg.find(b"[  before_launch", p, start) < 0 and seg.find(b"[  after_launch", p, start) < 0:
            start = p
        end = seg.find(REC, k + 3)
        end = len(seg) if end < 0 else end
        self._detail(seg[start:end], line0 + seg.count(b"\n", 0, start))

    def _sizes(self, seg: bytes, last: bool) -> tuple[int, int]:
        want = self.sink.wants(seg)
        if want == "full" or (last and len(seg) <= HEAD_BYTES + TAIL_BYTES):
            return len(seg), 0
        return (HEAD_BYTES if want == "head" else 0), (TAIL_BYTES if last else 0)

    def feed(self, data: bytes) -> None:
        self.bytes += len(data)
        buf = self._carry + data if self._carry else data
        if self._crlf is None:  # a log is CRLF (captured through a terminal) or not; decided on its start
            self._crlf = b"\r\n" in buf
        if self._crlf:
            buf = buf.replace(b"\r\n", b"\n")
        cut = self._cut(buf, final=False)
        seg, self._carry = buf[:cut], buf[cut:]
        if self._held is not None:  # not the last segment: read record by record only where the sink wants to
            held, self._held = self._held, None
            self._segment(held, None, 0)
        self._held = seg

    def finish(self) -> None:
        """The held segment and the rest are the end of the output: its last launches are always read."""
        buf, self._carry = self._carry, b""
        if self._held is not None:
            held, self._held = self._held, None
            self._segment(held, None, 0 if buf else -1)
        if buf:
            if not buf.endswith(b"\n"):
                self.lines += 1
            self._segment(buf, len(buf), 0)


def feed_all(tok: Tokenizer, chunks: Iterable[bytes]) -> Tokenizer:
    for chunk in chunks:
        tok.feed(chunk)
    tok.finish()
    return tok


