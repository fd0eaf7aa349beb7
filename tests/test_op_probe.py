"""A custom op's registration in the target Python (probes/op_probe.py, run in a real interpreter) and the built
libraries that carry its schema (a real shared library compiled by g++)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from aoti_debug.runs.op_probe import libraries_with, probe

pytestmark = pytest.mark.spawns


def test_an_op_torch_itself_registers_is_found_with_where_it_was_registered() -> None:
    facts = probe(sys.executable, "aten::add")
    assert facts.registered is True and facts.error is None
    assert any(s.startswith("aten::add.Tensor(") for s in facts.schemas) and facts.registered_at
    assert facts.sentence().startswith(f"a fresh `import torch` in {sys.executable} registers aten::add")


def test_a_project_op_is_not_registered_by_a_fresh_import_of_torch() -> None:
    facts = probe(sys.executable, "aoti_examples::scaled_add")
    assert facts.registered is False and facts.schemas == []
    assert "only importing its module or loading its library does" in facts.sentence()


def test_a_probe_that_cannot_run_says_so_instead_of_answering(tmp_path) -> None:
    facts = probe(str(tmp_path / "python3"), "aten::add")
    assert facts.registered is None and facts.error and "could not probe" in facts.sentence()


def test_the_built_library_that_carries_the_schema_is_found_and_others_are_not(tmp_path) -> None:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed")
    (tmp_path / "build").mkdir()
    for name, text in (("libmyops.so", "mylib::twice(Tensor x) -> Tensor"), ("libother.so", "other::op")):
        src = tmp_path / f"{name}.cpp"
        src.write_text(f'extern "C" const char* schema() {{ return "{text}"; }}\n')
        subprocess.run([gxx, "-shared", "-fPIC", str(src), "-o", str(tmp_path / "build" / name)], check=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert libraries_with("mylib::twice", tmp_path) == ["build/libmyops.so"]
    assert libraries_with("mylib::thrice", tmp_path) == []
