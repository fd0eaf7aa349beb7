"""The one subprocess wrapper: argv only, its own process group, bounded memory, killed on timeout or cancel."""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import secrets
import shutil
import subprocess
import termios
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field

from aoti_debug.common.signals import signal_number_name
from aoti_debug.runs import proctree
from aoti_debug.runs.capture import CappedLog, Stream
from aoti_debug.runs.proctree import TERM_GRACE_S, TOKEN_VAR, Tree
from aoti_debug.runs.pump import Pump, own_slave_end

__all__ = ["TERM_GRACE_S", "TOKEN_VAR", "ProcResult", "ProcSpec", "child_env", "in_thread", "run", "run_async"]

# After the leader exits, how long we keep reading pipes still held open by leftovers.
DRAIN_S = 2.0
# How often the waiting loop wakes to check the deadline, cancellation and progress.
POLL_S = 0.05
# Progress callbacks fire at most this often.
PROGRESS_EVERY_S = 1.0
# Bigger pipe buffers mean fewer wakeups when a child floods its output (1 MiB is the unprivileged cap).
PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = 1031


class ProcSpec(BaseModel):
    """What to run and under which limits."""

    argv: list[str] = Field(min_length=1, description="Program and arguments; never a shell string")
    cwd: Path | None = None
    env_overrides: dict[str, str | None] = Field(
        default_factory=dict, description="Added to the inherited environment; None deletes a variable"
    )
    timeout_s: float = Field(default=45.0, gt=0)
    stdout_tty: bool = Field(
        default=True,
        description="Give the child a pty as stdout so C stdio is line-buffered and a crash loses no printf line",
    )
    log_dir: Path | None = Field(default=None, description="Write stdout.log, stderr.log, combined.log here")
    head_bytes: int = 8192
    tail_bytes: int = 65536
    max_log_bytes: int = Field(default=64 * 2**20, description="Per log file; beyond it only bytes are counted")


class ProcResult(BaseModel):
    """What happened; an expected failure (timeout, signal, spawn error) is a result, not an exception."""

    argv: list[str]
    cwd: str | None = None
    env_overrides: dict[str, str | None] = Field(default_factory=dict)
    returncode: int | None = Field(None, description="Exit code; negative = killed by that signal; None = never ran")
    signal: str | None = Field(None, description="Signal that ended the process (SIGSEGV, SIGABRT, SIGKILL, ...)")
    timed_out: bool = False
    cancelled: bool = False
    duration_s: float = 0.0
    stdout_head: str = ""
    stdout_tail: str = ""
    stderr_head: str = ""
    stderr_tail: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    log_truncated: bool = Field(False, description="A log file reached max_log_bytes and stopped growing")
    log_dir: str | None = None
    combined_log: str | None = Field(None, description="Both streams, whole lines in arrival order")
    leftovers_killed: int = Field(0, description="Processes still alive after the leader exited, then killed")
    spawn_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.cancelled

    def __str__(self) -> str:
        def block(text: str) -> str:
            return text.rstrip("\n") if text.strip() else "(none)"

        status = self.spawn_error or (
            f"{self.returncode}" + (f" ({self.signal})" if self.signal else "")
            + (" (timed out)" if self.timed_out else "") + (" (cancelled)" if self.cancelled else "")
        )
        return (
            f"command: {tuple(self.argv)}\nreturn code: {status}\n"
            f"stdout: {block(self.stdout_tail)}\nstderr: {block(self.stderr_tail)}"
        )


def child_env(overrides: dict[str, str | None], token: str | None = None) -> dict[str, str]:
    """The inherited environment plus overrides (None deletes)."""
    env = dict(os.environ)
    # A crash must not swallow Python's buffered output: the last lines are the evidence.
    env["PYTHONUNBUFFERED"] = "1"
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    if token:
        env[TOKEN_VAR] = token
    return env


