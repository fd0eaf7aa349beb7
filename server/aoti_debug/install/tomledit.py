"""Replace one TOML table (with its sub-tables) in a file's text, leaving every other line as it was.

Python has no TOML writer in the standard library, and a round trip through a parser would drop
comments and reformat the user's file. So the edit is textual: find the headers of the table and its
sub-tables, swap those lines for a freshly rendered block, and keep everything else byte for byte.
Callers check the result with a real parser (register.py does, with tomllib).
"""

from __future__ import annotations

import json
import re

# A table or array-of-tables header line: [a.b."c d"] or [[a.b]], with an optional trailing comment.
_HEADER = re.compile(r"^\s*\[(\[?)\s*(?P<key>[^\[\]#]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY_PART = re.compile(r"""\s*(?:(?P<bare>[A-Za-z0-9_-]+)|"(?P<basic>(?:[^"\\]|\\.)*)"|'(?P<literal>[^']*)')"""
                       r"\s*(?P<dot>\.|$)")
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
# Lines with their endings, split on \n only (str.splitlines also splits on \f, \x1c, ...).
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")


def header_key(line: str) -> tuple[str, ...] | None:
    """The dotted key of a table header line, unquoted; None when the line is not a header."""
    m = _HEADER.match(line)
    if not m:
        return None
    key, parts, pos = m.group("key"), [], 0
    while pos < len(key):
        part = _KEY_PART.match(key, pos)
        if not part:
            return None
        if part.group("bare") is not None:
            parts.append(part.group("bare"))
        elif part.group("basic") is not None:
            try:
                parts.append(json.loads(f'"{part.group("basic")}"'))
            except ValueError:
                parts.append(part.group("basic"))
        else:
            parts.append(part.group("literal"))
        pos = part.end()
        if not part.group("dot"):
            break
    return tuple(parts) if pos == len(key) else None


def _is_trailing(line: str) -> bool:
    """Blank and comment lines at the end of a section belong to whatever follows, not to the table."""
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def find_regions(lines: list[str], name: tuple[str, ...]) -> list[tuple[int, int]]:
    """[start, end) line ranges holding table `name` and its sub-tables; adjacent sections form one range.

    Blank and comment lines ending a range are left out: they belong to whatever follows.
    """
    heads = [(i, k) for i, line in enumerate(lines) if (k := header_key(line)) is not None]
    regions: list[tuple[int, int]] = []
    prev_owned = False
    for n, (start, key) in enumerate(heads):
        owned = key[: len(name)] == name
        if owned:
            stop = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
            while stop > start + 1 and _is_trailing(lines[stop - 1]):
                stop -= 1
            if prev_owned:  # a sub-table right after the table (or another sub-table): one range
                regions[-1] = (regions[-1][0], stop)
            else:
                regions.append((start, stop))
        prev_owned = owned
    return regions


def replace_table(text: str, name: tuple[str, ...], block: str) -> str:
    """Text with every section of table `name` removed and `block` put where the first one was (or appended)."""
    lines = _LINES.findall(text)
    regions = find_regions(lines, name)
    if not regions:
        if not text:
            return block
        sep = "" if text.endswith("\n") else "\n"
        gap = "" if text.endswith("\n\n") or not text.strip() else "\n"
        return text + sep + gap + block
    out, pos = [], 0
    for n, (start, stop) in enumerate(regions):
        out += lines[pos:start]
        if n == 0:
            out += _LINES.findall(block)
        pos = stop
    out += lines[pos:]
    return "".join(out)


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        # JSON string escapes are valid TOML basic-string escapes; TOML also forbids a raw DEL.
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot render {type(v).__name__} as a TOML value")


def _key(k: str) -> str:
    return k if _BARE.match(k) else _value(k)


def render_table(name: tuple[str, ...], values: dict, comment: str = "") -> str:
    """A [name] table of scalars and string lists; dict values become [name.key] sub-tables after it."""
    lines = ["[" + ".".join(_key(p) for p in name) + "]"]
    if comment:
        lines.append(f"# {comment}")
    lines += [f"{_key(k)} = {_value(v)}" for k, v in values.items() if not isinstance(v, dict)]
    for k, sub in values.items():
        if isinstance(sub, dict):
            lines += ["", "[" + ".".join(_key(p) for p in (*name, k)) + "]"]
            lines += [f"{_key(sk)} = {_value(sv)}" for sk, sv in sub.items()]
    return "\n".join(lines) + "\n"
