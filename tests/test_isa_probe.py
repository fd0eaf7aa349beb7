"""The reuse_isa_probe preset: inductor's CPU ISA probe answered once per inductor cache (the first process probes,
later ones in the same cache and environment reuse its answers), with a probe child that does not import torch where
the release's does, and the runner that installs it in front of a script. The probe is torch's own, run for real on
this CPU: torch 2.13's, and the same with the child torch 2.11 ships (quoted below from its source)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aoti_debug.probes import isa_probe
from aoti_debug.runs import rerun
from aoti_debug.runs.calls import REUSE_PROBE_FLAG
from aoti_debug.runs.rerun import RerunRequest

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "server" / "aoti_debug" / "probes" / "isa_probe.py"
# torch 2.11's VecISA._avx_py_load (torch/_inductor/cpu_vec_isa.py of that release).
CHILD_2_11 = '\nimport torch\nfrom ctypes import cdll\ncdll.LoadLibrary("__lib_path__")\n'

# Runs the real probe (valid_vec_isa_list builds and loads one test library per ISA the CPU lists), with the patch
# installed as the runners install it, and prints the ISAs it accepted and how many probe children it started.
PROBE_RUN = r"""
import importlib.util, json, subprocess, sys
if sys.argv[2]:
    from torch._inductor import cpu_vec_isa
    cpu_vec_isa.VecISA._avx_py_load = sys.argv[2]
