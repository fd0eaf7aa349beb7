"""The one subprocess wrapper: argv only, its own process group, bounded memory, killed on timeout or cancel."""

from __future__ import annotations

import fcntl
import os
import pty
import secrets
import selectors
import signal
import subprocess
import termios
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio
from pydantic import BaseModel, Field

# SIGTERM first so a child can flush its logs; then SIGKILL after this grace period.
TERM_GRACE_S = 2.0
# Leftovers found after the leader exited get this long after SIGTERM before SIGKILL.
LEFTOVER_GRACE_S = 0.5
# After the leader exits, how long we keep reading pipes still held open by leftovers.
DRAIN_S = 2.0
# How often the waiting loop wakes to check the deadline, cancellation and progress.
POLL_S = 0.05
# Progress callbacks fire at most this often.
PROGRESS_EVERY_S = 1.0
READ_CHUNK = 1 << 20
# Bigger pipe buffers mean fewer wakeups when a child floods its output (1 MiB is the unprivileged cap).
PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = 1031
# Every process a run starts inherits this marker, so descendants that left the process group and
# lost their parent (setsid + double fork) are still found and killed.
TOKEN_VAR = "AOTI_DEBUG_RUN_TOKEN"


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


class _Log:
    """A log file that stops growing at its cap."""

    def __init__(self, path: Path, cap: int):
        self._file = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._cap, self.written, self.truncated = cap, 0, False

    def write(self, data: bytes) -> None:
        room = self._cap - self.written
        if len(data) > room:
            self.truncated = True
            data = data[:max(room, 0)]
        if data:
            self._file.write(data)
            self.written += len(data)

    def close(self) -> None:
        self._file.close()


class _Stream:
    """One output stream: bounded head and tail in memory, the whole of it (up to a cap) on disk."""

    def __init__(self, spec: ProcSpec, name: str, combined: _Log | None):
        self.head, self.tail, self.total = bytearray(), bytearray(), 0
        self._head_max, self._tail_max = spec.head_bytes, spec.tail_bytes
        self._file = _Log(spec.log_dir / f"{name}.log", spec.max_log_bytes) if spec.log_dir else None
        self._combined = combined
        self._partial = bytearray()

    @property
    def truncated(self) -> bool:
        return bool(self._file and self._file.truncated)

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if len(self.head) < self._head_max:
            self.head += data[: self._head_max - len(self.head)]
        if len(data) >= self._tail_max:
            self.tail = bytearray(data[-self._tail_max:])
        else:
            self.tail += data
            if len(self.tail) > self._tail_max:
                del self.tail[: len(self.tail) - self._tail_max]
        if self._file:
            self._file.write(data)
        if self._combined:  # whole lines only, so the two streams do not tear each other's lines
            self._partial += data
            cut = self._partial.rfind(b"\n") + 1 or (len(self._partial) if len(self._partial) > READ_CHUNK else 0)
            if cut:
                self._combined.write(bytes(self._partial[:cut]))
                del self._partial[:cut]

    def close(self) -> None:
        if self._combined and self._partial:
            self._combined.write(bytes(self._partial) + b"\n")
        if self._file:
            self._file.close()


def _ppids() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rfind(b")") + 2:].split()[1]), []).append(int(entry))
    return children


def _descendants(root: int) -> set[int]:
    """Pids below root by parent links (catches children that left the process group)."""
    children, found, todo = _ppids(), set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _marked(token: str) -> set[int]:
    """Live pids whose environment carries this run's token (zombies have no environment)."""
    needle = f"\0{TOKEN_VAR}={token}\0".encode()
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in b"\0" + f.read():
                        found.add(int(entry))
            except OSError:
                continue
    return found


def tree(root: int, token: str | None) -> set[int]:
    """Every process a run started that is still around, by parent links and by the run's token."""
    found = _descendants(root) | (_marked(token) if token else set())
    found.discard(os.getpid())
    return found


