"""Read and clean a log: chunks from a file, ANSI codes and CRs per chunk, prefixes and boilerplate per line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aoti_debug.common.errors import DataError
from aoti_debug.common.fragments import Regex
from aoti_debug.common.yamlio import load_yaml

DATA = Path(__file__).parent.parent / "data" / "clean.yaml"
ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
ANSI_TEXT = re.compile(ANSI.pattern.decode())
# An ANSI color code written out in an escaped string: \x1b[31m, \u001b[0m, \033[1m.
ESCAPED_ANSI = re.compile(rb"\\(?:x1b|u001[bB]|033|e)\[[0-?]{0,32}[ -/]{0,8}[@-~]")
# The escapes of such a string, read left to right (an escaped backslash before an n is no line break).
ESCAPE = re.compile(rb"\\([\"'\\nrt])")
ESCAPES = {b"n": b"\n", b"t": b"\t", b"r": b"", b'"': b'"', b"'": b"'", b"\\": b"\\"}
PAIR = re.compile(rb"\\(.)", re.DOTALL)
VALID_ESCAPES = frozenset(bytes([c]) for c in b"nrtabfve0xuU\"'\\")  # what may follow a backslash in such a string


class CleanRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    regex: Regex  # shared fragments, (?&name), written out as in the rules' regexes
    strip: list[str] = Field(default_factory=list, description="Lines whose prefix this removes")
    drop: list[str] = Field(default_factory=list, description="Lines this drops")
    keep: list[str] = Field(default_factory=list, description="Look-alike lines this leaves alone")
    needle: str | None = Field(default=None, description=(
        "Literal text every line it drops contains (ignore rules only): the regex runs only on lines that hold it"))


class CleanData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prefixes: list[CleanRule]
    json_fields: list[str] = Field(default_factory=list, description="A JSON log line's message, first found")
    ignore: list[CleanRule]

    @model_validator(mode="after")
    def _needles_only_where_read(self) -> CleanData:
        """A prefix runs on every line (all prefixes as one regex), so a needle there would be read by nobody."""
        if named := [r.name for r in self.prefixes if r.needle is not None]:
            raise ValueError(f"prefix rules take no needle (only ignore rules are prefiltered): {named}")
        return self


@cache
def load() -> tuple[CleanData, re.Pattern[str], list[tuple[str, str | None, re.Pattern[str]]]]:
    try:
        data = CleanData.model_validate(load_yaml(DATA.read_text(encoding="utf-8")))
    except Exception as exc:  # yaml or validation: a packaging bug either way
        raise DataError(f"{DATA}: {exc}") from exc
    prefix = re.compile("(?:" + "|".join(f"(?:{r.regex})" for r in data.prefixes) + ")")
    return data, prefix, [(r.name, r.needle, re.compile(r.regex)) for r in data.ignore]


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
    """Strip ANSI escapes and turn CRLF and lone CR into LF (cheap no-op when absent). A log pasted as an escaped
    string (a repr, a JSON value: its lines joined by a literal backslash-n, far more of them than real line breaks)
    gets its line breaks, tabs and escaped ANSI codes back."""
    if chunk.count(b"\n", 0, 1 << 16) < 16 and b"\\n" in chunk and _escaped(chunk):
        chunk = ESCAPE.sub(lambda m: ESCAPES[m.group(1)], ESCAPED_ANSI.sub(b"", chunk))
    if b"\x1b" in chunk:
        chunk = ANSI.sub(b"", chunk)
    if b"\r" in chunk:
        chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return chunk


def _escaped(chunk: bytes) -> bool:
    """Whether a chunk with few line breaks is an escaped string: more escaped line breaks than four per real one,
    and (read pair by pair) almost every backslash starts an escape. A Windows path's single backslashes
    (C:\\Users\\nick) start none, so a log of paths is left as it is."""
    escaped = chunk.count(b"\\n")
    if escaped < 2 or escaped <= 4 * chunk.count(b"\n"):
        return False
    pairs = [m.group(1) for m in PAIR.finditer(chunk)]
    bare = sum(c not in VALID_ESCAPES for c in pairs)
    return bare * 10 <= len(pairs)


def json_message(line: str) -> str:
    """The message of a line that is one JSON log record (a field of clean.yaml's json_fields) or one JSON string
    of an array (a notebook's saved traceback: `"\\u001b[0;31mRuntimeError\\u001b[0m: ...",`), else the line."""
    text = line.lstrip(" \t")
    if text.startswith("{") and text.endswith("}"):
        kind = dict
    elif text.startswith('"') and text.endswith(('"', '",')):
        kind, text = str, text.removesuffix(",")
    else:
        return line
    try:
        record = json.loads(text)
    except ValueError:
        return line
    if kind is dict and isinstance(record, dict):
        record = next((v for name in load()[0].json_fields if isinstance(v := record.get(name), str)), None)
    if not isinstance(record, str):
        return line
    return ANSI_TEXT.sub("", record).rstrip("\r\n").rstrip(" \t")  # a tty's CRLF and colors are in it too


def strip_prefixes(line: str) -> str:
    _, prefix, _ = load()
    while True:
        m = prefix.match(line)
        if not m or not m.end():
            return line
        line = line[m.end():]


def ignored_by(line: str) -> str | None:
    """Name of the boilerplate rule that drops this (already prefix-stripped) line, if any."""
    for name, needle, rx in load()[2]:
        if (needle is None or needle in line) and rx.search(line):
            return name
    return None


# CJK writing (Han, kana, Hangul, its own and fullwidth punctuation) puts no space between a pasted error and the
# prose around it, and Python counts CJK characters as word characters: "out of memory错误" has no word boundary after
# "memory". A space goes in where Latin text (a letter, digit or closing bracket) meets CJK text, either way round. A
# path or a file name is left whole: rules match it as one token, and it is shown as the user wrote it.
_CJK = r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff01-\uff5e\u3001\u3002]"
CJK_GLUE = re.compile(rf"(?<=[A-Za-z0-9.)\]])(?={_CJK})|(?<={_CJK})(?=[A-Za-z0-9_(])")
TOKEN = re.compile(r"\S+")
FILE_NAME = re.compile(r"\.[A-Za-z]\w{0,7}[\"')\],:;]*$")


def _unglued(token: re.Match[str]) -> str:
    word = token[0]
    whole = word.isascii() or "/" in word or "\\" in word or FILE_NAME.search(word)
    return word if whole else CJK_GLUE.sub(" ", word)


def clean_line(raw: str) -> str | None:
    """A candidate line ready for rule regexes, or None when it is boilerplate."""
    # Trailing blanks (a terminal's padded lines, a quoted log) would defeat every rule anchored at the line's end.
    text = json_message(raw.rstrip("\n").strip("\x00").rstrip(" \t"))
    line = strip_prefixes(text)
    for mark in "`'\"":  # inline code or a quoted string: its opening mark went as a prefix, the closing one goes too
        if line.endswith(mark) and text.count(mark) > line.count(mark):
            line = line.rstrip(mark).rstrip(" \t")
    if not line.isascii():  # Chinese or Japanese prose glues a quoted error to its own words ("out of memory错误")
        line = TOKEN.sub(_unglued, line)
    return None if ignored_by(line) else line
