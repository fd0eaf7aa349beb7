"""Read a .pt2 zip in memory, never extracting: size caps, member-name safety, models found by path."""

from __future__ import annotations

import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from aoti_debug.errors import BadInput

# A real package has tens of entries per model; far more means a crafted archive.
MAX_ENTRIES = 20_000
# wrapper.cpp of a large model is a few MiB; nothing we parse as text is bigger than this.
MAX_TEXT_BYTES = 64 * 2**20
# Everything read into memory (text members and ELF pieces) over one inspection.
MAX_TOTAL_READ = 512 * 2**20
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

    def __init__(self, path: Path, zf: zipfile.ZipFile, file: IO[bytes]):
        self.path = path
        self._zf = zf
        self._file = file
        self._read_total = 0
        self.infos = {i.filename: i for i in zf.infolist()}
        self.unsafe = {n: r for n in self.infos if (r := unsafe_reason(n))}
        self.notes: list[str] = []

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

    def _account(self, n: int) -> None:
        self._read_total += n
        if self._read_total > MAX_TOTAL_READ:
            raise MemberError(f"more than {MAX_TOTAL_READ} bytes read from the archive; stopped")

    def read(self, name: str, limit: int | None = None) -> bytes:
        """A member's bytes, refusing anything larger than limit whatever its header claims."""
        limit = MAX_TEXT_BYTES if limit is None else limit
        info = self._guard(name, limit)
        try:
            with self._zf.open(info) as f:
                data = f.read(limit + 1)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
            raise MemberError(f"{name}: unreadable ({type(exc).__name__}: {exc})") from exc
        if len(data) > limit:
            raise MemberError(f"{name}: more than {limit} bytes when decompressed; header lied")
        self._account(len(data))
        return data

    def read_text(self, name: str, limit: int | None = None) -> str:
        return self.read(name, limit).decode("utf-8", errors="replace")

    def read_range(self, name: str, offset: int, length: int) -> bytes:
        """length bytes at offset inside a member (seeks; cheap for the stored entries .pt2 uses)."""
        info = self.infos[name]
        if offset < 0 or length < 0 or offset + length > info.file_size:
            raise MemberError(f"{name}: range {offset}+{length} outside its {info.file_size} bytes")
        self._account(length)
        try:
            with self._zf.open(info) as f:
                f.seek(offset)
                data = f.read(length)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
            raise MemberError(f"{name}: unreadable ({type(exc).__name__}: {exc})") from exc
        if len(data) != length:
            raise MemberError(f"{name}: truncated (wanted {length} bytes at {offset}, got {len(data)})")
        return data


class MemberError(Exception):
    """One member could not be read; the inspection goes on and notes it."""


def open_pt2(path: str | Path) -> Pt2Archive:
    """Open path as a zip; BadInput if it is missing, not a zip, truncated or absurdly large."""
    p = Path(path).expanduser()
    if not p.exists():
        raise BadInput(f"no such package: {p}")
    if not p.is_file():
        raise BadInput(f"not a regular file: {p}")
    try:
        f = p.open("rb")
    except OSError as exc:
        raise BadInput(f"cannot read {p}: {exc.strerror}") from exc
    try:
        zf = zipfile.ZipFile(f)
    except zipfile.BadZipFile as exc:
        f.close()
        size = p.stat().st_size
        raise BadInput(f"{p} is not a readable zip archive ({exc}; {size} bytes): a .pt2 package is a zip; "
                       "if it was copied or downloaded, it may be truncated") from exc
    except (OSError, ValueError, EOFError) as exc:
        f.close()
        raise BadInput(f"{p} is a damaged zip archive: {exc}") from exc
    if len(zf.infolist()) > MAX_ENTRIES:
        zf.close()
        f.close()
        raise BadInput(f"{p} has more than {MAX_ENTRIES} entries: not an AOTI package")
    return Pt2Archive(p, zf, f)
