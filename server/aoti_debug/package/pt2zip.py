"""Read a .pt2 zip in memory, never extracting: size caps, member-name safety, models found by path.

Every access to a member goes through Pt2Archive's one bounded reader: the declared size and the compression
ratio are judged first, every decompressed byte counts toward the archive's budget (also the bytes a seek into a
compressed member decompresses and throws away), and a compressed member read by ranges is decompressed once.
"""

from __future__ import annotations

import os
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from aoti_debug.common.errors import BadInput

# A real package has tens of entries per model; far more means a crafted archive.
MAX_ENTRIES = 20_000
# wrapper.cpp of a large model is a few MiB; nothing we parse as text is bigger than this.
MAX_TEXT_BYTES = 64 * 2**20
# Everything decompressed over one inspection (text members and ELF pieces): bounds time and memory per call.
MAX_TOTAL_READ = 256 * 2**20
# A compressed member read by ranges (an ELF scan) is decompressed once into memory, up to this size.
MAX_RANGE_MEMBER = 64 * 2**20
# Deflate reaches ~1000:1 at best on real data; beyond this ratio an entry is a bomb.
MAX_RATIO = 1000
# Entries smaller than this are never judged by ratio (tiny files compress oddly).
RATIO_FLOOR = 1 << 20

MODEL_RX = re.compile(r"^(?:(?P<root>[^/]+)/)?data/aotinductor/(?P<model>[^/]+)/(?P<rel>[^/].*)$")


@dataclass
class ModelFiles:
    """The members of one data/aotinductor/<model>/ folder, by role."""

    name: str
    folder: str
    members: list[str] = field(default_factory=list)

    def ending(self, *suffixes: str) -> list[str]:
        return sorted(m for m in self.members if m.endswith(suffixes))


def unsafe_reason(name: str) -> str | None:
    """Why a member name could escape an extraction folder, or None if it is safe."""
    if "\x00" in name:
        return "contains a NUL byte"
    norm = name.replace("\\", "/")
    if norm.startswith("/") or re.match(r"^[A-Za-z]:", norm):
        return "is an absolute path"
    if ".." in norm.split("/"):
        return "contains '..'"
    return None


