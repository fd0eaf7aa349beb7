"""Every fixture log says where it came from: torch, the device, the command, and the script that wrote it (or
the public URL it quotes); a header form is accepted only where the script it names really writes it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
# Fixture logs (a glob under tests/fixtures/) -> the script that writes their header, and a constant part of that
# header which the script's source must contain; None: each log names its writer on its `# source:` line.
WRITERS = {
    "logs/*.log": None,
    "forensics/*.log": None,
    "culprit/*.log": None,
    "gpu_capture/logs/*.log": ("tests/gpu/capture.py", "aoti-debug GPU capture, job "),
    "gpu_triage_suite/logs/*/step*.log": ("tests/gpu/triage_suite.py", "aoti-debug GPU triage suite: example "),
    "gpu_nan_checks/*.log": ("tests/gpu/nan_checks.sh", "torch: "),
    "gpu_printer/*.log": ("tests/gpu/triage_suite.py", "aoti-debug GPU triage suite: example "),
}
# Kept beside a run, never read as evidence: a suite child's own output (empty when it succeeded), the MCP server's
# stderr.
NOT_EVIDENCE = ("gpu_triage_suite/logs/*.suite.log",)
# A `# source:` line names one of these scripts (which write the header) or a public URL.
SOURCE = re.compile(r"tests/(?:make_fixture_logs|culprit_fixture_logs|gpu/capture_memcheck|gpu/verify_forensics)\.py|https://\S+")
TORCH = re.compile(r"torch:? \d+\.\d+\.\d+")
DEVICE = re.compile(r"^# (?:gpu|host|device): |NVIDIA ", re.M)


def header(path: Path) -> str:
    lines = []
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        if not line.startswith("#") or line.startswith("#=MATCH=#"):
            break
        lines.append(line)
    return "\n".join(lines)


def fixture_logs() -> list[tuple[str, Path]]:
    return [(glob, p) for glob in WRITERS for p in sorted(FIXTURES.glob(glob))]


def test_every_log_under_the_fixtures_is_a_checked_fixture_or_named_as_not_evidence() -> None:
    every = {p for p in FIXTURES.rglob("*.log")}
    covered = [p for _, p in fixture_logs()] + [p for g in NOT_EVIDENCE for p in FIXTURES.glob(g)]
    assert every - set(covered) == set(), "add the folder to WRITERS with the script that writes its headers"
    assert len(covered) == len(set(covered)), "a log matched by two globs"


@pytest.mark.parametrize(("glob", "path"), fixture_logs(), ids=lambda x: x if isinstance(x, str) else
                         str(x.relative_to(FIXTURES)))
def test_a_fixture_header_names_torch_the_device_the_command_and_its_writer(glob, path) -> None:
    head = header(path)
    if re.search(r"^# source: https://", head, re.M):
        # quoted from a public thread: each line says what the thread states, or that it does not state it
        for key in ("torch", "device", "command"):
            assert re.search(rf"^# {key}: \S", head, re.M), f"{path.name}: no '# {key}:' line in its header"
        return
    assert TORCH.search(head), f"{path.name}: no torch version in its header"
    assert DEVICE.search(head), f"{path.name}: no '# gpu:', '# host:' or GPU name in its header"
    assert re.search(r"^# command: \S", head, re.M), f"{path.name}: no '# command:' line in its header"
    writer = WRITERS[glob]
    if writer is None:
        source = re.search(r"^# source: (.*)$", head, re.M)
        assert source and SOURCE.search(source.group(1)), f"{path.name}: '# source:' names no script or URL"
    else:
        script, form = writer
        assert head.startswith(f"# {form}"), f"{path.name}: not the header {script} writes"
        assert form in (ROOT / script).read_text(), f"{script} no longer writes '{form}'"


def test_the_scripts_named_as_sources_exist() -> None:
    for name in ("tests/make_fixture_logs.py", "tests/culprit_fixture_logs.py", "tests/gpu/capture_memcheck.py",
                 "tests/gpu/verify_forensics.py"):
        assert (ROOT / name).is_file(), name
