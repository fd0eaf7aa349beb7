"""Finite wrong outputs on real CPU builds: the aoti_debug_eager hook compares captured calls with eager, and the
printer pass finds the first kernel whose output diverges (three compiles: the example's baseline, sanity, printer)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from aoti_debug.kernels.divergence import first_divergence, read_nodes
from aoti_debug.probes import isa_probe
from aoti_debug.runs import store
from aoti_debug.runs.calls import REUSE_PROBE_FLAG
from aoti_debug.runs.rerun import RerunRequest, rerun
from aoti_debug.triage.examples import run_example
from pkgs import EXAMPLES

pytestmark = [pytest.mark.spawns, pytest.mark.compiles]
PY = sys.executable


@pytest.fixture(scope="module")
def stale(tmp_path_factory):
    """The stale_constants example triaged end to end, in its own folder (its package stays there)."""
    folder = tmp_path_factory.mktemp("stale")
    mp = pytest.MonkeyPatch()
    mp.setenv("AOTI_DEBUG_HOME", str(folder / "home"))
    try:
        yield run_example("stale_constants", folder=folder / "ex"), folder / "ex"
    finally:
        mp.undo()


@pytest.mark.timeout(1200)
def test_stale_batch_norm_statistics_are_traced_to_the_first_kernel_that_diverges_from_eager(stale) -> None:
    r, _folder = stale
    base, dump = r.steps[0], r.steps[-1]
    assert r.pattern == "wrong_output" and dump.tool == "dump_kernel_inputs"
    # the sanity rebuild answers nothing parity and the printer's eager comparison do not: skipped, both reasons given
    sanity = next(s for s in r.steps if s.preset == "sanity")
    assert sanity.status == "skipped" and sanity.run_id is None
    assert "found none outside it" in sanity.skipped_because and "compares the kernels' outputs with the eager" in (
        sanity.skipped_because)
    # the capture runner reran the call eagerly: the outputs' mismatch summary, with the hook's numbers
    assert any(f.startswith("call 1 output 0: 16 / 16 elements differ from eager") for f in base.found), base.found
    rc = r.root_cause
    assert rc and rc.named and rc.level == "culprit" and rc.kind == "kernel_diverges"
    assert rc.kernel == "cpp_fused__native_batch_norm_legit_no_training_relu_0" and rc.op == "batch_norm"
    # its input is the model input, which agrees by construction; the eager node it computes names the constants
    assert "its inputs agree with eager (arg7_1)" in rc.summary and "bn.running_mean, bn.running_var" in rc.summary
    assert rc.evidence[0].startswith("cpp_fused__native_batch_norm_legit_no_training_relu_0 (launch #0) writes buf0 "
                                     "[4, 8]")
    # the guide's fix for a diverging kernel whose eager ops read constants, not the one for a miscompiled op
    assert len(rc.fixes) == 1 and rc.fixes[0].startswith("Rebuild the package from the model as it is now")
    assert "cpp_fused__native_batch_norm_legit_no_training_relu_0 computes batch_norm, relu from bn.weight" in (
        rc.fixes[0])
    assert r.example and r.example.match, r.example


@pytest.mark.timeout(1200)
def test_the_triages_runs_share_the_isa_probe_answers_its_baseline_found(stale) -> None:
    r, folder = stale
    assert r.run_id not in store._active, "run_example gave its run slot back"
    results = [json.loads(f.read_text()) for f in (folder.parent / "home").rglob("result.json")]
    runs = [x for x in results if x.get("argv") and x.get("flags")]
    assert len(runs) >= 2, "the baseline and the printer pass"
    for run in runs:  # each ran through a runner that installs the reuse, in the triage's one inductor cache
        flags = {f["name"]: f["value"] for f in run["flags"]}
        assert flags.get(REUSE_PROBE_FLAG) == "1"
        assert any(a.endswith(("calls_runner.py", "script_runner.py")) for a in run["argv"]), run["argv"]
        assert flags["TORCHINDUCTOR_CACHE_DIR"] == flags_of(runs[0])["TORCHINDUCTOR_CACHE_DIR"]
    answers = Path(flags_of(runs[0])["TORCHINDUCTOR_CACHE_DIR"]) / isa_probe.ANSWERS
    keys = [json.loads(x)["key"] for x in answers.read_text().splitlines()]
    # one answer a check for the whole triage: the printer pass found the baseline's there instead of probing again
    assert keys and len(keys) == len(set(keys))


def flags_of(run: dict) -> dict[str, str]:
    return {f["name"]: f["value"] for f in run["flags"]}


CONTROL = """
import sys
import torch
sys.path.insert(0, {examples!r})
from stale_constants import Model

torch.manual_seed(0)
built = Model().eval()  # the weights the package was built with (the example seeds 0 and builds this first)
x = torch.randn(4, 8)
for _ in range(20):  # the example's calibration draws, so the batch below is the example's batch
    torch.randn(32, 8)
