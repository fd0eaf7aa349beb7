"""One inductor cache per triage: which compile flags may share it, and real CPU rebuilds that show the printer is
in inductor's cache keys (a printer rebuild after a plain one prints, a plain one after it does not)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from aoti_debug.runs import rerun
from aoti_debug.runs.flags import cache_unsafe, flag_table, resolve
from aoti_debug.runs.rerun import RerunRequest, RunResult

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "index_oob.py"
PRINTER = "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER"
# What level 3 prints around each kernel launch.
LAUNCH_MARK = "before_launch:"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_every_compile_flag_states_whether_a_shared_cache_keeps_it_correct() -> None:
    compile_flags = [f for f in flag_table().flags if f.phase == "compile"]
    assert compile_flags and all(f.cache_safe is not None and f.cache_reason for f in compile_flags)
    # the printer and NaN asserts are what triage's reruns set: they must be covered by the keys
    assert {f.name for f in compile_flags if f.cache_safe} >= {PRINTER, "TORCHINDUCTOR_NAN_ASSERTS"}


def test_a_rerun_gets_the_shared_cache_only_when_every_compile_flag_it_sets_is_cache_safe(tmp_path) -> None:
    shared, run_dir = tmp_path / "shared", tmp_path / "run"

    def cache(presets: list[str], flags: dict[str, str], share: Path | None = shared) -> str:
        uses = resolve(presets, flags, roots=[tmp_path], cwd=tmp_path, run_dir=run_dir, shared_cache=share)
        return next(u.value for u in uses if u.name == "TORCHINDUCTOR_CACHE_DIR")

    fresh = str(run_dir / "inductor_cache")
    assert cache([], {}) == cache(["sanity"], {}) == cache(["kernel_names"], {}) == str(shared)
    assert cache([], {PRINTER: "2", "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT": "k1"}) == str(shared)
    assert cache(["logs"], {}) == cache(["trace"], {}) == cache(["sanity", "minifier"], {}) == fresh
    assert cache(["sanity"], {}, share=None) == fresh, "outside a triage every rerun keeps its fresh cache"
    given = tmp_path / "mine"
    given.mkdir()
    assert cache([], {"TORCHINDUCTOR_CACHE_DIR": str(given)}) == str(given), "a cache the caller names wins"
    uses = resolve(["logs"], {}, roots=[tmp_path], cwd=tmp_path, run_dir=run_dir, shared_cache=shared)
    assert cache_unsafe(uses) == ["TORCH_LOGS"]


def _rebuild(tmp_path: Path, shared: Path, flags: dict[str, str]) -> RunResult:
    """examples/index_oob.py compiled and run (it fails on its planted id) in the shared cache."""
    req = RerunRequest(argv=[sys.executable, str(EXAMPLE), "--package", str(tmp_path / "index_oob.pt2")],
                       cwd=str(tmp_path), flags=flags, timeout_s=600, forensics=False)
    return rerun.execute(rerun.plan(req, [ROOT, tmp_path], shared_cache=shared))


def _text(r: RunResult) -> str:
    return Path(r.log_path).read_text(errors="replace") if r.log_path else ""


@pytest.mark.spawns
@pytest.mark.compiles
@pytest.mark.timeout(1200)
def test_a_shared_cache_serves_a_printer_rebuild_and_a_plain_one_after_it_each_their_own_code(tmp_path) -> None:
    shared = tmp_path / "shared"
    runs = [("plain", {}), ("printer", {PRINTER: "3"}), ("plain again", {})]
    results = {}
    for name, flags in runs:
        r = results[name] = _rebuild(tmp_path, shared, flags)
        cache = next(u.value for u in r.flags if u.name == "TORCHINDUCTOR_CACHE_DIR")
        assert cache == str(shared), name
        assert r.compile and r.compile.compiled is True, f"{name}: a rebuild in a used cache is still seen"
        assert r.classification and r.classification.pattern == "triton_index_out_of_bounds", name
        print(f"{name}: {r.duration_s:.1f} s")
    assert LAUNCH_MARK not in _text(results["plain"])
    assert LAUNCH_MARK in _text(results["printer"]), "the printer rebuild must not reuse the plain build's code"
    assert LAUNCH_MARK not in _text(results["plain again"]), "the plain rebuild must not reuse the printer's code"
    # the keys separate the two configurations and match identical ones: two wrappers, not three
    wrappers = sorted(p.name for p in shared.rglob("*.wrapper.cpp"))
    assert len(wrappers) == 2, wrappers


LOAD_AND_RUN = '''\
import sys
import torch
model = torch._inductor.aoti_load_package(sys.argv[1])
torch.manual_seed(0)
print("sum", round(float(model(torch.randn(4, 8)).sum()), 5))
'''


def _probe_files(r: RunResult) -> list[Path]:
    """The vector-ISA probes the load built (torch._inductor.cpu_vec_isa's check code, `__avx_chk_kernel`, one per
    ISA tried). A CPU that reports avx512_bf16 or avx512_vnni also gets those features' own check kernels, which
    TORCHINDUCTOR_VEC_ISA_OK does not skip (seen on a Xeon with both, torch 2.13)."""
    cache = Path(next(u.value for u in r.flags if u.name == "TORCHINDUCTOR_CACHE_DIR"))
    return sorted(p for p in cache.rglob("*.so") if "__avx_chk_kernel" in _source_of(p)) if cache.is_dir() else []


def _source_of(so: Path) -> str:
    cpp = so.with_suffix(".cpp")
    return cpp.read_text(errors="replace") if cpp.is_file() else ""


@pytest.mark.spawns
@pytest.mark.compiles
def test_a_load_only_rerun_with_the_load_only_preset_skips_the_isa_probe_and_computes_the_same(tmp_path) -> None:
    from pkgs import build_example

    pkg = build_example("static_shape_mismatch")  # exported with x [4, 8]: called right here
    script = tmp_path / "load_and_run.py"
    script.write_text(LOAD_AND_RUN)

    def load(presets: list[str]) -> RunResult:
        req = RerunRequest(argv=[sys.executable, str(script), str(pkg)], cwd=str(tmp_path), presets=presets,
                           timeout_s=300, forensics=False)
        return rerun.execute(rerun.plan(req, [ROOT, tmp_path]))

    plain, fast = load([]), load(["load_only"])
    for r in (plain, fast):
        assert r.exit_code == 0 and r.status == "ok", r.stderr_tail
    assert "sum " in plain.stdout_tail and plain.stdout_tail.strip() == fast.stdout_tail.strip()
    assert fast.flags and any(u.name == "TORCHINDUCTOR_VEC_ISA_OK" and u.value == "1" for u in fast.flags)
    # without it the load compiled the ISA probes into its fresh cache; with it none of them
    assert _probe_files(plain) and not _probe_files(fast)
    print(f"load and run, 2.13 CPU, fresh cache: {plain.duration_s:.1f} s; with load_only: {fast.duration_s:.1f} s")


@pytest.mark.spawns
@pytest.mark.compiles
def test_a_triage_probes_the_runtime_beside_its_baseline_and_its_load_only_rerun_skips_the_isa_probe(
        tmp_path) -> None:
    import shutil

    from aoti_debug.triage.engine import triage
    from aoti_debug.triage.model import TriageRequest
    from pkgs import build_example

    pkg = tmp_path / "dtype_mismatch.pt2"  # a copy inside the root (tests/.build may be a symlink out of it)
    shutil.copy2(build_example("dtype_mismatch"), pkg)
    argv = [sys.executable, str(ROOT / "examples" / "dtype_mismatch.py"), "--package", str(pkg), "--load-only"]
    # without the calls capture check_parity cannot see the int32 ids, so the load-only sanity rerun runs
    r = triage(TriageRequest(argv=argv, cwd=str(tmp_path), capture_calls=False), [ROOT, tmp_path])
    rc = r.root_cause
    assert r.pattern == "input_shape_mismatch" and rc and rc.named and (rc.kind, rc.input_index) == ("dtype", 1)
    parity = next(s for s in r.steps if s.tool == "check_parity")
    assert parity.status == "done" and any("runtime probed beside the baseline run" in f for f in parity.found)
    sanity = next(s for s in r.steps if s.preset == "sanity")
    # the command builds nothing (seen by the baseline), so the sanity rerun only loads: no ISA probe
    assert sanity.flags.get("TORCHINDUCTOR_VEC_ISA_OK") == "1" and sanity.flags.get("AOTI_RUNTIME_CHECK_INPUTS") == "1"
    print("steps (s):", [(s.tool, s.preset, s.cost_s) for s in r.steps], "total", r.elapsed_s)