spec = importlib.util.spec_from_file_location("isa_probe", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
notes = mod.install([])
children, imports = [], []
real = subprocess.Popen.__init__
def init(self, args, *a, **k):
    if isinstance(args, list) and len(args) > 2 and args[1] == "-c":
        if "LoadLibrary" in args[2]:
            children.append("light" if "ctypes.CDLL(sys.argv[1])" in args[2] else "own")
        elif args[2] == "import torch":
            imports.append(1)
    real(self, args, *a, **k)
subprocess.Popen.__init__ = init
from torch._inductor import cpu_vec_isa
isas = [str(i) for i in cpu_vec_isa.valid_vec_isa_list()]
print("RESULT " + json.dumps({"isas": isas, "notes": notes, "children": len(children), "kinds": sorted(set(children)),
                              "imports": len(imports), "counts": mod.COUNTS}))
"""


def _probe(cache: Path, reuse: bool, child: str = "", **env_extra: str) -> dict:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache), **env_extra}
    env.pop("TORCHINDUCTOR_VEC_ISA_OK", None)
    env.pop(REUSE_PROBE_FLAG, None)
    if reuse:
        env[REUSE_PROBE_FLAG] = "1"
    p = subprocess.run([sys.executable, "-c", PROBE_RUN, str(PROBE), child], env=env, capture_output=True, text=True,
                       timeout=600)
    line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert p.returncode == 0 and line, p.stderr[-3000:]
    return json.loads(line.split(" ", 1)[1])


@pytest.mark.spawns
@pytest.mark.compiles
@pytest.mark.timeout(900)
def test_a_second_process_in_the_same_cache_reuses_the_first_ones_answers_and_picks_the_same_isas(tmp_path) -> None:
    cache = tmp_path / "cache"
    first = _probe(cache, reuse=True)
    if not first["children"]:
        pytest.skip("this CPU lists no vector ISA for inductor to probe")
    assert first["notes"] == ["applied: 0 answer(s) in " + str(cache / isa_probe.ANSWERS)]
    assert first["counts"] == {"reused": 0, "probed": first["children"]}, "the first process probes as torch does"
    lines = (cache / isa_probe.ANSWERS).read_text().splitlines()
    assert len(lines) == first["children"]
    second = _probe(cache, reuse=True)
    assert second["isas"] == first["isas"]
    assert second["children"] == 0 and second["counts"] == {"reused": first["children"], "probed": 0}
    own = _probe(cache, reuse=False)
    assert own["isas"] == first["isas"] and own["children"] == first["children"], "torch's own probe agrees"
    # another compiler name is another key: probed again, its answers added
    other = _probe(cache, reuse=True, CXX="/usr/bin/g++" if os.environ.get("CXX") != "/usr/bin/g++" else "g++")
    assert other["counts"]["probed"] == other["children"] > 0
    assert len((cache / isa_probe.ANSWERS).read_text().splitlines()) == 2 * len(lines)


@pytest.mark.spawns
@pytest.mark.compiles
@pytest.mark.timeout(900)
def test_with_torch_2_11s_child_the_light_child_accepts_the_same_isas_after_one_import_check(tmp_path) -> None:
    own = _probe(tmp_path / "own", reuse=False, child=CHILD_2_11)
    if not own["children"]:
        pytest.skip("this CPU lists no vector ISA for inductor to probe")
    assert own["kinds"] == ["own"] and own["imports"] == 0
    light = _probe(tmp_path / "light", reuse=True, child=CHILD_2_11)
    assert light["isas"] == own["isas"]
    assert light["kinds"] == ["light"] and light["children"] == own["children"]
    assert light["imports"] == 1, "one child checks that torch imports where the probe children run"
    recs = [json.loads(x) for x in (tmp_path / "light" / isa_probe.ANSWERS).read_text().splitlines()]
    assert {r["child"] for r in recs} == {"the light child"}
    again = _probe(tmp_path / "light", reuse=True, child=CHILD_2_11)
    assert again["isas"] == own["isas"] and again["children"] == again["imports"] == 0


def _child(code: str, lib: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code.replace(isa_probe.PLACEHOLDER, lib)], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.spawns
def test_the_light_child_fails_where_the_library_cannot_load_after_trying_torchs_own_way(tmp_path) -> None:
    lib = Path(importlib.util.find_spec("torch").submodule_search_locations[0]) / "lib"  # torch not imported here
    code = isa_probe.light_child(str(lib))
    bad = tmp_path / "not_a_library.so"
    bad.write_text("not ELF")
    r = _child(code, str(bad))
    assert r.returncode != 0
    # the grandchild's output is discarded: this error is the fallback's (import torch, then load)
    assert "OSError" in r.stderr and str(bad) in r.stderr
    ok = _child(code, str(lib / "libc10.so"))
    assert ok.returncode == 0, ok.stderr


def test_the_answers_file_keeps_only_well_formed_answers_and_the_first_for_a_key(tmp_path) -> None:
    path = tmp_path / isa_probe.ANSWERS
    path.write_text('{"key": "a", "ok": true}\n{"key": "a", "ok": false}\n{"key": "b", "ok": "yes"}\n'
                    '[1, 2]\n{"key": "c", "ok": false}\n{"key": "d", "o')
    assert isa_probe._read(str(path)) == {"a": True, "c": False}
    assert isa_probe._read(str(tmp_path / "missing")) == {}


def test_the_patch_says_why_it_does_not_apply(monkeypatch) -> None:
    module = type(sys)("cpu_vec_isa")
    assert isa_probe.patch(module).startswith("not applied: this torch has no VecISA.check_build")

    class VecISA:
        def check_build(self, code):
            return True

    module.VecISA = VecISA
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    assert isa_probe.patch(module).startswith("not applied: TORCHINDUCTOR_CACHE_DIR is not set")
    assert VecISA.check_build(VecISA(), "") is True


SCRIPT = """
import sys
print("argv", sys.argv)
print("name", __name__)
import torch._inductor.cpu_vec_isa
print("notes", sys.modules["aoti_debug_isa_probe"].NOTES)
"""


@pytest.mark.spawns
def test_the_preset_runs_a_python_script_under_the_runner_and_leaves_other_commands_as_given(tmp_path) -> None:
    script = tmp_path / "repro.py"
    script.write_text(SCRIPT)
    req = RerunRequest(argv=[sys.executable, str(script), "--x", "1"], cwd=str(tmp_path), presets=["reuse_isa_probe"],
                       timeout_s=300, forensics=False)
    r = rerun.execute(rerun.plan(req, [tmp_path]))
    text = Path(r.log_path).read_text()
    assert r.exit_code == 0, text[-2000:]
    assert f"argv ['{script}', '--x', '1']" in text and "name __main__" in text
    # the runner's hook patched the module when the script imported it, in the run's own (fresh) inductor cache
    cache = next(u.value for u in r.flags if u.name == "TORCHINDUCTOR_CACHE_DIR")
    assert f"notes ['applied: 0 answer(s) in {Path(cache) / isa_probe.ANSWERS}']" in text
    assert any(u.name == REUSE_PROBE_FLAG and u.value == "1" for u in r.flags)
    sh = tmp_path / "run.sh"
    sh.write_text("#!/bin/sh\nexit 0\n")
    sh.chmod(0o755)
    shell = RerunRequest(argv=[str(sh)], cwd=str(tmp_path), presets=["reuse_isa_probe"], timeout_s=60, forensics=False)
    r2 = rerun.execute(rerun.plan(shell, [tmp_path]))
    assert r2.exit_code == 0
    assert any("torch's own ISA probe" in w for w in r2.warnings)
