"""The textual TOML table replacement: only the named table and its sub-tables change."""

from __future__ import annotations

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser, from PyPI (a dependency there)
    import tomli as tomllib

import pytest
from aoti_debug.install.tomledit import header_key, render_table, replace_table

NAME = ("mcp_servers", "aoti-debug")
BLOCK = render_table(NAME, {"command": "new", "args": ["serve"], "env": {"K": "v"}})


@pytest.mark.parametrize(("line", "key"), [
    ("[mcp_servers.aoti-debug]", ("mcp_servers", "aoti-debug")),
    ('[ mcp_servers . "aoti-debug" ]  # quoted, spaced, commented', ("mcp_servers", "aoti-debug")),
    ("[mcp_servers.'aoti-debug'.env]", ("mcp_servers", "aoti-debug", "env")),
    ("[[profiles.fast]]", ("profiles", "fast")),
    ('[projects."/a/b.c"]', ("projects", "/a/b.c")),
    ('args = ["serve"]', None),
    ("  [\"a\"]x", None),
])
def test_header_lines_are_recognised_with_their_unquoted_key(line, key) -> None:
    assert header_key(line) == key


def test_a_comment_introducing_the_next_table_stays_with_it() -> None:
    text = '[mcp_servers.aoti-debug]\ncommand = "old"\n\n# about docs\n[mcp_servers.docs]\ncommand = "d"\n'
    new = replace_table(text, NAME, BLOCK)
    assert new == BLOCK + '\n# about docs\n[mcp_servers.docs]\ncommand = "d"\n'


def test_sections_of_the_table_apart_from_each_other_are_all_replaced_at_the_first_place() -> None:
    text = '[mcp_servers."aoti-debug"]\ncommand = "old"\n\n[other]\nx = 1\n\n[mcp_servers.aoti-debug.env]\nA = "1"\n'
    new = replace_table(text, NAME, BLOCK)
    assert new == BLOCK + '\n[other]\nx = 1\n\n'
    assert tomllib.loads(new)["mcp_servers"]["aoti-debug"]["env"] == {"K": "v"}


def test_replacing_with_the_same_block_is_a_no_op_and_appending_then_replacing_is_stable() -> None:
    text = 'model = "m"\n'
    once = replace_table(text, NAME, BLOCK)
    assert once == 'model = "m"\n\n' + BLOCK
    assert replace_table(once, NAME, BLOCK) == once
    assert replace_table("", NAME, BLOCK) == BLOCK


def test_rendered_values_round_trip_through_tomllib() -> None:
    values = {"command": 'C:\\Program Files\\x "y"\x7f', "args": ["é", "a\nb"], "n": 3, "on": True,
              "env": {"PATH-LIKE": "1", "with space": "2"}}
    assert tomllib.loads(render_table(("t", "a b"), values, "a comment")) == {"t": {"a b": values}}
