"""triage's look-ahead: while a run that builds nothing goes on, the next rebuild in the queue starts beside it.

A step takes the result only if, at its turn, it would make the very same request (argv, flags, presets, printer
kernels): otherwise the early run is cancelled and the step runs as usual, so the diagnosis is the one of the steps
run one after the other (issue 15). One early run at a time, and only where the host has a second core.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from aoti_debug.runs import proc

# A look-ahead doubles the processes a triage runs: only with a core for each.
MIN_CORES = 2


def prefetch(fn: Callable[[], Any]) -> Future:
    """Run fn on a daemon thread now; a Future of (its result, its seconds): the step that needs it waits for it
    (an exception is re-raised there)."""
    fut: Future = Future()

    def work() -> None:
        t = time.monotonic()
        try:
            fut.set_result((fn(), time.monotonic() - t))
        except BaseException as exc:  # handed to the step that waits, which reports it
            fut.set_exception(exc)

    threading.Thread(target=work, daemon=True, name="aoti-debug-prefetch").start()
    return fut


def request_key(req: BaseModel, *extra: object) -> str:
    """What makes two runs the same run: the request without its time limit (that follows the budget left)."""
    return req.model_dump_json(exclude={"timeout_s"}) + repr(extra)


def _stat(path: Path | None) -> tuple[int, int] | None:
    try:
        st = path.stat() if path is not None else None
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if st else None


class Either(threading.Event):
    """Set when its own flag or the triage's cancel event is: proc.run polls is_set()."""

    def __init__(self, parent: threading.Event | None):
        super().__init__()
        self.parent = parent

    def is_set(self) -> bool:
        return super().is_set() or (self.parent is not None and self.parent.is_set())


@dataclass
class Early:
    """One step started ahead: which step (tool, preset), the request it made, its result and its cancel flag."""

    step: tuple[str, str | None]
    key: str
    future: Future
    cancel: Either
    started: float
    beside: int  # the index of the step it ran beside


class Ahead:
    """The triage's one early run, taken or cancelled by the step it was started for."""

    def __init__(self, cancel: threading.Event | None, note: proc.Note | None, t0: float):
        self.early: Early | None = None
        self.parent, self.note, self.t0 = cancel, note, t0
        self.cores = os.cpu_count() or 1
        self.watched: tuple[Path | None, tuple[int, int] | None] = (None, None)

    def free(self) -> bool:
        return self.early is None and self.cores >= MIN_CORES

    def start(self, step: tuple[str, str | None], key: str, beside: int,
              work: Callable[[Either, proc.Note | None], Any], watch: Path | None = None) -> None:
        """Run work(cancel, note) on a thread now, for the step `step` with the request `key`; watch: the package
        the step it runs beside may load (check() says when the early run rewrote it meanwhile)."""
        self.watched = (watch, _stat(watch))
        cancel = Either(self.parent)
        if self.note:  # said once: the progress line stays the running step's
            self.note(time.monotonic() - self.t0, 0, f"{step[0]}{' ' + step[1] if step[1] else ''} started ahead, "
                      f"beside step {beside}")
        self.early = Early(step, key, prefetch(lambda: work(cancel, None)), cancel, time.monotonic(), beside)

    def check(self, index: int, found: list[str]) -> None:
        """After step `index`: if an early run beside it rewrote the package before it ended, say so in the step
        (a rebuild writes its package after import, export and compile, a load reads it right after import, so
        the load reads the old one unless the host starves it: this reports that case instead of hiding it)."""
        e, (path, before) = self.early, self.watched
        if e is not None and e.beside == index and path is not None and _stat(path) != before:
            found.append(f"the package {path} changed while this run went on (the run started ahead rewrote it): "
                         "this run may have loaded that build")

    def take(self, step: tuple[str, str | None], key: str, found: list[str]) -> Any | None:
        """The early result for this step if it made this request (waiting for it); None: run the step now. An
        early run for this step with another request is cancelled (the diagnosis follows the serial order)."""
        e, turn = self.early, time.monotonic()
        if e is None or e.step != step:
            return None
        self.early = None
        if e.key != key:
            self._stop(e)
            found.append(f"the run started ahead beside step {e.beside} no longer fits what this step asks "
                         "(an earlier step changed it): cancelled and run again")
            return None
        try:
            result, cost = e.future.result()
        except Exception as exc:  # the early run failed to run at all: the step runs it again
            found.append(f"the run started ahead beside step {e.beside} failed ({exc}); run again")
            return None
        found.append(f"started ahead, beside step {e.beside}: of its {cost:.0f} s, "
                     f"{min(cost, turn - e.started):.0f} s ran before this step's turn")
        return result

    def abandon(self) -> None:
        """At the end of the triage: an early run no step took is cancelled and waited for (no orphan process)."""
        e, self.early = self.early, None
        if e is not None:
            self._stop(e)

    @staticmethod
    def _stop(e: Early) -> None:
        e.cancel.set()
        try:
            e.future.result()
        except Exception:  # a cancelled run's failure is of no interest
            pass
