"""Find and kill every process a run started: its group, its descendants, and whatever carries its token."""

from __future__ import annotations

import os
import signal
import subprocess
import time

# SIGTERM first so a child can flush its logs; then SIGKILL after this grace period.
TERM_GRACE_S = 2.0
# Leftovers found after the leader exited get this long after SIGTERM before SIGKILL.
LEFTOVER_GRACE_S = 0.5
POLL_S = 0.05
# Every process a run starts inherits this marker, so descendants that left the process group and
# lost their parent (setsid + double fork) are still found and killed.
TOKEN_VAR = "AOTI_DEBUG_RUN_TOKEN"


class Tree:
    """The processes of one run: the leader's group, its descendants, and any process carrying the run token."""

    def __init__(self, leader: int, token: str):
        self.leader, self.token = leader, token
        # Only processes started no earlier than the leader can carry its token: their environments are read,
        # nobody else's (reading every environment on the host is the slow part of a scan).
        self.since = _stat(leader)[1] if _stat(leader) else 0

    def find(self) -> set[int]:
        """Every process of the run still around (zombies included: signalling them is harmless)."""
        children: dict[int, list[int]] = {}
        recent = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (st := _stat(int(entry))):
                children.setdefault(st[0], []).append(int(entry))
                if st[1] >= self.since:
                    recent.append(int(entry))
        found, todo = set(), [self.leader]
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        needle = f"\0{TOKEN_VAR}={self.token}\0".encode()
        for pid in recent:
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if needle in b"\0" + f.read():
                        found.add(pid)
            except OSError:
                continue
        found.discard(os.getpid())
        return found

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """TERM the group and every process of the run, wait a grace period, then KILL what is left."""
        pids = self.find()
        _signal_all(self.leader, pids, signal.SIGTERM)
        try:
            proc.wait(timeout=TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        _signal_all(self.leader, pids | self.find(), signal.SIGKILL)
        proc.wait()

    def kill_leftovers(self) -> int:
        """After the leader exited: TERM, briefly wait, then KILL everything the run left behind."""
        pids = found = {p for p in self.find() if _alive(p)}
        _signal_all(self.leader, pids, signal.SIGTERM)
        until = time.monotonic() + LEFTOVER_GRACE_S
        while pids and time.monotonic() < until:
            time.sleep(POLL_S)
            pids = {p for p in pids if _alive(p)}
        _signal_all(self.leader, pids | (self.find() if found else set()), signal.SIGKILL)
        return len(found)


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) from /proc/<pid>/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    return int(fields[1]), int(fields[19])


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


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")