class Pt2Archive:
    """A zip opened for reading with every read bounded; members are never written to disk."""

    def __init__(self, path: Path, zf: zipfile.ZipFile, file: IO[bytes], max_total: int = MAX_TOTAL_READ):
        self.path = path
        self._zf = zf
        self._file = file
        self._read_total = 0
        self.max_total = max_total
        self._cached: tuple[str, bytes] | None = None
        self.infos = {i.filename: i for i in zf.infolist()}
        self.unsafe = {n: r for n in self.infos if (r := unsafe_reason(n))}
        self.notes: list[str] = []

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._zf.close()
        self._file.close()

    def __enter__(self) -> Pt2Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def root(self) -> str | None:
        """The one folder that holds data/aotinductor/ (named after the saved file), if there is one."""
        roots = {m["root"] for n in self.infos if n not in self.unsafe and (m := MODEL_RX.match(n))}
        return roots.pop() if len(roots) == 1 else None

    def models(self) -> dict[str, ModelFiles]:
        """Every data/aotinductor/<model>/ folder with its safe members."""
        found: dict[str, ModelFiles] = {}
        for name in self.infos:
            if name in self.unsafe or name.endswith("/"):
                continue
            m = MODEL_RX.match(name)
            if not m:
                continue
            prefix = f"{m['root']}/" if m["root"] else ""
            mf = found.setdefault(m["model"], ModelFiles(m["model"], f"{prefix}data/aotinductor/{m['model']}/"))
            mf.members.append(name)
        return dict(sorted(found.items()))

    def size(self, name: str) -> int:
        return self.infos[name].file_size

    def _guard(self, name: str, limit: int) -> zipfile.ZipInfo:
        info = self.infos[name]
        if info.file_size > limit:
            raise MemberError(f"{name}: declared size {info.file_size} bytes exceeds the {limit}-byte cap")
        if info.file_size >= RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise MemberError(f"{name}: compression ratio over {MAX_RATIO}:1 (a zip bomb?)")
        return info

    @property
    def read_total(self) -> int:
        """Bytes decompressed (or read) so far from this archive."""
        return self._read_total

    def _account(self, n: int) -> None:
        self._read_total += n
        if self._read_total > self.max_total:
            raise MemberError(f"more than {self.max_total} bytes read from the archive; stopped")

    def _budget(self, name: str) -> int:
        left = self.max_total - self._read_total
        if left <= 0:
            raise MemberError(f"{name}: not read, the archive's read budget ({self.max_total} bytes) is spent")
        return left

    def read(self, name: str, limit: int | None = None) -> bytes:
        """A member's bytes, refusing anything larger than limit whatever its header claims."""
        limit = MAX_TEXT_BYTES if limit is None else limit
        info = self._guard(name, limit)
        left = self._budget(name)
        if info.file_size > left:
            raise MemberError(f"{name}: {info.file_size} bytes would pass the archive's read budget "
                              f"({self.max_total} bytes); not read")
        want = min(limit, left)
        try:
            with self._zf.open(info) as f:
                data = f.read(want + 1)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
            raise MemberError(f"{name}: unreadable ({type(exc).__name__}: {exc})") from exc
        self._account(len(data))
        if len(data) > limit:
            raise MemberError(f"{name}: more than {limit} bytes when decompressed; header lied")
        return data

    def read_text(self, name: str, limit: int | None = None) -> str:
        return self.read(name, limit).decode("utf-8", errors="replace")

    def read_range(self, name: str, offset: int, length: int) -> bytes:
        """length bytes at offset inside a member: a direct read for a stored member (what .pt2 uses), else
        from the member decompressed once (bounded by MAX_RANGE_MEMBER and the budget)."""
        info = self._guard(name, MAX_RANGE_MEMBER if info_compressed(self.infos[name]) else 2**63)
        if offset < 0 or length < 0 or offset + length > info.file_size:
            raise MemberError(f"{name}: range {offset}+{length} outside its {info.file_size} bytes")
        if info_compressed(info):
            if self._cached is None or self._cached[0] != name:
                self._cached = None  # the previous member's bytes go before the next is decompressed
                self._cached = (name, self.read(name, MAX_RANGE_MEMBER))
            self._budget(name)
            self._account(length)  # slices count too: a crafted ELF may ask for the same bytes many times
            data = self._cached[1][offset:offset + length]
        else:
            self._budget(name)
            self._account(length)
            data = self._stored(info, offset, length)
        if len(data) != length:
            raise MemberError(f"{name}: truncated (wanted {length} bytes at {offset}, got {len(data)})")
        return data

    def _stored(self, info: zipfile.ZipInfo, offset: int, length: int) -> bytes:
        """Bytes of a stored member read straight from the file (zipfile's seek may read from the start)."""
        try:
            self._file.seek(info.header_offset)
            header = self._file.read(30)
            if len(header) != 30 or header[:4] != b"PK\x03\x04":
                raise MemberError(f"{info.filename}: bad local file header")
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            self._file.seek(info.header_offset + 30 + name_len + extra_len + offset)
            return self._file.read(length)
        except OSError as exc:
            raise MemberError(f"{info.filename}: unreadable ({exc})") from exc


def info_compressed(info: zipfile.ZipInfo) -> bool:
    return info.compress_type != zipfile.ZIP_STORED


class MemberError(Exception):
    """One member could not be read; the inspection goes on and notes it."""


def open_pt2(path: str | Path, within: list[Path] | None = None, max_total: int = MAX_TOTAL_READ) -> Pt2Archive:
    """Open path as a zip; BadInput if it is missing, not a regular file (a FIFO never blocks), not a zip,
    truncated or absurdly large. within: the folders the opened file must lie in (checked on the descriptor)."""
    from aoti_debug.common.roots import open_regular

    p = Path(path).expanduser()
    if not p.exists():
        raise BadInput(f"no such package: {p}")
    f = open_regular(p, within, what="package")
    try:
        zf = zipfile.ZipFile(f)
    except zipfile.BadZipFile as exc:
        size = os.fstat(f.fileno()).st_size
        f.close()
        raise BadInput(f"{p} is not a readable zip archive ({exc}; {size} bytes): a .pt2 package is a zip; "
                       "if it was copied or downloaded, it may be truncated") from exc
    except (OSError, ValueError, EOFError) as exc:
        f.close()
        raise BadInput(f"{p} is a damaged zip archive: {exc}") from exc
    if len(zf.infolist()) > MAX_ENTRIES:
        zf.close()
        f.close()
        raise BadInput(f"{p} has more than {MAX_ENTRIES} entries: not an AOTI package")
    return Pt2Archive(p, zf, f, max_total)