def _decode(data: bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _check_program(arg0: str, env: dict[str, str], cwd: Path | None) -> None:
    """The errors Popen would raise for argv[0], raised here: the shim execs it later, out of our sight."""
    if "/" not in arg0:
        if not shutil.which(arg0, path=env.get("PATH", os.defpath)):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", arg0)
        return
    path = Path(cwd or ".") / arg0
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", arg0)
    if path.is_dir() or not os.access(path, os.X_OK):
        raise PermissionError(errno.EACCES, "Permission denied", arg0)


def _spawn(spec: ProcSpec, token: str) -> tuple[subprocess.Popen[bytes], int, int, int | None]:
    """Start the child in its own session; return it with the read ends of stdout and stderr, and the parent's
    copy of the pty's slave end (None without a pty).

    The parent keeps its slave end until the child has exited and its output is read: while any slave end is
    open a read on the master never fails with EIO, which the kernel can report while the child's last writes
    are still on their way to the master (lost output, seen once in many runs)."""
    master = slave = None
    if spec.stdout_tty:
        master, slave = pty.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.ONLCR  # keep "\n" as is instead of "\r\n"
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
    env = child_env(spec.env_overrides, token)
    try:
        _check_program(spec.argv[0], env, spec.cwd)
        with proctree.leaders_lock:  # an orphan scan never sees this child before it is registered
            proc = subprocess.Popen(
                proctree.shim_argv(spec.argv), cwd=spec.cwd, env=env, stdin=subprocess.DEVNULL,
                stdout=slave if slave is not None else subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True,
            )
            proctree.register(proc.pid)
    except BaseException:
        for fd in (master, slave):
            if fd is not None:
                os.close(fd)
        raise
    fds: list[int] = []
    try:
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                fds.append(os.dup(pipe.fileno()))
                pipe.close()
        out_fd, err_fd = (master, fds[0]) if master is not None else (fds[0], fds[1])
        for fd in (out_fd, err_fd):
            os.set_blocking(fd, False)
            try:
                fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES)
            except OSError:  # a pty, or a kernel that refuses: only throughput suffers
                pass
        if slave is not None:
            slave = own_slave_end(slave)
    except BaseException:  # out of descriptors after the start: no fd and no child is left behind
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        _abandon(proc, token, (master, slave, *fds))
        raise
    return proc, out_fd, err_fd, slave


def _abandon(proc: subprocess.Popen[bytes], token: str, fds: tuple[int | None, ...]) -> None:
    """A child that started but cannot be supervised (no descriptor left): close its fds, kill its tree, forget it."""
    for fd in fds:
        if fd is not None:
            os.close(fd)
    Tree(proc.pid, token).kill(proc)
    proctree.unregister(proc.pid)


def _supervise(proc: subprocess.Popen, pump: Pump, spec: ProcSpec, result: ProcResult, start: float,
               cancel: threading.Event | None, on_progress: Callable[[float, int], None] | None) -> None:
    """Read the child's output until it exits, its time is up or it is cancelled (the last two: flagged)."""
    deadline, last_progress = start + spec.timeout_s, start
    while proc.poll() is None:
        now = time.monotonic()
        if now >= deadline:
            result.timed_out = True
            return
        if cancel is not None and cancel.is_set():
            result.cancelled = True
            return
        if on_progress and now - last_progress >= PROGRESS_EVERY_S:
            last_progress = now
            on_progress(now - start, pump.out.total + pump.err.total)
        if not pump.open:  # both streams closed: the exit is near, wake for it at once
            try:
                proc.wait(timeout=min(POLL_S, max(0.0, deadline - now)))
            except subprocess.TimeoutExpired:
                pass
        else:
            pump.pump(min(POLL_S, deadline - now))


def _finish(proc: subprocess.Popen, tree: Tree, pump: Pump, result: ProcResult) -> None:
    """Read what the child left in its pipes, kill whatever of its tree still runs, record the exit."""
    drain_until = time.monotonic() + DRAIN_S
    pump.settle(drain_until)
    while pump.open and time.monotonic() < drain_until:
        pump.pump(POLL_S)
    # Whatever is still running (background grandchildren, daemons) is killed: no orphan survives.
    result.leftovers_killed = tree.kill_leftovers()
    proctree.unregister(proc.pid)
    while pump.open and pump.pump(0):
        pass
    result.returncode = proc.returncode
    if proc.returncode is not None and proc.returncode < 0:
        result.signal = signal_number_name(-proc.returncode)


