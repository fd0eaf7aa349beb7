"""Static ELF facts of a shared library read as bytes (never loaded): machine, needed libraries, symbol versions."""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

from pydantic import BaseModel, Field

# A real .so has under a hundred sections; a larger count means a damaged or crafted file.
MAX_SECTIONS = 512
# Section bodies read over one scan (the reader's archive budget bounds it too).
MAX_SCAN_BYTES = 64 * 2**20
# .dynstr, .gnu.version_r, .dynamic and .comment of a model .so are a few hundred KiB at most.
MAX_SECTION_BYTES = 16 * 2**20

SHT_DYNAMIC, SHT_GNU_VERNEED = 6, 0x6FFFFFFE
DT_NEEDED = 1
# e_machine -> platform.machine() spelling on Linux.
MACHINES = {3: "i686", 8: "mips", 20: "ppc", 21: "ppc64le", 22: "s390x", 40: "armv7l", 62: "x86_64",
            183: "aarch64", 243: "riscv64"}
VERSION_RX = re.compile(r"^(GLIBCXX|CXXABI|GLIBC|GCC)_(\d+(?:\.\d+)*)$")

Reader = Callable[[int, int], bytes]


class ElfFacts(BaseModel):
    """What the dynamic linker will ask of the loading process, read from the file's bytes."""

    elf_class: int | None = Field(None, description="32 or 64")
    machine: str | None = Field(None, description="Target architecture, spelled as platform.machine()")
    needed: list[str] = Field(default_factory=list, description="DT_NEEDED libraries")
    required_versions: dict[str, list[str]] = Field(
        default_factory=dict, description="Symbol versions required per library (GLIBCXX_3.4.30, GLIBC_2.34...)")
    glibcxx_max: str | None = Field(None, description="Newest GLIBCXX version required: the libstdc++ floor")
    cxxabi_max: str | None = None
    glibc_max: str | None = None
    comment: list[str] = Field(default_factory=list, description=".comment strings: the compilers that built it")
    error: str | None = Field(None, description="Why the scan stopped early, if it did")


def version_key(v: str) -> tuple[int, ...]:
    m = VERSION_RX.match(v)
    return tuple(int(x) for x in m.group(2).split(".")) if m else ()


def newest(versions: list[str] | set[str], family: str) -> str | None:
    """The highest version of one family (GLIBCXX, CXXABI, GLIBC) in versions."""
    same = [v for v in versions if v.startswith(family + "_") and version_key(v)]
    return max(same, key=version_key) if same else None


def _cstr(blob: bytes, off: int) -> str:
    if off < 0 or off >= len(blob):
        return ""
    end = blob.find(b"\0", off)
    return blob[off:end if end >= 0 else len(blob)].decode("utf-8", errors="replace")


def scan(read: Reader, size: int) -> ElfFacts:
    """Parse headers, .dynamic, .gnu.version_r and .comment through read(offset, length)."""
    facts = ElfFacts()
    try:
        _scan(read, size, facts)
    except (struct.error, ValueError, IndexError) as exc:
        facts.error = f"malformed ELF: {exc}"
    return facts


def _scan(read: Reader, size: int, facts: ElfFacts) -> None:
    if size < 64:
        raise ValueError(f"{size} bytes is too small for an ELF header")
    ident = read(0, 64)
    if ident[:4] != b"\x7fELF":
        raise ValueError("no ELF magic")
    is64, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
    facts.elf_class = 64 if is64 else 32
    (machine,) = struct.unpack_from(end + "H", ident, 18)
    facts.machine = MACHINES.get(machine, f"e_machine {machine}")
    if is64:
        shoff, shentsize, shnum, shstrndx = *struct.unpack_from(end + "Q", ident, 40), *struct.unpack_from(
            end + "HHH", ident, 58)
    else:
        shoff, shentsize, shnum, shstrndx = *struct.unpack_from(end + "I", ident, 32), *struct.unpack_from(
            end + "HHH", ident, 46)
    if not shnum or shnum > MAX_SECTIONS or shoff + shnum * shentsize > size:
        raise ValueError(f"section table out of range ({shnum} sections at {shoff})")
    table = read(shoff, shnum * shentsize)
    fmt = end + ("IIQQQQIIQQ" if is64 else "IIIIIIIIII")
    sections = [struct.unpack_from(fmt, table, i * shentsize) for i in range(shnum)]

    spent = [0]

    def body(i: int) -> bytes:
        _, _, _, _, off, sz, *_ = sections[i]
        if sz > MAX_SECTION_BYTES or off + sz > size:
            raise ValueError(f"section {i} out of range")
        spent[0] += sz
        if spent[0] > MAX_SCAN_BYTES:
            raise ValueError(f"section bodies pass {MAX_SCAN_BYTES} bytes: not a real shared library")
        return read(off, sz) if sz else b""

    names = body(shstrndx) if shstrndx < shnum else b""
    for i, (name, stype, *_rest) in enumerate(sections):
        link = sections[i][6]
        if stype == SHT_DYNAMIC and link < shnum:
            strtab, data = body(link), body(i)
            step, dfmt = (16, end + "qQ") if is64 else (8, end + "iI")
            for off in range(0, len(data) - step + 1, step):
                tag, val = struct.unpack_from(dfmt, data, off)
                if tag == 0:
                    break
                if tag == DT_NEEDED:
                    facts.needed.append(_cstr(strtab, val))
        elif stype == SHT_GNU_VERNEED and link < shnum:
            _verneed(body(i), body(link), end, facts)
        elif _cstr(names, name) == ".comment":
            facts.comment = sorted({s.decode("utf-8", "replace") for s in body(i).split(b"\0") if s.strip()})
    every = {v for vs in facts.required_versions.values() for v in vs}
    facts.glibcxx_max, facts.cxxabi_max, facts.glibc_max = (newest(every, f) for f in ("GLIBCXX", "CXXABI", "GLIBC"))


def _verneed(data: bytes, strtab: bytes, end: str, facts: ElfFacts) -> None:
    off, seen = 0, 0
    while off + 16 <= len(data) and seen < MAX_SECTIONS:
        _, cnt, file_off, aux, nxt = struct.unpack_from(end + "HHIII", data, off)
        lib = _cstr(strtab, file_off)
        versions = facts.required_versions.setdefault(lib, [])
        a = off + aux
        for _ in range(min(cnt, MAX_SECTIONS)):
            if a + 16 > len(data):
                break
            _, _, _, vname, anext = struct.unpack_from(end + "IHHII", data, a)
            v = _cstr(strtab, vname)
            if v and v not in versions:
                versions.append(v)
            if not anext:
                break
            a += anext
        versions.sort(key=lambda v: (v.split("_")[0], version_key(v)))
        seen += 1
        if not nxt:
            break
        off += nxt
