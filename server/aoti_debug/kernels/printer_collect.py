"""Group the tokenizer's records into launches, name the first NaN producer, keep a bounded few in full."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from aoti_debug.common.intparse import to_int
from aoti_debug.common.logread import file_chunks
from aoti_debug.kernels.printer_log import (
    KEEP_FIRST,
    KEEP_LAST,
    MAX_ASSERTS,
    MAX_INT_ARGS,
    MAX_OPEN,
    MAX_SAVED,
    TAIL_KERNELS,
    IndexAssert,
    Launch,
    LaunchArg,
    PrinterLog,
    Raw,
    TensorRecord,
    _Launch,
    bad,
    is_int,
    record,
)
from aoti_debug.kernels.printer_parse import CHUNK, Tokenizer, feed_all

BAD_MEAN = re.compile(rb"Mean value: -?(?:nan|inf)")
ASSERT_RX = re.compile(r"^(?:(?P<lower>.+?) <= )?(?P<expr>.*?\btmp\d+\b.*?)(?: < (?P<bound>.+))?$")


def parse_assert(text: str, line: int, where: str = "") -> IndexAssert:
    a = IndexAssert(text=text, first_line=line, kernel_file=where or None)
    if m := ASSERT_RX.match(text):
        a.lower, a.bound = m["lower"], m["bound"]
        if t := re.search(r"\btmp\d+\b", m["expr"]):
            a.tmp_var = t.group(0)
    if a.bound and re.fullmatch(r"-?\d+L?", a.bound.strip()):
        a.bound_value = to_int(a.bound.strip().rstrip("L"))  # None for an absurd bound, never a ValueError
    return a


def roles(L: _Launch, inputs: set[str], produced: set[str]) -> dict[str, str]:
    """input / output / inout / unknown per argument, from the stats before and after and the names."""
    out: dict[str, str] = {}
    for a in [*L.before, *(k for k in L.after if k not in L.before)]:
        b, af = L.before.get(a), L.after.get(a)
        af = af if af is not None and af[1] is not None else None  # a cut-short after says nothing
        known = a in produced or a in inputs or not a.startswith("buf")  # its before-stats are real values
        if b is not None and af is not None:  # a fresh buffer's before-stats are garbage, even when equal to after
            out[a] = ("input" if b[1] == af[1] else "inout") if known else "output"
        elif af is not None:
            out[a] = "output"
        else:
            out[a] = "input" if known else "unknown"
    return out


class Collector:
    """The tokenizer's sink; result() gives the PrinterLog."""

    def __init__(self, focus: Iterable[str] = ()):
        self.log = PrinterLog()
        self.focus = set(focus)
        self._focus_b = [f.encode() for f in self.focus]
        self.records = self.n_launches = self.calls = 0
        self.kernels: dict[str, int] = {}
        self.nan_producer: int | None = None
        self._new_call = False
        self.cur: _Launch | None = None
        self.phase = ""
        self.first: list[_Launch] = []
        self.last: deque[_Launch] = deque(maxlen=KEEP_LAST)
        self.pinned: dict[str, _Launch] = {}
        self.inputs: dict[str, Raw] = {}
        self.input_names: set[str] = set()
        self.produced: set[str] = set()
        self.int_args: dict[tuple[str, str], Raw] = {}
        self.asserts: dict[str, IndexAssert] = {}
        self.open: list[str] = []
        self.tail: list[str] = []

    # --- sink interface
    def tensor(self, prefix: str, kernel: str, arg: str, line: int, stats: bytes | None) -> None:
        self.records += 1
        if prefix == "aoti_model_inputs":
            if arg in self.inputs or self.cur is not None or not self.inputs or self._new_call:  # a new call
                self._new_call = False
                self._close()
                self.inputs, self.produced = {}, set()
                self.calls += 1
            self.inputs[arg] = (line, stats)
            self.input_names.add(arg)
            return
        L = self._launch(prefix, kernel, line)
        (L.before if prefix == "before_launch" else L.after)[arg] = (line, stats)

    def scalar(self, prefix: str, kernel: str, arg: str, line: int, value: int) -> None:
        self.records += 1
        L = self._launch(prefix, kernel, line)
        if prefix == "before_launch" or arg not in L.scalars:
            L.scalars[arg] = value

    def launches(self, before: int, events: list[tuple[str, str, int]] | None, tail: list[str]) -> None:
        self.log.level3_launches += before
        if events is None:
            self.tail = (self.tail + tail)[-TAIL_KERNELS:]
            return
        for kind, kernel, _line in events:
            if kind == "before":
                self.open.append(kernel)
                self.tail.append(kernel)
                del self.open[:-MAX_OPEN]
            else:
                for i in range(len(self.open) - 1, -1, -1):
                    if self.open[i] == kernel:
                        del self.open[i]
                        break
        self.tail = self.tail[-TAIL_KERNELS:]

    def note(self, kind: str, line: int, text: str, where: str = "") -> None:
        if kind == "oob":
            if text in self.asserts:
                self.asserts[text].count += 1
            elif len(self.asserts) < MAX_ASSERTS:
                self.asserts[text] = parse_assert(text, line, where)
        elif kind == "raised" and self.log.raised_kernel is None:
            self.log.raised_kernel, self.log.raised_at = text, where
        elif kind == "saved" and len(self.log.saved_tensors) < MAX_SAVED:
            self.log.saved_tensors.append(text)
        elif kind == "multikernel":
            self.log.multikernel_silenced = True

    def wants(self, segment: bytes) -> str:
        """How to read a segment: 'full' (record by record), 'head' (its first launches) or 'none' (scan only)."""
        if self.nan_producer is None and BAD_MEAN.search(segment):  # any NaN/Inf element makes the mean NaN/Inf
            return "full"
        if any(f in segment for f in self._focus_b):
            return "full"
        return "head" if len(self.first) < KEEP_FIRST else "none"

    def skipped(self) -> None:
        self._close()  # a launch cut by a skipped segment is closed as it is
        self._new_call = True  # model inputs read from a skipped segment start a call of their own

    # --- grouping
    def _launch(self, prefix: str, kernel: str, line: int) -> _Launch:
        cur = self.cur
        if cur is not None and cur.kernel == kernel and (prefix == "after_launch" or self.phase == "before"):
            if prefix == "after_launch":
                self.phase = "after"
            return cur
        self._close()
        self.cur = _Launch(kernel, self.n_launches, line, self.calls)
        self.n_launches += 1
        self.kernels[kernel] = self.kernels.get(kernel, 0) + 1
        self.phase = "before" if prefix == "before_launch" else "after"
        return self.cur

    def _close(self) -> None:
        L, self.cur = self.cur, None
        if L is None:
            return
        r = roles(L, self.input_names, self.produced)
        if self.nan_producer is None:
            outs = [a for a, role in r.items() if role in ("output", "inout") and bad(L.after.get(a))]
            ins = [a for a, role in r.items() if role in ("input", "inout") and bad(L.before.get(a))]
            if outs and not ins:
                self.nan_producer = L.ordinal
                self.pinned["nan"] = L
        self.produced.update(a for a, role in r.items() if role in ("output", "inout"))
        for a, raw in L.before.items():
            if (L.kernel, a) in self.int_args or (len(self.int_args) < MAX_INT_ARGS and is_int(raw)):
                self.int_args[(L.kernel, a)] = raw
        if len(self.first) < KEEP_FIRST:
            self.first.append(L)
        self.last.append(L)
        if L.kernel in self.focus:
            self.pinned[f"focus:{L.kernel}"] = L
        L.roles = r

    def _model(self, L: _Launch) -> Launch:
        args = [LaunchArg(arg=a, role=L.roles.get(a, "unknown"),
                          before=record(a, L.before[a]) if a in L.before else None,
                          after=record(a, L.after[a]) if a in L.after else None)
                for a in [*L.before, *(k for k in L.after if k not in L.before)]]
        finished = any(raw[1] is not None for raw in L.after.values())
        return Launch(kernel=L.kernel, ordinal=L.ordinal, line=L.line, call=L.call, args=args,
                      scalars=dict(L.scalars), finished=finished)

    def integer_args(self, kernel: str | None = None) -> list[tuple[str, TensorRecord]]:
        """(kernel, record) for integer tensor arguments seen before a launch (the latest of each)."""
        return [(k, record(a, raw)) for (k, a), raw in self.int_args.items() if kernel is None or k == kernel]

    def result(self, tok: Tokenizer) -> PrinterLog:
        last = self.cur or (self.last[-1] if self.last else None)
        self._close()
        log = self.log
        log.records, log.skipped_bytes = self.records, tok.skipped_bytes
        log.launches_total, log.kernels, log.calls, log.nan_producer = (
            self.n_launches, self.kernels, self.calls, self.nan_producer)
        if last is not None and not any(raw[1] is not None for raw in last.after.values()):
            log.unfinished_launch = last.kernel
        kept = {x.ordinal: x for x in (*self.first, *self.last, *self.pinned.values())}
        log.launches = [self._model(kept[k]) for k in sorted(kept)]
        log.model_inputs = [record(a, raw) for a, raw in self.inputs.items()]
        log.unmatched, log.last_kernels = list(self.open), list(self.tail)
        log.failing_kernel = self.open[-1] if self.open else None
        log.index_asserts = list(self.asserts.values())
        log.bytes, log.lines = tok.bytes, tok.lines
        log.unparsed_lines, log.unparsed_samples, log.other_lines = tok.unparsed_lines, tok.samples, tok.other_lines
        log.levels = [lv for lv, seen in ((1, log.saved_tensors), (2, log.records), (3, log.level3_launches)) if seen]
        return log


def parse_chunks(chunks: Iterable[bytes], focus: Iterable[str] = ()) -> tuple[PrinterLog, Collector]:
    """Parse printer output given as byte chunks; the collector keeps the integer arguments for suspects."""
    col = Collector(focus)
    tok = feed_all(Tokenizer(col, TAIL_KERNELS), chunks)
    return col.result(tok), col


def parse_file(path: str | Path, focus: Iterable[str] = ()) -> tuple[PrinterLog, Collector]:
    return parse_chunks(file_chunks(path, CHUNK), focus)


def parse_text(text: str, focus: Iterable[str] = ()) -> PrinterLog:
    return parse_chunks([text.encode("utf-8", "replace")], focus)[0]