def _signal_all(pgid: int, extra: set[int], sig: int) -> None:
    try:
        os.killpg(pgid, sig)  # pgid is the leader's pid: never getpgid() on a maybe-reaped pid
    except (ProcessLookupError, PermissionError):
        pass
    for pid in extra:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_tree(proc: subprocess.Popen[bytes], token: str) -> None:
    """TERM the group and every descendant, wait a grace period, then KILL what is left."""
    pids = tree(proc.pid, token)
    _signal_all(proc.pid, pids, signal.SIGTERM)
    try:
        proc.wait(timeout=TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _signal_all(proc.pid, pids | tree(proc.pid, token), signal.SIGKILL)
    proc.wait()


def _kill_leftovers(pgid: int, token: str) -> int:
    """After the leader exited: TERM, briefly wait, then KILL everything the run left behind."""
    pids = found = tree(pgid, token)
    _signal_all(pgid, pids, signal.SIGTERM)
    until = time.monotonic() + LEFTOVER_GRACE_S
    while pids and time.monotonic() < until:
        time.sleep(POLL_S)
        pids = {p for p in pids if _alive(p)}
    _signal_all(pgid, pids | (tree(pgid, token) if found else set()), signal.SIGKILL)
    return len(found)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")


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


def _spawn(spec: ProcSpec, token: str) -> tuple[subprocess.Popen[bytes], int, int]:
    """Start the child in its own session; return it with the read ends of stdout and stderr."""
    master = slave = None
    if spec.stdout_tty:
        master, slave = pty.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.ONLCR  # keep "\n" as is instead of "\r\n"
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
    try:
        proc = subprocess.Popen(
            spec.argv, cwd=spec.cwd, env=child_env(spec.env_overrides, token), stdin=subprocess.DEVNULL,
            stdout=slave if slave is not None else subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except BaseException:
        if master is not None:
            os.close(master)
        raise
    finally:
        if slave is not None:
            os.close(slave)
    fds = []
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
    return proc, out_fd, err_fd


def run(
    spec: ProcSpec,
    *,
    cancel: threading.Event | None = None,
    on_progress: Callable[[float, int], None] | None = None,
) -> ProcResult:
    """Run spec to completion, timeout or cancellation; never raises for the child's failures."""
    if spec.log_dir:
        spec.log_dir.mkdir(parents=True, exist_ok=True)
    combined = _Log(spec.log_dir / "combined.log", spec.max_log_bytes) if spec.log_dir else None
    out, err = _Stream(spec, "stdout", combined), _Stream(spec, "stderr", combined)
    result = ProcResult(
        argv=spec.argv, cwd=str(spec.cwd) if spec.cwd else None, env_overrides=spec.env_overrides,
        log_dir=str(spec.log_dir) if spec.log_dir else None,
        combined_log=str(spec.log_dir / "combined.log") if spec.log_dir else None,
    )
    token = secrets.token_hex(8)
    sel = selectors.DefaultSelector()
    streams: dict[int, _Stream] = {}
    start = time.monotonic()
    try:
        try:
            proc, out_fd, err_fd = _spawn(spec, token)
        except OSError as exc:
            result.spawn_error = f"{type(exc).__name__}: {exc}"
            return result
        streams.update({out_fd: out, err_fd: err})
        for fd in streams:
            sel.register(fd, selectors.EVENT_READ)

        def pump(timeout: float) -> bool:
            """Read what is ready; False when nothing was."""
            events = sel.select(timeout) if sel.get_map() else []
            for key, _ in events:
                try:
                    data = os.read(key.fd, READ_CHUNK)
                except BlockingIOError:
                    continue
                except OSError:  # EIO on a pty master once every slave end is closed
                    data = b""
                if data:
                    streams[key.fd].feed(data)
                else:
                    sel.unregister(key.fd)
            return bool(events)

        deadline, last_progress = start + spec.timeout_s, start
        try:
            while proc.poll() is None:
                now = time.monotonic()
                if now >= deadline:
                    result.timed_out = True
                    break
                if cancel is not None and cancel.is_set():
                    result.cancelled = True
                    break
                if on_progress and now - last_progress >= PROGRESS_EVERY_S:
                    last_progress = now
                    on_progress(now - start, out.total + err.total)
                if not sel.get_map():
                    time.sleep(POLL_S)
                else:
                    pump(min(POLL_S, deadline - now))
        finally:  # also on KeyboardInterrupt: no child outlives the wrapper
            if proc.poll() is None:
                _kill_tree(proc, token)
        drain_until = time.monotonic() + DRAIN_S
        while sel.get_map() and time.monotonic() < drain_until:
            pump(POLL_S)
        # Whatever is still running (background grandchildren, daemons) is killed: no orphan survives.
        result.leftovers_killed = _kill_leftovers(proc.pid, token)
        while sel.get_map() and pump(0):
            pass
        result.returncode = proc.returncode
        if proc.returncode is not None and proc.returncode < 0:
            try:
                result.signal = signal.Signals(-proc.returncode).name
            except ValueError:
                result.signal = f"signal {-proc.returncode}"
    finally:
        for key in list(sel.get_map().values()):
            sel.unregister(key.fd)
        sel.close()
        for fd in streams:
            os.close(fd)
        out.close()
        err.close()
        if combined:
            combined.close()
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
