"""The subprocess wrapper on real children: crashes, hangs, floods, grandchildren, cancellation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import anyio
import pytest
from aoti_debug.runs import proc, pump
from aoti_debug.runs.proc import ProcSpec, run

pytestmark = pytest.mark.spawns
PY = sys.executable
SEGFAULT = "import ctypes; ctypes.string_at(0)"
# Killed processes are reaped by their parent, or by init once orphaned; init may take a moment.
REAP_WAIT_S = 10.0


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:][:1].decode()


def assert_all_gone(pids: list[int], *, settle_s: float = 0.0) -> None:
    """None running (now, or within settle_s); and none left even as a zombie once init has reaped them."""
    deadline = time.monotonic() + settle_s
    while any(_state(p) not in (None, "Z", "X") for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_state(p) in (None, "Z", "X") for p in pids), {p: _state(p) for p in pids}
    deadline = time.monotonic() + REAP_WAIT_S
    while any(_state(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_state(p) for p in pids), {p: _state(p) for p in pids}


def test_a_segfaulting_child_is_a_result_named_sigsegv(tmp_path) -> None:
    r = run(ProcSpec(argv=[PY, "-c", SEGFAULT], log_dir=tmp_path, timeout_s=30))
    assert (r.returncode, r.signal, r.timed_out) == (-11, "SIGSEGV", False)
    assert not r.ok and "SIGSEGV" in str(r)


def test_an_aborting_child_is_named_sigabrt_and_faulthandler_output_survives(tmp_path) -> None:
    r = run(ProcSpec(argv=[PY, "-X", "faulthandler", "-c", "import os; os.abort()"], log_dir=tmp_path))
    assert r.signal == "SIGABRT"
    assert "Fatal Python error: Aborted" in r.stderr_tail
    assert "Fatal Python error: Aborted" in (tmp_path / "combined.log").read_text()


def test_a_c_printf_line_before_a_crash_survives_the_pty_or_unbuffered_python_but_not_a_plain_pipe(tmp_path) -> None:
    code = f"import ctypes; ctypes.CDLL(None).printf(b'last words\\n'); {SEGFAULT}"
    buffered = {"PYTHONUNBUFFERED": None}  # python -u also unbuffers C stdio; without it a pipe is block-buffered
    tty = run(ProcSpec(argv=[PY, "-c", code], env_overrides=buffered, log_dir=tmp_path / "tty"))
    pipe = run(ProcSpec(argv=[PY, "-c", code], env_overrides=buffered, log_dir=tmp_path / "pipe", stdout_tty=False))
    unbuffered = run(ProcSpec(argv=[PY, "-c", code], log_dir=tmp_path / "u", stdout_tty=False))
    assert tty.signal == pipe.signal == unbuffered.signal == "SIGSEGV"
    assert "last words" in tty.stdout_tail and "last words" in unbuffered.stdout_tail
    assert "last words" not in pipe.stdout_tail  # why stdout is a pty by default (non-Python programs too)


def test_a_child_that_hangs_past_the_limit_is_killed_at_the_limit(tmp_path) -> None:
    t0 = time.monotonic()
    r = run(ProcSpec(argv=[PY, "-c", "import time; print('up', flush=True); time.sleep(600)"], timeout_s=1.0,
                     log_dir=tmp_path))
    assert r.timed_out and r.signal == "SIGTERM" and "up" in r.stdout_tail
    assert time.monotonic() - t0 < 1.0 + proc.TERM_GRACE_S + proc.DRAIN_S


def test_a_child_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path) -> None:
    code = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); "
            "time.sleep(600)")
    r = run(ProcSpec(argv=[PY, "-c", code], timeout_s=1.0))
    assert r.timed_out and r.signal == "SIGKILL"
    assert r.duration_s < 1.0 + proc.TERM_GRACE_S + proc.DRAIN_S + 1


GRANDCHILDREN = textwrap.dedent("""
    import os, subprocess, sys, time
    pids = [subprocess.Popen(["sleep", "300"]).pid]                                 # same group
    pids.append(subprocess.Popen(["sleep", "301"], start_new_session=True).pid)     # own session
    r, w = os.pipe()
    if os.fork() == 0:                                                              # double-fork daemon
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode()); time.sleep(300)
        os._exit(0)
    pids.append(int(os.read(r, 32)))
    open(sys.argv[1], "w").write(" ".join(map(str, pids)))
    print("spawned", flush=True)
    if sys.argv[2] == "hang":
        time.sleep(300)
