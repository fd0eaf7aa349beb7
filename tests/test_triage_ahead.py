"""triage's look-ahead (triage_ahead): a later step's run started early is taken only for the very same request,
cancelled otherwise, and never left running after the triage; real reruns of small scripts."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from aoti_debug.runs import rerun
from aoti_debug.runs.rerun import RerunRequest
from aoti_debug.triage.ahead import Ahead, request_key

pytestmark = pytest.mark.spawns
SLEEPER = "import sys, time; print('started', flush=True); time.sleep(float(sys.argv[1])); print('slept')\n"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    (r / "sleeper.py").write_text(SLEEPER)
    return r


def request(root: Path, seconds: float, flags: dict[str, str] | None = None) -> RerunRequest:
    return RerunRequest(argv=["python", "sleeper.py", str(seconds)], cwd=str(root), flags=flags or {},
                        fresh_cache=False, forensics=False, timeout_s=60)


def start(ahead: Ahead, root: Path, req: RerunRequest, step=("rerun_with_flags", "sanity")) -> None:
    ahead.start(step, request_key(req), 5, lambda cancel, note: rerun.execute(rerun.plan(req, [root]),
                                                                               cancel=cancel, note=note))


def test_a_run_started_ahead_is_taken_by_its_step_when_the_request_is_the_same(root) -> None:
    ahead, found = Ahead(None, None, time.monotonic()), []
    req = request(root, 0.1)
    start(ahead, root, req)
    # the step's own request differs only in its time limit (it follows the budget left)
    r = ahead.take(("rerun_with_flags", "sanity"), request_key(req.model_copy(update={"timeout_s": 9})), found)
    assert r is not None and r.status == "ok" and "slept" in Path(r.log_path).read_text()
    assert found and found[0].startswith("started ahead, beside step 5") and ahead.free()


def test_another_step_leaves_it_alone_and_a_changed_request_cancels_it(root) -> None:
    ahead, found = Ahead(None, None, time.monotonic()), []
    req = request(root, 30)
    start(ahead, root, req)
    assert ahead.take(("rerun_with_flags", "backtrace"), request_key(req), found) is None and not ahead.free()
    t = time.monotonic()
    changed = request(root, 30, {"AOTI_RUNTIME_CHECK_INPUTS": "1"})
    assert ahead.take(("rerun_with_flags", "sanity"), request_key(changed), found) is None
    assert time.monotonic() - t < 15 and "no longer fits" in found[0] and ahead.free()


def test_a_run_no_step_took_is_cancelled_when_the_triage_ends(root) -> None:
    ahead = Ahead(None, None, time.monotonic())
    start(ahead, root, request(root, 30))
    early = ahead.early
    t = time.monotonic()
    ahead.abandon()
    (r, _cost) = early.future.result(timeout=1)
    assert r.status == "cancelled" and time.monotonic() - t < 15 and ahead.free()


def test_cancelling_the_triage_cancels_the_run_started_ahead(root) -> None:
    cancel = threading.Event()
    ahead = Ahead(cancel, None, time.monotonic())
    start(ahead, root, request(root, 30))
    cancel.set()
    (r, _cost) = ahead.early.future.result(timeout=15)
    assert r.status == "cancelled"


def test_a_package_rewritten_while_the_step_beside_ran_is_reported_in_that_step(root) -> None:
    pkg = root / "model.pt2"
    pkg.write_bytes(b"baseline build")
    ahead, found = Ahead(None, None, time.monotonic()), []
    req = request(root, 30)
    ahead.start(("dump_kernel_inputs", None), request_key(req), 5,
                lambda cancel, note: rerun.execute(rerun.plan(req, [root]), cancel=cancel, note=note), watch=pkg)
    ahead.check(5, found)
    assert found == []  # untouched: nothing to say
    pkg.write_bytes(b"the printer build, written early")
    ahead.check(4, found)
    assert found == []  # another step's
    ahead.check(5, found)
    assert len(found) == 1 and "changed while this run went on" in found[0]
    ahead.abandon()
