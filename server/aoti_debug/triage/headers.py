"""A header the compiler could not find, and what provides it (data/headers.yaml)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from aoti_debug.common.yamlio import load_yaml

DATA = Path(__file__).resolve().parent.parent / "data" / "headers.yaml"
# gcc, clang and MSVC: `fatal error: Python.h: No such file or directory`, `fatal error: 'omp.h' file not found`,
# `fatal error C1083: Cannot open include file: 'Python.h': No such file or directory`.
MISSING_RX = re.compile(r"fatal error(?: C1083)?: (?:Cannot open include file: )?'?(?P<header>[\w./+-]+)'?:? "
                        r"(?:No such file or directory|file not found)")


class Provider(BaseModel):
    """What provides a header, per platform family."""

    model_config = ConfigDict(extra="forbid")
    header: str
    what: str
    debian: str | None = None
    fedora: str | None = None
    conda: str | None = None
    pip: str | None = None
    macos: str | None = None

    def install(self) -> str:
        ways = [f"{k}: {v}" for k in ("debian", "fedora", "conda", "pip", "macos") if (v := getattr(self, k))]
        return f"{self.what} ({'; '.join(ways)})"


@functools.cache
def providers() -> list[Provider]:
    return [Provider.model_validate(x) for x in load_yaml(DATA.read_text(encoding="utf-8"))]


def missing_header(text: str) -> str | None:
    """The header a compiler error line says it could not find."""
    m = MISSING_RX.search(text)
    return m.group("header") if m else None


def provider(header: str) -> Provider | None:
    """What provides the header (matched on its path as written, e.g. hip/hip_runtime.h), if the data knows."""
    return next((p for p in providers() if re.search(p.header, header)), None)


def facts(text: str) -> dict[str, str]:
    """missing_header and header_package facts for a fix condition, when the text names a missing header."""
    h = missing_header(text)
    p = provider(h) if h else None
    return {"missing_header": h, **({"header_package": p.install()} if p else {})} if h else {}