batch = torch.randn(4, 8) * 3.0 + 2.0
model = torch._inductor.aoti_load_package({pkg!r})
{hook}
model(batch)
"""


def _control(tmp_path: Path, pkg: Path, hook: str):
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    (root / "repro.py").write_text(textwrap.dedent(CONTROL).format(examples=str(EXAMPLES), pkg=str(pkg), hook=hook))
    res = rerun(RerunRequest(argv=[PY, "repro.py"], cwd=str(root), presets=["calls"], timeout_s=300),
                [root, pkg.parent, EXAMPLES])
    assert res.exit_code == 0, res.stderr_tail
    return res.calls.records[1]


def test_a_hook_that_matches_the_package_records_no_mismatch_and_no_node_file(stale, tmp_path) -> None:
    _r, folder = stale
    call = _control(tmp_path, folder / "aoti_example_stale_constants_cpu.pt2", "aoti_debug_eager = built")
    assert call.eager and call.eager.outputs[0].mismatched == 0 and call.eager.nodes_file is None


def test_a_plain_callable_hook_gets_the_outputs_summary_but_no_kernel_comparison(stale, tmp_path) -> None:
    _r, folder = stale
    call = _control(tmp_path, folder / "aoti_example_stale_constants_cpu.pt2",
                    "aoti_debug_eager = lambda x: built(x) + 1.0")
    out = call.eager.outputs[0]
    assert out.mismatched == 16 and abs(out.max_abs - 1.0) < 1e-5 and call.eager.nodes_file is None


def test_kernels_whose_outputs_agree_with_eager_are_passed_over(stale, tmp_path) -> None:
    r, folder = stale
    # eager as the package was built, but with a changed output bias: the batch-norm kernel agrees; the addmm
    # that differs is named after addmm, not after the eager graph's linear, so it cannot be matched (honestly)
    call = _control(tmp_path, folder / "aoti_example_stale_constants_cpu.pt2",
                    "built.proj.bias.data += 1.0\naoti_debug_eager = built")
    assert call.eager.outputs[0].mismatched == 16 and call.eager.nodes_file
    printer_log = Path(r.steps[-1].log_path)  # the triage's level-2 pass ran on the same batch
    d = first_divergence(printer_log, read_nodes(Path(call.eager.nodes_file)))
    assert d.kernel is None and d.agreed == ["cpp_fused__native_batch_norm_legit_no_training_relu_0"]
    assert d.unmapped == ["aoti_torch_cpu_addmm_out"] and "no kernel output diverges" in d.detail


def test_without_the_hook_a_wrong_output_ends_at_its_measured_mismatch_and_the_next_step(tmp_path, monkeypatch) -> None:
    """The H200 capture of dynamic_above_max's baseline (a finite mismatch), triaged offline: nothing locates it."""
    import golden
    from aoti_debug.triage.engine import triage
    from aoti_debug.triage.model import TriageRequest
    from pkgs import ROOT

    monkeypatch.setenv("AOTI_DEBUG_HOME", str(tmp_path / "home"))
    g = golden.load(ROOT / "tests" / "fixtures" / "logs" / "wrong_output__gpu_wrong_values_no_error.log")
    log = tmp_path / "base.log"
    log.write_text(g.log)  # the real log, its in-band markers removed
    r = triage(TriageRequest(log_path=str(log), probe_runtime=False), [tmp_path])
    rc = r.root_cause
    assert r.pattern == "wrong_output" and rc and not rc.named and rc.level == "pattern"
    assert rc.kind == "output_mismatch" and rc.evidence[0].startswith("the repro's comparison: mismatched 400 / 400")
    assert "aoti_debug_eager" in rc.summary


def test_the_absolute_and_relative_greatest_differences_of_assert_close_are_two_fields() -> None:
    """The H200 suite's stale_constants baseline (torch 2.11): assert_close prints the absolute difference, then the
    relative one; the relative one once overwrote the absolute one in greatest_diff."""
    from aoti_debug.classify.engine import classify_file

    log = Path(__file__).parent / "fixtures" / "gpu_triage_suite" / "logs" / "stale_constants" / \
        "step1_rerun_with_flags.log"
    c = classify_file(log, 1)
    assert c.pattern == "wrong_output"
    assert (c.fields["greatest_diff"], c.fields["greatest_rel_diff"]) == ("2.0026416778564453", "28.792821884155273")


def test_a_step_is_covered_only_when_every_fact_it_names_was_established() -> None:
    from types import SimpleNamespace

    from aoti_debug.classify.guides import NextStep
    from aoti_debug.triage.engine import _covered

    ns = NextStep(tool="rerun_with_flags", preset="sanity", why="w",
                  unless=["inputs_within_contract", "printer_compares_eager"])
    assert _covered(SimpleNamespace(facts={"inputs_within_contract": "a", "printer_compares_eager": "b"}), ns)
    assert not _covered(SimpleNamespace(facts={"inputs_within_contract": "a"}), ns)
    assert not _covered(SimpleNamespace(facts={"inputs_within_contract": "a", "printer_compares_eager": "b"}),
                        NextStep(tool="rerun_with_flags", preset="sanity", why="w"))
