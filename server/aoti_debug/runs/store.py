"""Run directories, run ids, persisted results and the bounded registry of background runs."""

from __future__ import annotations

import atexit
import logging
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from aoti_debug.common.errors import BadInput
from aoti_debug.common.roots import open_regular, runs_dir
from aoti_debug.runs.proc import Note

if TYPE_CHECKING:
    from pydantic import BaseModel

log = logging.getLogger("aoti_debug.runs")

RUN_ID = re.compile(r"\A\d{8}-\d{6}-[0-9a-f]{6}\Z")  # \Z: "$" would accept a trailing newline
# Old run directories are deleted beyond this many (each may hold an inductor cache).
MAX_KEPT_RUNS = 50
# Background runs at once: each may compile with every core.
MAX_ACTIVE = 4
# On server exit, how long to wait for background runs to kill their process trees.
SHUTDOWN_WAIT_S = 10.0
RESULT = "result.json"


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def run_path(run_id: str) -> Path:
    """The directory of a run; BadInput for anything that is not a run id (no path tricks)."""
    if not isinstance(run_id, str) or not RUN_ID.match(run_id):
        raise BadInput(f"{run_id!r} is not a run id (like 20250101-120000-a1b2c3)")
    return runs_dir() / run_id


def create(run_id: str) -> Path:
    path = run_path(run_id)
    path.mkdir(parents=True, exist_ok=False)
    prune()
    return path


def prune(keep: int = MAX_KEPT_RUNS) -> list[str]:
    """Delete the oldest run directories beyond keep, never an active one."""
    folder = runs_dir()
    if not folder.is_dir():
        return []
    ids = sorted(p.name for p in folder.iterdir() if RUN_ID.match(p.name) and p.is_dir())
    with _lock:
        active = set(_active)
    gone = [i for i in ids[: max(0, len(ids) - keep)] if i not in active]
    for i in gone:
        shutil.rmtree(folder / i, ignore_errors=True)
    return gone


def save(run_id: str, json_text: str, name: str = RESULT) -> Path:
    """Write atomically, so a poller never reads half a file."""
    path = run_path(run_id) / name
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json_text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def load(run_id: str, name: str = RESULT) -> str | None:
    path = run_path(run_id) / name
    return path.read_text(encoding="utf-8") if path.is_file() else None


def tail(path: Path, nbytes: int, within: list[Path] | None = None) -> str:
    """The last nbytes of a regular file, decoded leniently ('' if absent, not a regular file, or outside within)."""
    try:
        with open_regular(Path(path), within) as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - nbytes))
            return f.read(nbytes).decode("utf-8", errors="replace")
    except (OSError, BadInput):
        return ""


# A run's files a client may read (aoti-run://{run_id}/{name}); at most the last RUN_FILE_BYTES of each.
RUN_FILES = {"log": ["combined.log"], "stdout": ["stdout.log"], "stderr": ["stderr.log"], "result": ["result.json"],
             "baseline": ["baseline/combined.log"], "forensics": ["forensics/combined.log"],
             "memcheck": ["memcheck.log", "forensics/memcheck.log"], "calls": ["calls/calls.jsonl"]}
RUN_FILE_BYTES = 1 << 20


def read_file(run_id: str, name: str) -> str:
    """One of a run's files by its RUN_FILES name: the last MiB, saying how much was left out before it."""
    if name not in RUN_FILES:
        raise BadInput(f"no run file {name!r}; known: {', '.join(RUN_FILES)}")
    found = [p for p in (run_path(run_id) / f for f in RUN_FILES[name]) if p.is_file()]
    if not found:
        raise BadInput(f"run {run_id} has no {name}")
    size = found[0].stat().st_size
    text = tail(found[0], RUN_FILE_BYTES)
    return text if size <= RUN_FILE_BYTES else f"[first {size - RUN_FILE_BYTES} bytes left out]\n{text}"


class Payload(Protocol):
    """What started a run (a rerun's or a triage's plan): it answers get_run while the run goes on."""

    def snapshot(self, entry: Active) -> BaseModel: ...


@dataclass
class Active:
    """A run in its slot: its thread (background runs), how to cancel it, its latest progress, and its plan."""

    cancel: threading.Event
    started: float
    payload: Payload | None
    thread: threading.Thread | None = None
    progress: list[tuple[float, int, str]] = field(default_factory=lambda: [(0.0, 0, "starting")])


_lock = threading.Lock()
_active: dict[str, Active] = {}


def _forget_finished() -> None:
    """Drop background entries whose thread ended (caller holds _lock); held waited runs stay until released."""
    for rid in [r for r, a in _active.items() if a.thread and not a.thread.is_alive()]:
        del _active[rid]


def reserve(run_id: str, payload: Payload | None = None) -> Active:
    """Take one of the MAX_ACTIVE run slots, for every kind of run (waited or background, rerun, triage, dump):
    called before the run directory is created, so a refused run creates nothing and prunes nothing."""
    with _lock:
        _forget_finished()
        if run_id in _active:
            return _active[run_id]
        if len(_active) >= MAX_ACTIVE:
            raise BadInput(f"{MAX_ACTIVE} runs are already going ({', '.join(sorted(_active))}); "
                           "poll them with get_run and start this one when one ends")
        entry = Active(cancel=threading.Event(), started=time.monotonic(), payload=payload)
        _active[run_id] = entry
    return entry


def release(run_id: str) -> None:
    """Give a waited run's slot back (a background run's thread gives its own back when it ends)."""
    with _lock:
        _active.pop(run_id, None)


@contextmanager
def slot(label: str) -> Iterator[Active]:
    """Hold a run slot for the duration of a block (a call that makes several runs, like dump_kernel_inputs)."""
    entry = reserve(label)
    try:
        yield entry
    finally:
        release(label)


def start(run_id: str, work: Callable[[threading.Event, Note], None], payload: Payload) -> Active:
    """Run work(cancel, note) on a thread in the run's slot (reserved here unless plan() already did); work
    must persist its own result before returning."""
    entry = reserve(run_id, payload)
    with _lock:
        entry.payload = payload
        cancel = entry.cancel

        def note(elapsed: float, nbytes: int, message: str = "") -> None:
            entry.progress[0] = (elapsed, nbytes, message)

        def target() -> None:
            try:
                work(cancel, note)
            except Exception:  # the run's own code persists failures; this is the last resort
                log.exception("background run %s failed", run_id)
            finally:
                with _lock:
                    _active.pop(run_id, None)

        entry.thread = threading.Thread(target=target, daemon=True, name=f"aoti-debug-{run_id}")
        entry.thread.start()
    return entry


def active(run_id: str) -> Active | None:
    with _lock:
        return _active.get(run_id)


def wait(run_id: str, timeout: float | None = None) -> None:
    entry = active(run_id)
    if entry and entry.thread:
        entry.thread.join(timeout)


@atexit.register
def shutdown() -> None:
    """Cancel every background run, so its process tree is killed before the server exits."""
    with _lock:
        entries = list(_active.values())
    for e in entries:
        e.cancel.set()
    deadline = time.monotonic() + SHUTDOWN_WAIT_S
    for e in entries:
        if e.thread:
            e.thread.join(max(0.0, deadline - time.monotonic()))
