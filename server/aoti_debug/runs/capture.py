"""A child's output stream: bounded head and tail in memory, the whole of it (up to a cap) on disk."""

from __future__ import annotations

from pathlib import Path

# combined.log gets whole lines; a partial line is flushed anyway once it grows past this.
LINE_FLUSH = 1 << 20


class CappedLog:
    """A log file that stops growing at its cap."""

    def __init__(self, path: Path, cap: int):
        # unbuffered: a poller (get_run) reads the log while the run goes on; writes come in read-sized chunks
        self._file = open(path, "wb", buffering=0)  # noqa: SIM115 - closed in close()
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


class Stream:
    """One output stream: bounded head and tail in memory, the whole of it (up to a cap) on disk."""

    def __init__(self, path: Path | None, head_bytes: int, tail_bytes: int, cap: int, combined: CappedLog | None):
        self.head, self.tail, self.total = bytearray(), bytearray(), 0
        self._head_max, self._tail_max = head_bytes, tail_bytes
        self._file = CappedLog(path, cap) if path else None
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
            cut = self._partial.rfind(b"\n") + 1 or (len(self._partial) if len(self._partial) > LINE_FLUSH else 0)
            if cut:
                self._combined.write(bytes(self._partial[:cut]))
                del self._partial[:cut]

    def close(self) -> None:
        if self._combined and self._partial:
            self._combined.write(bytes(self._partial) + b"\n")
        if self._file:
            self._file.close()
