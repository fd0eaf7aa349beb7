"""Read and clean a log: chunks from a file, ANSI codes and CRs per chunk, prefixes and boilerplate per line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.common.errors import DataError
from aoti_debug.common.yamlio import load_yaml

DATA = Path(__file__).parent.parent / "data" / "clean.yaml"
ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


class CleanRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    regex: str
    strip: list[str] = Field(default_factory=list, description="Lines whose prefix this removes")
    drop: list[str] = Field(default_factory=list, description="Lines this drops")
    keep: list[str] = Field(default_factory=list, description="Look-alike lines this leaves alone")


class CleanData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prefixes: list[CleanRule]
    ignore: list[CleanRule]


@cache
def load() -> tuple[CleanData, re.Pattern[str], list[tuple[str, re.Pattern[str]]]]:
    try:
        data = CleanData.model_validate(load_yaml(DATA.read_text(encoding="utf-8")))
    except Exception as exc:  # yaml or validation: a packaging bug either way
        raise DataError(f"{DATA}: {exc}") from exc
    prefix = re.compile("(?:" + "|".join(f"(?:{r.regex})" for r in data.prefixes) + ")")
    return data, prefix, [(r.name, re.compile(r.regex)) for r in data.ignore]


def file_chunks(path: str | Path, chunk: int = 1 << 20, within: list[Path] | None = None) -> Iterator[bytes]:
    """A file's bytes in chunks of at most `chunk` bytes (memory stays bounded for any log size).

    Opened at once (not on the first next()): a FIFO or other non-regular file is refused without blocking, and
    within (the server's roots) is checked on the opened descriptor."""
    from aoti_debug.common.roots import open_regular

    return _Chunks(open_regular(Path(path), within, what="log"), chunk)


class _Chunks:
    """Reads a file chunk by chunk; closes it at the end, or when dropped unread (a caller refused the call)."""

    def __init__(self, f: BinaryIO, chunk: int):
        self._f, self._chunk = f, chunk

    def __iter__(self) -> _Chunks:
        return self

    def __next__(self) -> bytes:
        data = self._f.read(self._chunk)
        if not data:
            self._f.close()
            raise StopIteration
        return data

    def __del__(self) -> None:
        self._f.close()


def normalize_chunk(chunk: bytes) -> bytes:
    """Strip ANSI escapes and turn CRLF and lone CR into LF (cheap no-op when absent)."""
    if b"\x1b" in chunk:
        chunk = ANSI.sub(b"", chunk)
    if b"\r" in chunk:
        chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return chunk


def strip_prefixes(line: str) -> str:
    _, prefix, _ = load()
    while True:
        m = prefix.match(line)
        if not m or not m.end():
            return line
        line = line[m.end():]


def ignored_by(line: str) -> str | None:
    """Name of the boilerplate rule that drops this (already prefix-stripped) line, if any."""
    for name, rx in load()[2]:
        if rx.search(line):
            return name
    return None


def clean_line(raw: str) -> str | None:
    """A candidate line ready for rule regexes, or None when it is boilerplate."""
    # Trailing blanks (a terminal's padded lines, a quoted log) would defeat every rule anchored at the line's end.
    text = raw.rstrip("\n").strip("\x00").rstrip(" \t")
    line = strip_prefixes(text)
    if line.endswith("`") and text.count("`") > line.count("`"):  # inline code: its opening tick went as a prefix
        line = line.rstrip("`").rstrip(" \t")
    return None if ignored_by(line) else line
