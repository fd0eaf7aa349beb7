"""The CLI's answer to options it cannot use: one line on stderr and exit 2, never an internal error."""

from __future__ import annotations

import pytest
from aoti_debug.cli import EXIT_BAD_INPUT
from aoti_debug.cli import main as cli_main
from aoti_debug.common.errors import from_validation
from aoti_debug.runs.model import RerunRequest


def test_an_option_the_request_model_refuses_is_one_line_of_bad_input_naming_the_field(tmp_path, capsys) -> None:
    code = cli_main(["rerun", "--root", str(tmp_path), "--timeout", "-5", "--", "python", "-c", "pass"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_BAD_INPUT
    assert err == ["aoti-debug: error: timeout_s: Input should be greater than 0"]


def test_a_validation_error_becomes_bad_input_with_the_field_and_how_many_more() -> None:
    with pytest.raises(Exception) as caught:
        RerunRequest(argv=[], timeout_s=-1)
    bad = from_validation(caught.value, "rerun request")
    assert str(bad).startswith("rerun request argv: ") and str(bad).endswith("(and 1 more)")
