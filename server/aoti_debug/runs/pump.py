"""A running child's output: its stdout (a pty, or a pipe) and stderr read as they become ready, stdout first;
the pty read to its end after the exit."""

from __future__ import annotations

import os
import secrets
import select
import selectors
import time

from aoti_debug.runs.capture import Stream

READ_CHUNK = 1 << 20
DRAIN_READS = 64  # stdout reads in a row before stderr gets its turn
STDERR_GRACE_S = 0.005  # how long a stderr chunk waits for stdout written before it
WAIT_S = 0.05  # how long settle waits for the pty at a time


def own_slave_end(slave: int) -> int | None:
    """The parent's slave end, opened anew so that its flags are its own (the child's stdout shares the open file
    of `slave`: made non-blocking there, a child's large write would stop short). `slave` is closed; None where
    the tty cannot be opened again, and the master then ends the stream as soon as the child exits."""
    try:
        return os.open(os.ttyname(slave), os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return None
    finally:
        os.close(slave)


def _exit_fd(pid: int) -> int | None:
    """A descriptor that turns readable when the process exits (Linux 5.3+), else None (the wait loop's poll)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


class Pump:
    """A running child's two output streams, read as they become ready, stdout first."""

    def __init__(self, out_fd: int, err_fd: int, out: Stream, err: Stream, slave_fd: int | None = None,
                 pid: int | None = None) -> None:
        self.out_fd, self.err_fd, self.out, self.err = out_fd, err_fd, out, err
        self.slave_fd = slave_fd
        self.sel = selectors.DefaultSelector()
        self.exit_fd = _exit_fd(pid) if pid is not None and slave_fd is not None else None
        try:
            for fd in (out_fd, err_fd):
                self.sel.register(fd, selectors.EVENT_READ)
            self.ready = select.poll()  # not select.select: a long-lived server's descriptors may pass 1024
            self.ready.register(out_fd, select.POLLIN)
            if self.exit_fd is not None:  # the pty stays open after the exit (the parent holds it): wake for it
                self.sel.register(self.exit_fd, selectors.EVENT_READ)
        except BaseException:  # the caller closes the streams' fds; what was made here goes now
            self.sel.close()
            if self.exit_fd is not None:
                os.close(self.exit_fd)
            raise

    @property
    def open(self) -> bool:
        return self.out_fd in self.sel.get_map() or self.err_fd in self.sel.get_map()

    def _read(self, fd: int) -> bytes | None:
        """One read of fd; None when it would block, b"" (and fd unregistered) once it has closed."""
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return None
        except OSError:  # EIO on a pty master once every slave end is closed
            data = b""
        if not data:
            self.sel.unregister(fd)
        return data

    def _drain_stdout(self, wait: float) -> None:
        if self.out_fd not in self.sel.get_map() or not self.ready.poll(wait * 1000):
            return
        for _ in range(DRAIN_READS):
            if not (data := self._read(self.out_fd)):
                break
            self.out.feed(data)

    def pump(self, timeout: float) -> bool:
        """Read what is ready, stdout first. A pty hands out at most 4 KiB a read and passes writes on a moment
        late, so stdout is drained (after a short grace) before a stderr chunk is logged: stderr written after a
        stdout line lands after it in combined.log. False when nothing was ready."""
        events = self.sel.select(timeout) if self.open else []
        fds = {key.fd for key, _ in events}
        if self.out_fd in fds:
            self._drain_stdout(0)
        if self.err_fd in fds and (data := self._read(self.err_fd)):
            self._drain_stdout(STDERR_GRACE_S)
            self.err.feed(data)
        return bool(events)

    def settle(self, until: float) -> None:
        """The leader has exited: write a marker through the parent's own slave end and read the pty up to it. A
        pty keeps the order of writes, so all the leader wrote is read before the marker, however late the kernel
        passes it on; the marker itself is dropped. Then let go of the slave end, so that the master reports end of
        stream once every grandchild still holding the pty lets go too. Bounded by `until`."""
        if self.exit_fd is not None:
            self.sel.unregister(self.exit_fd)
            os.close(self.exit_fd)
            self.exit_fd = None
        if self.slave_fd is None:
            return
        # upper case, digits and dashes only: a child may have set the tty to upper-case its output (stty olcuc)
        marker = f"<AOTI-DEBUG-SETTLE-{secrets.token_hex(8).upper()}>".encode()
        pending, held = marker, bytearray()  # the slave end is non-blocking: a grandchild filling the pty waits
        while self.out_fd in self.sel.get_map() and time.monotonic() < until:
            if pending:
                try:
                    pending = pending[os.write(self.slave_fd, pending):]
                except BlockingIOError:
                    pass
            if not self.ready.poll(WAIT_S * 1000) or (data := self._read(self.out_fd)) is None:
                continue
            held += data
            if (at := held.find(marker)) >= 0:
                del held[at:at + len(marker)]
                break
            if len(held) >= len(marker):  # all but a possible start of the marker goes on at once
                self.out.feed(bytes(held[:1 - len(marker)]))
                del held[:1 - len(marker)]
            if not data:
                break
        if held:
            self.out.feed(bytes(held))
        self._release()

    def _release(self) -> None:
        if self.slave_fd is not None:
            os.close(self.slave_fd)
            self.slave_fd = None

    def close(self) -> None:
        self._release()
        for key in list(self.sel.get_map().values()):
            self.sel.unregister(key.fd)
        self.sel.close()
        for fd in (self.out_fd, self.err_fd, self.exit_fd):
            if fd is not None:
                os.close(fd)
