"""The flag allow-list and presets from guides/debug-flags.md, and what a request may and may not set."""

from __future__ import annotations

import shutil

import pytest
from aoti_debug.common.errors import BadInput
from aoti_debug.runs.flags import DIR_FLAGS, WRAPPER_PRESETS, flag_table, resolve
from aoti_debug.runs.forensics import find_debugger
from aoti_debug.runs.memcheck import find_sanitizer

TABLE = flag_table()
ISSUE_FLAGS = {  # the allow-list issue 4 asks for
    "AOTI_RUNTIME_CHECK_INPUTS", "TORCHINDUCTOR_NAN_ASSERTS", "PYTORCH_NO_CUDA_MEMORY_CACHING", "CUDA_LAUNCH_BLOCKING",
    "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT", "TORCH_LOGS",
    "TORCH_TRACE", "TORCH_SHOW_CPP_STACKTRACES", "PYTHONFAULTHANDLER", "DUMP_AOTI_MINIFIER",
    "TORCHINDUCTOR_CACHE_DIR", "CXX", "CUDA_VISIBLE_DEVICES",
    "TORCHINDUCTOR_VEC_ISA_OK",  # issue 15: triage's load-only reruns skip the ISA probe
    "AOTI_DEBUG_CALLS_SAVE_BYTES",  # issue 17: the calls preset saves a call's inputs in full only when asked
    "AOTI_DEBUG_REUSE_ISA_PROBE",  # issue 15: a triage's reruns reuse its baseline's ISA probe answers
}
ISSUE_PRESETS = {"sanity", "deterministic", "kernel_names", "cpp_stacktraces", "logs", "trace", "faulthandler",
                 "minifier", "backtrace", "memcheck"}


@pytest.fixture
def where(tmp_path):
    return {"roots": [tmp_path], "cwd": tmp_path, "run_dir": tmp_path / "run"}


def test_the_table_holds_exactly_the_allow_list_and_every_preset() -> None:
    names = {f.name for f in TABLE.flags}
    assert {"missing": ISSUE_FLAGS - names, "extra": names - ISSUE_FLAGS} == {"missing": set(), "extra": set()}
    assert ISSUE_PRESETS - set(TABLE.presets) == set()