""")


@pytest.mark.parametrize("mode", ["hang", "exit"])
def test_grandchildren_in_and_out_of_the_group_are_all_killed(tmp_path, mode) -> None:
    script, pidfile = tmp_path / "spawn.py", tmp_path / "pids"
    script.write_text(GRANDCHILDREN)
    r = run(ProcSpec(argv=[PY, str(script), str(pidfile), mode], timeout_s=3.0 if mode == "hang" else 30))
    assert "spawned" in r.stdout_tail
    assert r.timed_out == (mode == "hang")
    if mode == "exit":
        assert r.returncode == 0 and r.leftovers_killed >= 3
    assert_all_gone([int(p) for p in pidfile.read_text().split()])


FLOOD = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from aoti_debug.runs.proc import ProcSpec, run
    out = {}
    for name, tty, mib in (("pipe", False, 1024), ("pty", True, 64)):
        code = f"import os\\nb = b'x' * 2**20\\nfor _ in range({mib}): os.write(1, b)"
        r = run(ProcSpec(argv=[sys.executable, "-c", code], stdout_tty=tty, log_dir=Path(sys.argv[1]) / name,
                         max_log_bytes=8 * 2**20, timeout_s=120))
        out[name] = dict(bytes=r.stdout_bytes, tail=len(r.stdout_tail), truncated=r.log_truncated, rc=r.returncode,
                         log=os.path.getsize(Path(sys.argv[1]) / name / "stdout.log"))
    status = Path("/proc/self/status").read_text()
    out["hwm_kb"] = int(next(l for l in status.splitlines() if l.startswith("VmHWM")).split()[1])
    print(json.dumps(out))
""")


def test_a_gigabyte_flood_keeps_the_runner_memory_and_the_log_bounded(tmp_path) -> None:
    t0 = time.monotonic()
    done = subprocess.run([PY, "-c", FLOOD, str(tmp_path)], capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for name, mib in (("pipe", 1024), ("pty", 64)):
        r = out[name]
        assert (r["bytes"], r["rc"], r["truncated"]) == (mib * 2**20, 0, True), (name, r)
        assert r["log"] == 8 * 2**20 and r["tail"] == 65536, (name, r)
    # the runner (python + pydantic) stays far below what it read: 1 GiB in, < 150 MiB peak
    assert out["hwm_kb"] < 150 * 1024, out
    print(f"flood: 1 GiB pipe + 64 MiB pty in {time.monotonic() - t0:.1f} s, runner peak {out['hwm_kb'] // 1024} MiB")


def test_cancelling_a_run_kills_its_tree_at_once(tmp_path) -> None:
    script, pidfile = tmp_path / "spawn.py", tmp_path / "pids"
    script.write_text(GRANDCHILDREN)
    cancel, box = threading.Event(), {}
    t = threading.Thread(target=lambda: box.update(r=run(
        ProcSpec(argv=[PY, str(script), str(pidfile), "hang"], timeout_s=60), cancel=cancel)))
    t.start()
    while not pidfile.exists():
        time.sleep(0.05)
    cancel.set()
    t.join(10)
    assert not t.is_alive() and box["r"].cancelled and not box["r"].timed_out
    assert_all_gone([int(p) for p in pidfile.read_text().split()])


@pytest.mark.anyio
async def test_run_async_reports_progress_and_a_cancelled_caller_leaves_no_process(tmp_path) -> None:
    pidfile = tmp_path / "pid"
    code = (f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); print('x' * 100, flush=True); "
            "time.sleep(600)")
    seen: list[tuple[float, int, str]] = []

    async def progress(elapsed: float, nbytes: int, message: str) -> None:
        seen.append((elapsed, nbytes, message))

    with anyio.move_on_after(2.5):
        await proc.run_async(ProcSpec(argv=[PY, "-c", code], timeout_s=60), on_progress=progress)
    assert seen and seen[-1][1] >= 100 and seen[-1][2] == "running"
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    assert_all_gone([int(pidfile.read_text())])


def test_a_missing_program_is_a_spawn_error_not_an_exception() -> None:
    r = run(ProcSpec(argv=["/nonexistent/program"]))
    assert r.spawn_error and "FileNotFoundError" in r.spawn_error and r.returncode is None
    assert "FileNotFoundError" in str(r)


def test_env_overrides_add_and_delete_and_the_run_token_is_set(monkeypatch) -> None:
    monkeypatch.setenv("AOTI_DEBUG_TEST_GONE", "1")
    code = ("import os; print(os.environ.get('A_FLAG'), os.environ.get('AOTI_DEBUG_TEST_GONE'), "
            f"os.environ['PYTHONUNBUFFERED'], len(os.environ[{proc.TOKEN_VAR!r}]))")
    r = run(ProcSpec(argv=[PY, "-c", code], env_overrides={"A_FLAG": "v", "AOTI_DEBUG_TEST_GONE": None}))
    assert r.stdout_tail.split() == ["v", "None", "1", "16"]


