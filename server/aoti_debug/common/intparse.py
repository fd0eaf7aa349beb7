"""Integers read from logs and generated sources: bounded digit counts, never int()'s digit-limit ValueError.

A log or a package is client input: a 5000-digit number in it must not raise (int() refuses more than 4300
digits) nor cost quadratic time. No size, index, line or exit status we reason about has more than 40 digits.
"""

from __future__ import annotations

MAX_DIGITS = 40


def to_int(text: str | bytes | None, base: int = 10) -> int | None:
    """text as an int (sign, surrounding blanks, '_' and ',' separators allowed); None if it is none or too long."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("ascii", errors="replace")
    t = text.strip().replace(",", "").replace("_", "")
    if len(t.lstrip("+-")) > MAX_DIGITS or not t:
        return None
    try:
        return int(t, base)
    except ValueError:
        return None


def ints(items: list[str] | list[bytes]) -> list[int] | None:
    """Every item as an int; None when any is not one (a shape with an absurd dimension is no shape)."""
    out = [to_int(x) for x in items]
    return None if any(v is None for v in out) else out  # type: ignore[return-value]