@pytest.mark.parametrize("name, phase", [
    ("AOTI_RUNTIME_CHECK_INPUTS", "runtime"),  # runtime in 2.11/2.13, whatever older docs say
    ("CUDA_LAUNCH_BLOCKING", "runtime"),
    ("PYTORCH_NO_CUDA_MEMORY_CACHING", "runtime"),
    ("AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "compile"),
    ("AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT", "compile"),
    ("TORCHINDUCTOR_NAN_ASSERTS", "compile"),
    ("CXX", "compile"),
])
def test_each_flag_has_the_phase_in_which_it_acts(name, phase) -> None:
    assert TABLE.by_name[name].phase == phase


@pytest.mark.parametrize("preset, expected", [
    ("sanity", {"AOTI_RUNTIME_CHECK_INPUTS": "1", "TORCHINDUCTOR_NAN_ASSERTS": "1"}),
    ("deterministic", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "CUDA_LAUNCH_BLOCKING": "1"}),
    ("kernel_names", {"AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "3"}),
    ("logs", {"TORCH_LOGS": "+inductor,output_code"}),
    ("minifier", {"DUMP_AOTI_MINIFIER": "1"}),
])
def test_presets_expand_to_their_flags(preset, expected, where) -> None:
    uses = {u.name: u for u in resolve([preset], {}, **where)}
    assert {k: uses[k].value for k in expected} == expected
    assert all(uses[k].source == f"preset:{preset}" for k in expected)


def test_every_run_gets_faulthandler_and_a_fresh_cache_in_its_run_dir_unless_told_otherwise(where) -> None:
    uses = {u.name: u for u in resolve([], {}, **where)}
    assert uses["PYTHONFAULTHANDLER"].value == "1" and uses["PYTHONFAULTHANDLER"].source == "default"
    assert uses["TORCHINDUCTOR_CACHE_DIR"].value == str(where["run_dir"] / DIR_FLAGS["TORCHINDUCTOR_CACHE_DIR"])
    assert "TORCHINDUCTOR_CACHE_DIR" not in {u.name for u in resolve([], {}, fresh_cache=False, **where)}


def test_the_trace_preset_writes_into_the_run_directory(where) -> None:
    uses = {u.name: u.value for u in resolve(["trace"], {}, **where)}
    assert uses["TORCH_TRACE"] == str(where["run_dir"] / "trace")


def test_an_explicit_flag_overrides_a_preset(where) -> None:
    uses = {u.name: u for u in resolve(["kernel_names"], {"AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "2"},
                                       **where)}
    assert (uses["AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER"].value, uses[
        "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER"].source) == ("2", "flag")


@pytest.mark.parametrize("name", ["LD_PRELOAD", "PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "BASH_ENV", "cxx"])
def test_variables_outside_the_allow_list_are_refused_with_a_clear_error(name, where) -> None:
    with pytest.raises(BadInput, match=f"{name!r} is not an allowed debug flag"):
        resolve([], {name: "/tmp/x"}, **where)


@pytest.mark.parametrize("flags, message", [
    ({"AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "4"}, "is not allowed; allowed"),
    ({"TORCH_LOGS": "-dynamo"}, "starting with '-' are refused"),
    ({"AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT": "a;rm -rf /"}, "is not allowed"),
    ({"AOTI_RUNTIME_CHECK_INPUTS": "1\nLD_PRELOAD=x"}, "one line"),
    ({"CXX": "/nonexistent/g++"}, "not found"),
    ({"CXX": "/etc/passwd"}, "is not an executable file"),
    ({"TORCH_TRACE": "/etc"}, "outside the allowed roots"),
    ({"TORCHINDUCTOR_CACHE_DIR": "../../.."}, "outside the allowed roots"),
])
def test_bad_values_are_refused(flags, message, where) -> None:
    with pytest.raises(BadInput, match=message):
        resolve([], flags, **where)


def test_an_unknown_preset_is_refused_with_the_known_ones(where) -> None:
    with pytest.raises(BadInput, match="unknown preset 'fast'.*sanity"):
        resolve(["fast"], {}, **where)


def test_cxx_must_be_a_native_compiler_and_is_recorded_by_absolute_path(where, tmp_path) -> None:
    wrapper = tmp_path / "g++-wrapper"
    wrapper.write_text("#!/bin/sh\nexec g++ \"$@\"\n")
    wrapper.chmod(0o755)
    with pytest.raises(BadInput, match="is not a C\\+\\+ compiler"):
        resolve([], {"CXX": str(wrapper)}, **where)
    script = tmp_path / "my-g++"  # named like one, but a script given by path: any program could hide there
    script.write_text("#!/bin/sh\nexec g++ \"$@\"\n")
    script.chmod(0o755)
    with pytest.raises(BadInput, match="is not a native executable"):
        resolve([], {"CXX": str(script)}, **where)
    found = shutil.which("g++")
    if not found:
        pytest.skip("g++ is not installed: a bare compiler name cannot be resolved here")
    assert {u.name: u.value for u in resolve([], {"CXX": "g++"}, **where)}["CXX"] == found


def test_a_directory_flag_inside_the_roots_is_accepted(where, tmp_path) -> None:
    uses = {u.name: u.value for u in resolve([], {"TORCH_TRACE": "traces"}, **where)}
    assert uses["TORCH_TRACE"] == str((tmp_path / "traces").resolve())


# The function that finds each wrapper preset's tool on PATH.
FINDERS = {"backtrace": find_debugger, "memcheck": find_sanitizer}


def test_wrapper_presets_are_in_the_table_and_name_exactly_the_tools_their_finder_looks_for(
        tmp_path, monkeypatch) -> None:
    assert set(WRAPPER_PRESETS) <= set(TABLE.presets) and set(WRAPPER_PRESETS) == set(FINDERS)
    monkeypatch.setenv("PATH", str(tmp_path))
    for preset, tools in WRAPPER_PRESETS.items():
        assert FINDERS[preset]() is None, preset  # nothing on PATH: nothing found
        for tool in tools.split(" or "):
            exe = tmp_path / tool
            exe.write_text("#!/bin/sh\n")
            exe.chmod(0o755)
            assert FINDERS[preset]() == str(exe), (preset, tool)  # each tool the text names is one it finds
            exe.unlink()