def test_the_combined_log_keeps_whole_lines_of_both_streams(tmp_path) -> None:
    code = "import sys\nfor i in range(200):\n    print(f'out {i}'); print(f'err {i}', file=sys.stderr)"
    run(ProcSpec(argv=[PY, "-c", code], log_dir=tmp_path))
    lines = (tmp_path / "combined.log").read_text().splitlines()
    assert sorted(lines) == sorted([f"out {i}" for i in range(200)] + [f"err {i}" for i in range(200)])
    assert os.path.getsize(tmp_path / "stdout.log") == sum(len(f"out {i}\n") for i in range(200))


def test_a_traceback_written_after_many_stdout_lines_lands_after_them_in_the_combined_log(tmp_path) -> None:
    # 12 KiB of line-buffered stdout through the pty (4 KiB a read), then one stderr line: the shape of a printer
    # run that ends in a Python exception. Logged by arrival, the traceback used to fall inside a record.
    code = ("import sys\nfor i in range(300):\n    print(f'out {i:04d} ' + 'x' * 30)\n"
            "print('Traceback (most recent call last):', file=sys.stderr)")
    for k in range(10):
        run(ProcSpec(argv=[PY, "-c", code], log_dir=tmp_path / str(k)))
        lines = (tmp_path / str(k) / "combined.log").read_text().splitlines()
        assert len(lines) == 301 and lines[-1] == "Traceback (most recent call last):", (k, lines.index(
            "Traceback (most recent call last):"))


def test_output_written_by_a_grandchild_after_the_leader_exits_is_read_whole_and_nothing_is_added(tmp_path) -> None:
    # the leader exits at once; a background grandchild holding the pty writes 64 KiB a moment later
    code = ("import os, subprocess, sys\n"
            "late = 'import os, time; time.sleep(0.3); os.write(1, b\"y\" * 65536)'\n"
            "subprocess.Popen([sys.executable, '-c', late])\n"
            "os.write(1, b'x' * 5000)")
    r = run(ProcSpec(argv=[PY, "-c", code], log_dir=tmp_path, timeout_s=30))
    data = (tmp_path / "stdout.log").read_bytes()
    assert data == b"x" * 5000 + b"y" * 65536 and r.stdout_bytes == len(data)


def test_running_out_of_descriptors_after_the_start_leaves_no_descriptor_and_no_child(tmp_path, monkeypatch) -> None:
    pidfile = tmp_path / "pid"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    before = len(os.listdir("/proc/self/fd"))

    def no_more(fd: int) -> int:
        deadline = time.monotonic() + 10
        while not pidfile.exists() and time.monotonic() < deadline:  # the child is running
            time.sleep(0.02)
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(proc.os, "dup", no_more)
    r = run(ProcSpec(argv=[PY, "-c", code], stdout_tty=False, timeout_s=30))
    monkeypatch.undo()
    assert r.spawn_error and "Too many open files" in r.spawn_error
    assert len(os.listdir("/proc/self/fd")) == before
    assert_all_gone([int(pidfile.read_text())])


def test_a_child_that_upper_cases_its_tty_output_leaves_no_marker_and_costs_no_wait(tmp_path) -> None:
    r = run(ProcSpec(argv=["sh", "-c", "stty olcuc <&1; printf 'hello\\n'"], log_dir=tmp_path, timeout_s=30))
    assert (tmp_path / "stdout.log").read_bytes() == b"HELLO\n" and r.duration_s < proc.DRAIN_S


def test_no_selector_for_the_output_is_a_spawn_error_that_leaves_no_descriptor_and_no_child(tmp_path, monkeypatch):
    pidfile = tmp_path / "pid"
    before = len(os.listdir("/proc/self/fd"))

    def no_selector() -> None:
        deadline = time.monotonic() + 10
        while not pidfile.exists() and time.monotonic() < deadline:  # the child is running
            time.sleep(0.02)
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(pump.selectors, "DefaultSelector", no_selector)
    r = run(ProcSpec(argv=["sh", "-c", f"echo $$ > {pidfile}; exec sleep 60"], timeout_s=30))
    monkeypatch.undo()
    assert r.spawn_error and "Too many open files" in r.spawn_error
    assert len(os.listdir("/proc/self/fd")) == before
    assert_all_gone([int(pidfile.read_text())])

