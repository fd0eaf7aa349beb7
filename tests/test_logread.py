"""Each cleaning rule acts on its examples and leaves look-alikes alone."""

from __future__ import annotations

import pytest
from aoti_debug.common import logread

DATA, _, _ = logread.load()


@pytest.mark.parametrize("rule", DATA.prefixes, ids=lambda r: r.name)
def test_each_prefix_rule_strips_its_examples_and_keeps_look_alikes(rule) -> None:
    assert rule.strip, f"{rule.name} has no strip examples"
    for line in rule.strip:
        assert logread.strip_prefixes(line) != line, line
    for line in rule.keep:
        assert logread.strip_prefixes(line) == line, line


@pytest.mark.parametrize("rule", DATA.ignore, ids=lambda r: r.name)
def test_each_ignore_rule_drops_its_boilerplate_and_keeps_look_alikes(rule) -> None:
    assert rule.drop and rule.keep, f"{rule.name} needs drop and keep examples"
    for line in rule.drop:
        assert logread.ignored_by(line) == rule.name, line
        assert rule.needle is None or rule.needle in line, (rule.needle, line)
    for line in rule.keep:
        assert logread.clean_line(line) == line, line


def test_ansi_codes_and_carriage_returns_are_removed_per_chunk() -> None:
    raw = b"\x1b[01;31m\x1b[Kerror: \x1b[m\x1b[Kboom\r\nnext\rlast\n"
    assert logread.normalize_chunk(raw) == b"error: boom\nnext\nlast\n"


def test_a_timestamped_rank_prefixed_line_is_reduced_to_its_message() -> None:
    line = "2026-11-22T01:37:42.4326797Z [rank0]: RuntimeError: CUDA error: an illegal memory access was encountered"
    assert logread.clean_line(line) == "RuntimeError: CUDA error: an illegal memory access was encountered"


def test_a_line_quoted_as_inline_code_loses_both_ticks() -> None:
    assert logread.clean_line("## `AssertionError: False is not true : Output/Grad with NaN`") == (
        "AssertionError: False is not true : Output/Grad with NaN")
    assert logread.clean_line("`torch.compile` fails") == "`torch.compile` fails"


def test_a_json_log_record_is_read_as_its_message() -> None:
    record = '{"log":"RuntimeError: CUDA error: an illegal memory access was encountered\\n","stream":"stderr"}'
    assert logread.clean_line(record) == "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert logread.clean_line('{"level": 3}') == '{"level": 3}'  # no message field: the line as it is
    # docker run -t writes the tty's CRLF and colors into the record
    colored = '{"log":"\\u001b[31mSegmentation fault (core dumped)\\u001b[0m\\r\\n"}'
    assert logread.clean_line(colored) == "Segmentation fault (core dumped)"


def test_a_log_pasted_as_an_escaped_string_gets_its_lines_back() -> None:
    lines = ["Traceback (most recent call last):", '  File "x.py", line 1', "OSError: it's C:\\new\\x.so"]
    raw = repr("\n".join(lines) + "\n").encode()  # one line: 'Traceback ...\n  File "x.py" ...\n'
    assert logread.normalize_chunk(raw).decode().split("\n")[1:3] == lines[1:]
    # a log of Windows paths is no escaped string, though C:\\Users\\nick holds a backslash-n
    paths = rb'OSError: [WinError 126] Error loading "C:\Users\nick\lib\torch\lib\nvfuser_codegen.dll"'
    assert logread.normalize_chunk(paths) == paths
    # a log with real line breaks keeps a literal backslash-n it prints
    assert logread.normalize_chunk(b"a\nprint('x\\n')\nb\n") == b"a\nprint('x\\n')\nb\n"


def test_a_line_quoted_as_a_string_loses_both_quotes() -> None:
    assert logread.clean_line("'Segmentation fault (core dumped)'") == "Segmentation fault (core dumped)"


def test_a_notebooks_saved_traceback_line_is_read_as_its_string() -> None:
    item = '      "\\u001b[0;31mRuntimeError\\u001b[0m: CUDA error: an illegal memory access was encountered",'
    assert logread.clean_line(item) == "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert logread.clean_line('"not json \\q",') == '"not json \\q",'  # not a JSON string: as it is


def test_a_prefix_rule_that_names_a_needle_is_refused_since_no_prefix_is_prefiltered() -> None:
    rule = {"name": "p", "regex": "^x ", "strip": ["x y"], "needle": "x"}
    with pytest.raises(ValueError, match="prefix rules take no needle"):
        logread.CleanData.model_validate({"prefixes": [rule], "ignore": []})