def run(
    spec: ProcSpec,
    *,
    cancel: threading.Event | None = None,
    on_progress: Callable[[float, int], None] | None = None,
) -> ProcResult:
    """Run spec to completion, timeout or cancellation; never raises for the child's failures."""
    if spec.log_dir:
        spec.log_dir.mkdir(parents=True, exist_ok=True)
    combined = CappedLog(spec.log_dir / "combined.log", spec.max_log_bytes) if spec.log_dir else None
    out, err = (Stream(spec.log_dir / f"{name}.log" if spec.log_dir else None, spec.head_bytes, spec.tail_bytes,
                       spec.max_log_bytes, combined) for name in ("stdout", "stderr"))
    result = ProcResult(
        argv=spec.argv, cwd=str(spec.cwd) if spec.cwd else None, env_overrides=spec.env_overrides,
        log_dir=str(spec.log_dir) if spec.log_dir else None,
        combined_log=str(spec.log_dir / "combined.log") if spec.log_dir else None,
    )
    token = secrets.token_hex(8)
    pump: Pump | None = None
    start = time.monotonic()
    try:
        try:
            proc, out_fd, err_fd, slave_fd = _spawn(spec, token)
        except OSError as exc:
            result.spawn_error = f"{type(exc).__name__}: {exc}"
            return result
        tree = Tree(proc.pid, token)
        try:
            pump = Pump(out_fd, err_fd, out, err, slave_fd, proc.pid)
        except OSError as exc:  # out of descriptors for the selector: the started child goes, its fds too
            _abandon(proc, token, (out_fd, err_fd, slave_fd))
            result.spawn_error = f"{type(exc).__name__}: {exc}"
            return result
        try:
            _supervise(proc, pump, spec, result, start, cancel, on_progress)
        finally:  # also on KeyboardInterrupt: no child outlives the wrapper
            if proc.poll() is None:
                tree.kill(proc)
        _finish(proc, tree, pump, result)
    finally:
        if pump is not None:
            pump.close()
        for stream in (out, err, combined):
            if stream is not None:
                stream.close()
        result.duration_s = round(time.monotonic() - start, 3)
        result.stdout_head, result.stdout_tail = _decode(out.head), _decode(out.tail)
        result.stderr_head, result.stderr_tail = _decode(err.head), _decode(err.tail)
        result.stdout_bytes, result.stderr_bytes = out.total, err.total
        result.log_truncated = out.truncated or err.truncated or bool(combined and combined.truncated)
    return result


T = TypeVar("T")
ProgressFn = Callable[[float, int, str], Awaitable[None]]
Note = Callable[[float, int, str], None]


async def in_thread(work: Callable[[threading.Event, Note], T], *, on_progress: ProgressFn | None = None) -> T:
    """Run work(cancel, note) on a worker thread; cancelling the caller sets cancel and waits for it to stop.

    note(elapsed_s, output_bytes, message) records progress; on_progress is awaited with it when elapsed grows.
    """
    import anyio  # only async callers (the MCP server) need it; the core runs without it

    cancel = threading.Event()
    box: dict[str, object] = {}
    state: list[tuple[float, int, str]] = [(0.0, 0, "")]

    def note(elapsed: float, nbytes: int, message: str = "") -> None:
        state[0] = (elapsed, nbytes, message)

    def target() -> None:
        try:
            box["result"] = work(cancel, note)
        except BaseException as exc:  # handed to the awaiting task below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True, name="aoti-debug-run")
    thread.start()
    reported = 0.0
    try:
        while thread.is_alive():
            await anyio.sleep(POLL_S * 4)
            elapsed, nbytes, message = state[0]
            if on_progress and elapsed > reported:
                reported = elapsed
                await on_progress(elapsed, nbytes, message)
    finally:
        if thread.is_alive():
            cancel.set()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(thread.join)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


async def run_async(spec: ProcSpec, *, on_progress: ProgressFn | None = None) -> ProcResult:
    """run() on a worker thread; cancelling the caller kills the process tree before returning."""
    return await in_thread(
        lambda cancel, note: run(spec, cancel=cancel, on_progress=lambda e, n: note(e, n, "running")),
        on_progress=on_progress,
    )
