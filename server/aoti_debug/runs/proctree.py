"""Find and kill every process a run started: its group, its descendants, and whatever carries its token.

A process can leave all three (double fork, setsid, exec with an empty environment). Two things keep it
findable: every leader is started as a child subreaper (SHIM), so while it lives its orphaned descendants are
re-parented to it and stay in its tree; and a server that calls adopt_orphans() becomes a subreaper itself, so
what a dead leader leaves behind becomes the server's child, which Tree.find takes for an orphan of a run.
Killing freezes the tree with SIGSTOP first (a stopped process cannot fork away) and scans until nothing new
appears.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

# SIGTERM first so a child can flush its logs; then SIGKILL after this grace period.
TERM_GRACE_S = 2.0
# Leftovers found after the leader exited get this long after SIGTERM before SIGKILL.
LEFTOVER_GRACE_S = 0.5
POLL_S = 0.05
# Every process a run starts inherits this marker, so descendants that left the process group and
# lost their parent (setsid + double fork) are still found and killed.
TOKEN_VAR = "AOTI_DEBUG_RUN_TOKEN"
PR_SET_CHILD_SUBREAPER = 36
# Sets the subreaper bit (kept across execve) and execs the command; exit 127 like a shell when it cannot.
SHIM = ("import os,sys\ntry:\n import ctypes;ctypes.CDLL(None).prctl(36,1,0,0,0)\nexcept Exception:\n pass\n"
        "a=sys.argv[1:]\ntry:\n os.execvp(a[0],a)\nexcept OSError as e:\n"
        " sys.stderr.write('cannot run %r: %s\\n'%(a[0],e.strerror));os._exit(127)")
FREEZE_ROUNDS = 20
# After SIGKILL, how long to wait for the killed to die before going on (they normally do within milliseconds).
DEAD_WAIT_S = 1.0
# Leaders of live runs (never taken for orphans) and whether this process adopts orphans (adopt_orphans()).
_leaders: set[int] = set()
leaders_lock = threading.Lock()
_adopting = [False]


def shim_argv(argv: list[str]) -> list[str]:
    """argv run through SHIM (Linux); as is elsewhere."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-I", "-S", "-c", SHIM, *argv]


def register(pid: int) -> None:
    _leaders.add(pid)  # callers hold leaders_lock around the spawn and this


def unregister(pid: int) -> None:
    with leaders_lock:
        _leaders.discard(pid)


def adopt_orphans() -> bool:
    """Make this process a child subreaper (Linux): what a run's dead leader leaves behind becomes our child."""
    try:
        import ctypes

        ok = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        ok = False
    _adopting[0] = ok
    return ok


class Tree:
    """The processes of one run: the leader's group, its descendants, and any process carrying the run token."""

    def __init__(self, leader: int, token: str):
        self.leader, self.token = leader, token
        # Only processes started no earlier than the leader can carry its token: their environments are read,
        # nobody else's (reading every environment on the host is the slow part of a scan).
        self.since = _stat(leader)[1] if _stat(leader) else 0

    def find(self, known: set[int] | None = None) -> set[int]:
        """Every process of the run still around (zombies included: signalling them is harmless): the leader's
        descendants, those of processes already known, orphans we adopted, and carriers of the token."""
        children: dict[int, list[int]] = {}
        recent = []
        me, my_sid = os.getpid(), os.getsid(0)
        adopted = []
        with leaders_lock:
            leaders = set(_leaders)
            for entry in os.listdir("/proc"):
                if entry.isdigit() and (st := _stat(int(entry))):
                    children.setdefault(st[0], []).append(int(entry))
                    if st[1] >= self.since:
                        recent.append(int(entry))
                        # Our child that we did not start (not a leader) in a session of its own: an orphan of a
                        # run, re-parented to us because we adopt orphans.
                        if (_adopting[0] and st[0] == me and int(entry) not in leaders
                                and int(entry) != self.leader and _sid(int(entry)) not in (None, my_sid)):
                            adopted.append(int(entry))
        found, todo = set(adopted), [self.leader, *(known or ()), *adopted]
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

    def freeze(self, known: set[int] | None = None) -> set[int]:
        """SIGSTOP the leader, then every process found, scanning again until no new one appears."""
        _signal_all(self.leader, set(), signal.SIGSTOP)
        pids = set(known or ())
        for _ in range(FREEZE_ROUNDS):
            new = self.find(pids) - pids
            if not new:
                break
            _signal_all(-1, new, signal.SIGSTOP)
            pids |= new
        return pids

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """Freeze the run; TERM the leader alone (it may flush its logs) while the rest stay stopped; after a
        grace period freeze again and KILL everything."""
        pids = self.freeze()
        for sig in (signal.SIGTERM, signal.SIGCONT):
            try:
                os.kill(self.leader, sig)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            proc.wait(timeout=TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        pids = self.freeze(pids)
        _signal_all(self.leader, pids, signal.SIGKILL)
        proc.wait()
        _wait_dead(pids)
        _reap(pids)

    def kill_leftovers(self) -> int:
        """After the leader exited: TERM, briefly wait, then freeze and KILL everything the run left behind."""
        pids = found = {p for p in self.find() if _alive(p)}
        _signal_all(self.leader, pids, signal.SIGTERM)
        until = time.monotonic() + LEFTOVER_GRACE_S
        while pids and time.monotonic() < until:
            time.sleep(POLL_S)
            pids = {p for p in pids if _alive(p)}
        if found:
            pids = self.freeze(pids)
        _signal_all(self.leader, pids, signal.SIGKILL)
        _wait_dead(pids)
        # Adopted orphans that ended by themselves are zombies (not in found): collect them too.
        _reap(found | pids | (self.find() if _adopting[0] else set()))
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


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _reap(pids: set[int]) -> None:
    """Collect the exit of adopted orphans we killed (our children now), so no zombie stays."""
    if not _adopting[0]:
        return
    with leaders_lock:
        mine = pids - _leaders
    for pid in mine:
        for _ in range(20):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not our child (re-parented elsewhere) or already collected
                break
            if done:
                break
            time.sleep(0.01)


def _signal_all(pgid: int, extra: set[int], sig: int) -> None:
    if pgid > 0:
        try:
            os.killpg(pgid, sig)  # pgid is the leader's pid: never getpgid() on a maybe-reaped pid
        except (ProcessLookupError, PermissionError):
            pass
    for pid in extra:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _wait_dead(pids: set[int]) -> None:
    """Until every killed process has died (a zombie or gone), at most DEAD_WAIT_S: SIGKILL takes effect when the
    process next runs, and one that is not our child cannot be waited for."""
    until = time.monotonic() + DEAD_WAIT_S
    while (pids := {p for p in pids if _alive(p)}) and time.monotonic() < until:
        time.sleep(0.005)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")
