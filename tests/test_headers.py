"""A header the compiler could not find, named with what provides it: real g++ runs on a file that includes
headers this machine lacks (Python.h without the -I torch passes, cuda_runtime.h without a CUDA toolkit)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from aoti_debug.classify.engine import classify_text
from aoti_debug.triage import headers
from aoti_debug.triage.causes import from_classification

pytestmark = pytest.mark.spawns


# Inductor names the C++ it writes by a hash of its contents (c + 51 base32 characters), which is how a compiler's
# diagnostic alone shows generated code (a project's own file's error would be its build's, not a compiled model's).
GENERATED = "c" + "k7qzx3m2vwa5yb4nf6hd2j3lp5rt7cge4s6o2iuq3ya5xwz7bd4" + ".cpp"


def compile_including(tmp_path: Path, header: str) -> str:
    """g++'s own output for a file Inductor could have written whose only line includes `header` (no -I flags)."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed")
    src = tmp_path / GENERATED
    src.write_text(f"#include <{header}>\nint main() {{ return 0; }}\n")
    out = subprocess.run([gxx, "-c", str(src), "-o", str(tmp_path / "x.o")], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    if out.returncode == 0:
        pytest.skip(f"{header} is installed here: nothing is missing")
    return out.stderr


@pytest.mark.parametrize(("header", "provided_by"), [("Python.h", "python3-dev"), ("cuda_runtime.h", "CUDA toolkit")])
def test_a_missing_header_is_named_with_its_package_and_the_fix_installs_it(tmp_path, header, provided_by) -> None:
    log = compile_including(tmp_path, header)
    assert headers.missing_header(log) == header
    c = classify_text(log)
    rc = from_classification(c, 2)
    assert provided_by in rc.summary, (c.pattern, rc.summary)
    assert rc.fixes and rc.fixes[0].startswith("Install ") and provided_by in rc.fixes[0], rc.fixes
    assert not any("Inductor wrote invalid C++" in f for f in rc.fixes)  # not a codegen bug, whoever's file it is


def test_a_header_the_data_does_not_know_is_named_without_a_package(tmp_path) -> None:
    log = compile_including(tmp_path, "my_shim_ops.h")
    assert headers.missing_header(log) == "my_shim_ops.h" and headers.provider("my_shim_ops.h") is None
    rc = from_classification(classify_text(log), 2)
    assert "my_shim_ops.h is not on the include path" in rc.summary, rc.summary
    assert any(f.startswith("Add the directory that holds my_shim_ops.h") for f in rc.fixes), rc.fixes


def test_every_provider_entry_names_a_header_pattern_and_a_way_to_install() -> None:
    for p in headers.providers():
        assert p.install() != f"{p.what} ()", p
    assert headers.provider("hip/hip_runtime.h").what == "the ROCm HIP headers"
    assert headers.missing_header("x.cpp:1:10: fatal error: 'omp.h' file not found") == "omp.h"
