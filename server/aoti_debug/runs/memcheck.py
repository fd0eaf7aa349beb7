"""compute-sanitizer memcheck: the wrapper argv and a tolerant parser of its report."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from pydantic import BaseModel, Field

from aoti_debug.common.intparse import to_int

# Errors kept in full; the report's summary line still gives the total.
MAX_ERRORS = 10
MAX_HOST_FRAMES = 12
# compute-sanitizer stops printing after this many errors (its own --print-limit).
PRINT_LIMIT = 20


class MemcheckError(BaseModel):
    """One memcheck error record."""

    what: str = Field(description="The record's headline, e.g. 'Invalid __global__ read of size 4 bytes'")
    access: str | None = Field(None, description="read, write or atomic")
    space: str | None = Field(None, description="global, shared or local")
    size: int | None = Field(None, description="Bytes per access")
    kernel: str | None = None
    pc_offset: str | None = None
    file: str | None = Field(None, description="Kernel source (a Triton kernel's .py in the inductor cache)")
    line: int | None = None
    thread: str | None = Field(None, description="(x,y,z)")
    block: str | None = Field(None, description="(x,y,z)")
    address: str | None = None
    distance_bytes: int | None = Field(None, description="How far the address is from the nearest allocation")
    direction: str | None = Field(None, description="'after' or 'before' the nearest allocation")
    allocation: str | None = Field(None, description="Start of the nearest allocation")
    allocation_size: int | None = None
    host_frames: list[str] = Field(default_factory=list)


class Memcheck(BaseModel):
    """A parsed compute-sanitizer memcheck report."""

    errors: list[MemcheckError] = Field(default_factory=list, description="The first errors, in report order")
    error_count: int | None = Field(None, description="From 'ERROR SUMMARY: N errors'")
    api_errors: list[str] = Field(default_factory=list, description="'Program hit cudaError...' lines")
    tool_errors: list[str] = Field(default_factory=list, description="The sanitizer's own errors, e.g. "
                                   "\"Error: process didn't terminate successfully\" when the program died on the host")
    kernels: list[str] = Field(default_factory=list, description="Distinct kernels with errors, first seen first")
    verdict: str = ""
    report_path: str | None = Field(None, description="The raw report on the server's disk")


def find_sanitizer() -> str | None:
    return shutil.which("compute-sanitizer")


def memcheck_argv(sanitizer: str, log_file: Path) -> list[str]:
    """Prefix for the command; the report goes to its own file so program output does not interleave."""
    return [sanitizer, "--tool", "memcheck", "--print-limit", str(PRINT_LIMIT), "--log-file", str(log_file)]


_PREFIX = re.compile(r"^=========\s?")
_HEAD = re.compile(r"^Invalid (__\w+__|\w+) (read|write|atomic)\w* of size (\d+) bytes?")
_AT = re.compile(r"^at (?P<kernel>.+?)\+(?P<off>0x[0-9a-fA-F]+)(?: in (?P<loc>.+))?$")
_AT_OLD = re.compile(r"^at (?P<off>0x[0-9a-fA-F]+) in (?P<file>.+?):(?P<line>\d+):(?P<kernel>.+)$")
_BY = re.compile(r"^by thread (\([\d,\s]+\)) in block (\([\d,\s]+\))")
_ADDR = re.compile(r"^(?:Address|Access (?:to|at)) (0x[0-9a-fA-F]+) is (.+)$")
_NEAR = re.compile(r"^and is ([\d,]+) bytes? (after|before) the nearest allocation at (0x[0-9a-fA-F]+) "
                   r"of size ([\d,]+) bytes?")
_SUMMARY = re.compile(r"^ERROR SUMMARY: (\d+) errors?")
_HOST = re.compile(r"^Host Frame:\s*(.*)$")


def _num(text: str) -> int | None:
    return to_int(text)


def parse_memcheck(text: str) -> Memcheck:
    """Parse a report (lines with or without the '=========' prefix)."""
    report, err = Memcheck(), None
    prefixed = "=========" in text
    for raw in text.splitlines():
        if prefixed and not raw.startswith("========="):
            continue  # program output mixed in
        line = _PREFIX.sub("", raw).strip()
        if m := _HEAD.match(line):
            err = MemcheckError(what=line, space=m.group(1).strip("_"), access=m.group(2), size=to_int(m.group(3)))
            report.errors.append(err)
        elif line.startswith(("Misaligned", "Invalid", "Out-of-range", "Malloc/Free")) and not line.startswith(
                "Invalid __"):
            err = MemcheckError(what=line)
            report.errors.append(err)
        elif line.startswith("Program hit "):
            report.api_errors.append(line)
            err = None
        elif line.startswith(("Error: ", "Target application")) and err is None:
            report.tool_errors.append(line)
        elif m := _SUMMARY.match(line):
            report.error_count = to_int(m.group(1))
        elif err is None:
            continue
        elif m := _AT_OLD.match(line):
            err.kernel, err.pc_offset, err.file, err.line = (m.group("kernel"), m.group("off"), m.group("file"),
                                                             to_int(m.group("line")))
        elif m := _AT.match(line):
            err.kernel, err.pc_offset = m.group("kernel"), m.group("off")
            if loc := m.group("loc"):
                fm = re.match(r"^(.+?):(\d+)$", loc)
                err.file, err.line = (fm.group(1), to_int(fm.group(2))) if fm else (loc, None)
        elif m := _BY.match(line):
            err.thread, err.block = m.group(1).replace(" ", ""), m.group(2).replace(" ", "")
        elif m := _ADDR.match(line):
            err.address = m.group(1)
        elif m := _NEAR.match(line):
            err.distance_bytes, err.direction = _num(m.group(1)), m.group(2)
            err.allocation, err.allocation_size = m.group(3), _num(m.group(4))
        elif (m := _HOST.match(line)) and len(err.host_frames) < MAX_HOST_FRAMES:
            err.host_frames.append(m.group(1).strip())
    for e in report.errors:
        if e.kernel and e.kernel not in report.kernels:
            report.kernels.append(e.kernel)
    del report.errors[MAX_ERRORS:]
    report.verdict = _verdict(report)
    return report


def _verdict(r: Memcheck) -> str:
    if not r.errors:
        if r.tool_errors:
            return ("no device memory error: the program failed on the host under compute-sanitizer ("
                    + "; ".join(r.tool_errors) + "). A host crash is no illegal memory access: use the backtrace "
                    "preset (faulthandler and a native backtrace).")
        if r.api_errors:
            return f"no memory error recorded, but CUDA API errors: {r.api_errors[0]}"
        return "memcheck found no memory error" + (" (ERROR SUMMARY: 0 errors)" if r.error_count == 0 else "")
    e = r.errors[0]
    where = f"{e.kernel or 'a kernel'}" + (f" at {e.file}:{e.line}" if e.file else "")
    who = f" by thread {e.thread} in block {e.block}" if e.thread else ""
    text = f"{e.what} in {where}{who}"
    if e.address:
        text += f", address {e.address}"
    if e.distance_bytes is not None:
        text += (f", {e.distance_bytes} bytes {e.direction} the nearest allocation "
                 f"({e.allocation_size} bytes at {e.allocation})")
        text += (": an index past the end of a buffer (an out-of-range index, or an input larger or smaller "
                 "than the package was built for)" if e.direction == "after" else ": a negative index")
    if e.file and e.line:
        text += f". Open {e.file} line {e.line} for the load or store."
    return text
