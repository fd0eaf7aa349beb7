"""rerun_with_flags on real processes: refusals, crashes, timeouts, compile detection, baselines, background runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from aoti_debug.common.errors import BadInput
from aoti_debug.runs import rerun
from aoti_debug.runs import store as runs
from aoti_debug.runs.rerun import RerunRequest
from aoti_debug.triage import record
from pkgs import ROOT, build_example

pytestmark = pytest.mark.spawns
PY = sys.executable


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """Run directories go to a temporary AOTI_DEBUG_HOME."""
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    return r


def script(root: Path, code: str, name: str = "repro.py") -> str:
    (root / name).write_text(textwrap.dedent(code))
    return name


def go(root: Path, argv: list[str], **kw) -> rerun.RunResult:
    return rerun.rerun(RerunRequest(argv=argv, cwd=str(root), **kw), [root])


class TestRefusals:
    """Nothing runs, and no run directory is made, when the request is refused."""

    def test_a_script_reached_by_dotdot_outside_the_roots_is_refused(self, root, home) -> None:
        (root.parent / "outside.py").write_text("print('escaped')\n")
        with pytest.raises(BadInput, match="outside the allowed roots"):
            go(root, ["python", "../outside.py"])
        assert not (home / "runs").exists() or not any((home / "runs").iterdir())

    def test_a_symlink_inside_the_roots_pointing_outside_is_refused(self, root) -> None:
        (root.parent / "outside.py").write_text("print('escaped')\n")
        (root / "link.py").symlink_to(root.parent / "outside.py")
        with pytest.raises(BadInput, match="outside the allowed roots") as exc:
            go(root, ["python", "link.py"])
        assert "outside.py" not in str(exc.value)  # the error does not say where the link points

    def test_a_working_directory_outside_the_roots_is_refused(self, root) -> None:
        with pytest.raises(BadInput, match="cwd"):
            rerun.rerun(RerunRequest(argv=["python", "x.py"], cwd=str(root.parent)), [root])

    @pytest.mark.parametrize("argv, message", [
        (["python", "-c", "print(1)"], "python -c is refused"),
        (["python", "-m", "http.server"], "python -m is refused"),
        (["python", "--evil", "repro.py"], "not allowed before the script"),
        (["python repro.py --flag"], "not a shell string"),
        (["sh", "repro.py"], "outside the allowed roots"),
        (["python", "missing.py"], "does not exist"),
        (["no-such-program-xyz"], "not found on PATH"),
    ])
    def test_commands_that_escape_the_script_check_are_refused(self, root, argv, message) -> None:
        script(root, "print(1)\n")
        with pytest.raises(BadInput, match=message):
            go(root, argv)

    @pytest.mark.parametrize("flags", [{"LD_PRELOAD": "/tmp/x.so"}, {"PATH": "/tmp"}])
    def test_environment_keys_outside_the_allow_list_are_refused(self, root, flags, home) -> None:
        script(root, "print(1)\n")
        with pytest.raises(BadInput, match="is not an allowed debug flag"):
            go(root, ["python", "repro.py"], flags=flags)
        assert not (home / "runs").exists() or not any((home / "runs").iterdir())

    def test_an_executable_inside_the_roots_may_run_directly(self, root) -> None:
        (root / "run.sh").write_text("#!/bin/sh\necho hello from sh\n")
        (root / "run.sh").chmod(0o755)
        r = go(root, ["./run.sh"])
        assert r.status == "ok" and "hello from sh" in r.stdout_tail


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed (apt-get install -y gdb; .ci/run does)")
def test_a_crash_is_named_with_faulthandler_frames_and_a_native_backtrace(root) -> None:
    script(root, """
        import ctypes
        def crash_here():
            ctypes.string_at(0)
        crash_here()
    """)
    r = go(root, ["python", "repro.py"])
    assert r.status == "crashed" and r.signal == "SIGSEGV" and r.exit_code is None
    assert r.classification and r.classification.fields.get("signal") == "SIGSEGV"
    assert r.classification.pattern == "segfault_no_message"  # a silent crash: the forensic rerun follows
    f = r.forensics
    assert f and f.faulthandler and f.faulthandler.fatal == "Segmentation fault"
    assert "crash_here" in [fr.function for fr in f.faulthandler.frames]
    assert f.backtrace and f.backtrace.signal == "SIGSEGV" and f.backtrace.frames
    assert f.log_path and Path(f.log_path).is_file()


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed")
def test_the_backtrace_preset_runs_under_gdb_and_reports_the_programs_own_outcome(root) -> None:
    script(root, "import ctypes\nctypes.string_at(0)\n")
    r = go(root, ["python", "repro.py"], presets=["backtrace"])
    assert Path(r.argv[0]).name in ("gdb", "cuda-gdb") and r.command == ["python", "repro.py"]
    assert (r.status, r.signal) == ("crashed", "SIGSEGV")
    bt = r.forensics.backtrace
    assert bt.frames[0].kind == "libc" and bt.points_to == "python"
    assert r.forensics.faulthandler.frames  # the signal was handed on after the backtrace


def test_a_run_past_its_limit_is_killed_and_says_how_to_wait_longer(root) -> None:
    script(root, "import time\nprint('working', flush=True)\ntime.sleep(600)\n")
    t0 = time.monotonic()
    r = go(root, ["python", "repro.py"], timeout_s=1.5)
    assert r.status == "timeout" and r.timed_out and "working" in r.stdout_tail
    assert time.monotonic() - t0 < 15
    assert "wait=false" in r.next_step


def test_a_compile_time_flag_on_a_command_that_compiles_nothing_is_reported_not_applied(root) -> None:
    script(root, "print('loaded a prebuilt package, all good')\n")
    r = go(root, ["python", "repro.py"], presets=["kernel_names"])
    assert r.exit_code == 0 and r.status == "flags_not_applied"
    assert r.not_applied == ["AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=3"]
    assert r.compile and r.compile.compiled is False
    assert r.warnings[0].startswith("NOT APPLIED") and "Rebuild" in r.next_step


def test_runtime_flags_reach_the_child_and_the_baseline_runs_without_them(root, monkeypatch) -> None:
    monkeypatch.setenv("AOTI_RUNTIME_CHECK_INPUTS", "1")  # inherited by the server: the baseline must drop it
    script(root, """
        import os, sys
        v = os.environ.get("AOTI_RUNTIME_CHECK_INPUTS")
        print("checks", v, "faulthandler", os.environ.get("PYTHONFAULTHANDLER"))
        sys.exit(3 if v else 0)
    """)
    r = go(root, ["python", "repro.py"], flags={"AOTI_RUNTIME_CHECK_INPUTS": "1"}, baseline=True)
    assert "checks 1 faulthandler 1" in r.stdout_tail and r.exit_code == 3 and r.status == "failed"
    b = r.baseline
    assert b and b.exit_code == 0 and b.exit_changed and "exit 0 -> exit 3" in b.summary
    assert "checks None" in Path(b.log_path).read_text()
    assert r.not_applied == [] and all(u.applied for u in r.flags)


def test_the_trace_preset_gives_the_run_its_own_trace_directory(root) -> None:
    script(root, "import os\nprint(os.environ['TORCH_TRACE'])\n")
    r = go(root, ["python", "repro.py"], presets=["trace"])
    assert r.artifacts and r.artifacts.trace_dir == str(Path(r.artifacts.run_dir) / "trace")
    assert r.artifacts.trace_dir in r.stdout_tail
    assert any("TORCH_TRACE wrote no log" in n for n in r.artifacts.notes)


def test_a_background_run_is_polled_with_get_run_and_its_result_persists(root) -> None:
    script(root, "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.7)\n")
    started = rerun.start(RerunRequest(argv=["python", "repro.py"], cwd=str(root)), [root])
    assert started.status == "running" and started.progress is not None
    time.sleep(1.2)
    mid = record.get_run(started.run_id)
    assert mid.status == "running" and "tick 0" in mid.stdout_tail
    runs.wait(started.run_id, 30)
    done = record.get_run(started.run_id)
    assert done.status == "ok" and "tick 2" in done.stdout_tail and done.progress is None
    saved = json.loads((runs.run_path(started.run_id) / "result.json").read_text())
    assert saved["status"] == "ok" and saved["run_id"] == started.run_id


@pytest.mark.parametrize("run_id, message", [("../../etc", "is not a run id"),
                                             ("20990101-000000-abcdef", "no run")])
def test_get_run_refuses_bad_ids_and_names_unknown_ones(run_id, message) -> None:
    with pytest.raises(BadInput, match=message):
        record.get_run(run_id)


def test_old_run_directories_are_pruned(root, monkeypatch, home) -> None:
    for i in range(5):
        (home / "runs" / f"20000101-00000{i}-abcdef").mkdir(parents=True)
    monkeypatch.setattr(runs, "MAX_KEPT_RUNS", 3)
    assert runs.prune(3) == ["20000101-000000-abcdef", "20000101-000001-abcdef"]


def test_the_cli_reruns_and_prints_json_then_get_run_reads_it_back(root, home) -> None:
    script(root, "import sys\nprint('boom', file=sys.stderr)\nsys.exit(2)\n")
    env = {**os.environ, "AOTI_DEBUG_HOME": str(home), "AOTI_DEBUG_ROOTS": str(root)}
    cli = [PY, "-m", "aoti_debug"]
    out = subprocess.run([*cli, "rerun", "--preset", "cpp_stacktraces", "--json", "--", "python", "repro.py"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["exit_code"] == 2 and "boom" in r["stderr_tail"]
    assert {"TORCH_SHOW_CPP_STACKTRACES": "1"}.items() <= {f["name"]: f["value"] for f in r["flags"]}.items()
    again = subprocess.run([*cli, "get-run", r["run_id"]], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and f"run:        {r['run_id']}  status: failed" in again.stdout
    refused = subprocess.run([*cli, "rerun", "--flag", "LD_PRELOAD=x", "--", "python", "repro.py"], cwd=root,
                             env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "LD_PRELOAD" in refused.stderr


@pytest.mark.compiles
def test_a_generic_shape_error_becomes_the_exact_input_under_the_sanity_preset(home) -> None:
    """Real CPU AOTI package, load-only: the baseline names no input, the sanity rerun names input_handles[0]."""
    pkg = build_example("static_shape_mismatch")
    argv = ["python", "examples/static_shape_mismatch.py", "--load-only", "--package", str(pkg), "--wrong", "width"]
    r = rerun.rerun(RerunRequest(argv=argv, cwd=str(ROOT), presets=["sanity"], baseline=True, timeout_s=240),
                    [ROOT, pkg.parent])
    b = r.baseline
    assert b and b.exit_code == 1 and not any("input_handles" in e for e in b.evidence), b
    assert "mat1 and mat2 shapes cannot be multiplied" in Path(b.log_path).read_text()
    evidence = " ".join(e.text for e in r.classification.evidence)
    assert "input_handles[0]: unmatched dim value at 1, expected: 8, but got: 12" in evidence
    assert b.evidence_changed and b.new_evidence
    # AOTI_RUNTIME_CHECK_INPUTS acts at run time; the NaN asserts needed a rebuild that a load-only run skips
    applied = {u.name: u.applied for u in r.flags}
    assert applied["AOTI_RUNTIME_CHECK_INPUTS"] is True and applied["TORCHINDUCTOR_NAN_ASSERTS"] is False
    assert r.not_applied == ["TORCHINDUCTOR_NAN_ASSERTS=1"] and r.compile.compiled is False
    assert r.status == "failed" and r.warnings[0].startswith("NOT APPLIED")


@pytest.mark.compiles
def test_a_compile_time_flag_acts_when_the_command_compiles_into_a_fresh_cache(tmp_path, home) -> None:
    pkg = tmp_path / "built.pt2"
    argv = ["python", "examples/static_shape_mismatch.py", "--package", str(pkg), "--wrong", "width"]
    r = rerun.rerun(RerunRequest(argv=argv, cwd=str(ROOT), presets=["kernel_names"], timeout_s=280),
                    [ROOT, tmp_path])
    assert r.compile.compiled is True and any("wrapper.cpp" in e for e in r.compile.evidence), r.compile
    assert any(str(pkg) in e for e in r.compile.evidence)
    assert {u.name: u.applied for u in r.flags}["AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER"] is True
    assert "[ before_launch: " in r.stdout_tail and r.not_applied == []
