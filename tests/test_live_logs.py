"""Real CPU AOTI failures, run now and classified live: the pattern and the fields that name the cause.

The cases are tests/make_fixture_logs.py's `live=True` ones (the same runs make the CPU golden
fixtures). Their packages are the examples' own, cached in tests/.build and shared with the other
tests (dtype_mismatch, static_shape_mismatch, dynamic_above_max: at most three compiles); the C++
compile error fails in g++ before any package exists, and the export failure compiles nothing.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import make_fixture_logs as mfl
import pytest
from aoti_debug.classify.engine import classify_text

pytestmark = [pytest.mark.spawns, pytest.mark.compiles]
# Two runs at a time: most of a load-only run is importing torch and loading the package.
WORKERS = 2
# The first test builds up to three packages (20-60 s each on 2 cores) and runs every case.
SETUP_TIMEOUT_S = 1200


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, mfl.Run]:
    for key in sorted({c.package for c in mfl.LIVE if c.package}):
        mfl.package(key)  # build (or find) the packages one at a time

    def one(case: mfl.Case) -> mfl.Run:
        return mfl.run_case(case, tmp_path_factory.mktemp(case.name))

    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip([c.name for c in mfl.LIVE], pool.map(one, mfl.LIVE), strict=True))


@pytest.mark.timeout(SETUP_TIMEOUT_S)
@pytest.mark.parametrize("case", mfl.LIVE, ids=lambda c: c.name)
def test_a_real_cpu_failure_is_classified_by_its_cause(case, runs) -> None:
    run = runs[case.name]
    assert run.exit_status != 0, run.log[-3000:]
    result = classify_text(run.log, run.exit_status)
    assert result.pattern == case.pattern, (result.pattern, [e.text for e in result.evidence], run.log[-3000:])
    assert {k: result.fields.get(k) for k in case.fields} == case.fields, result.fields


@pytest.mark.timeout(SETUP_TIMEOUT_S)
def test_the_first_compiler_error_in_the_broken_header_is_the_one_reported(runs) -> None:
    run = runs["cpu_truncated_omp_header"]
    result = classify_text(run.log, run.exit_status)
    assert result.fields["source_file"].endswith("/include/omp.h"), result.fields
    assert result.evidence[0].text.startswith("torch._inductor.exc.InductorError: CppCompileError")


@pytest.mark.timeout(SETUP_TIMEOUT_S)
def test_the_index_check_names_the_kernel_that_failed(runs) -> None:
    result = classify_text(runs["cpu_embedding_id_500"].log, 1)
    assert result.fields["kernel_file"].endswith(".kernel.cpp")
    assert any("index out of bounds: 0 <= tmp4 < 100L" in e.text for e in result.evidence)

