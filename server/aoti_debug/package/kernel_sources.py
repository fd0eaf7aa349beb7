"""Find a model's generated sources: in a .pt2 (read in memory), an extracted package, or an inductor cache folder."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from aoti_debug.common.errors import BadInput
from aoti_debug.common.roots import open_regular
from aoti_debug.package.pt2zip import MemberError, open_pt2

# A shared inductor cache can hold many thousands of files: walk at most this many.
MAX_WALK = 50_000
# Generated sources are at most a few MiB; anything bigger is not one.
MAX_SOURCE_BYTES = 32 * 2**20
# Triton kernel files are small; reading thousands of them must stay cheap.
MAX_PY_BYTES = 2 * 2**20
MAX_PY_FILES = 5000
# All source text one call holds (a crafted package of many large compressible members must not cost GBs).
MAX_SOURCES_BYTES = 128 * 2**20


@dataclass
class Source:
    """One source file: where it came from (a path, or package.pt2:member) and its text."""

    path: str
    text: str
    kind: str  # wrapper, kernel_cpp, triton_py
    mtime: float = 0.0


@dataclass
class Sources:
    origin: str  # package, extracted, cache
    root: str
    wrappers: list[Source] = field(default_factory=list)
    kernel_cpps: list[Source] = field(default_factory=list)
    triton_pys: list[Source] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def all(self) -> list[Source]:
        return [*self.wrappers, *self.kernel_cpps, *self.triton_pys]


def _is_wrapper(name: str, text: str) -> bool:
    if name.endswith(".wrapper.cpp"):
        return True
    return name.endswith(".cpp") and not name.endswith(".kernel.cpp") and (
        "AOTInductorModel::run_impl" in text or "inputs_info_" in text)


def from_package(path: Path, model: str | None = None, within: list[Path] | None = None) -> Sources:
    src = Sources(origin="package", root=str(path))
    with open_pt2(path, within, max_total=MAX_SOURCES_BYTES) as arc:
        models = arc.models()
        if not models:
            raise BadInput(f"{path} holds no AOTI model (no data/aotinductor/<model>/ folder)")
        name = model or ("model" if "model" in models else next(iter(models)))
        if name not in models:
            raise BadInput(f"{path} has no model {name!r}; models: {', '.join(models)}")
        if len(models) > 1:
            src.notes.append(f"{len(models)} models in the package; read '{name}'")
        held = 0
        for member in models[name].ending(".cpp", ".py"):
            try:
                text = arc.read_text(member, min(MAX_SOURCE_BYTES, MAX_SOURCES_BYTES - held))
            except MemberError as exc:
                src.notes.append(str(exc))
                continue
            held += sys.getsizeof(text)  # what the text costs in memory (non-ASCII text takes 2-4 bytes a char)
            if held > MAX_SOURCES_BYTES:
                src.notes.append(f"stopped at {member}: the sources pass the {MAX_SOURCES_BYTES}-byte budget")
                break
            where = f"{path}:{member}"
            if _is_wrapper(member, text):
                src.wrappers.append(Source(where, text, "wrapper"))
            elif member.endswith(".cpp"):
                src.kernel_cpps.append(Source(where, text, "kernel_cpp"))
            elif "@triton.jit" in text:
                src.triton_pys.append(Source(where, text, "triton_py"))
    return src


def _read(p: Path, limit: int, within: list[Path]) -> tuple[str, float] | None:
    """A file's text and mtime: a regular file inside within (checked on the descriptor), at most limit bytes."""
    with open_regular(p, within, what="source") as f:
        st = os.fstat(f.fileno())
        if st.st_size > limit:
            return None
        return f.read(limit).decode("utf-8", errors="replace"), st.st_mtime


def from_folder(path: Path) -> Sources:
    """An extracted package (has data/aotinductor/) or an inductor cache (<hash>/<hash>.wrapper.cpp, xy/<hash>.py).

    Every file is opened without blocking (a FIFO is skipped) and must still lie inside the named folder once
    open (a directory swapped for a link mid-walk is not followed out of it)."""
    extracted = any(path.glob("data/aotinductor")) or any(path.glob("*/data/aotinductor"))
    src = Sources(origin="extracted" if extracted else "cache", root=str(path))
    folder = [path.resolve()]
    seen, total = 0, 0
    for dirpath, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            seen += 1
            if seen > MAX_WALK:
                src.notes.append(f"stopped after {MAX_WALK} files: point at a smaller folder")
                return _newest_first(src)
            if not name.endswith((".cpp", ".py")):
                continue
            p = Path(dirpath) / name
            if p.is_symlink():  # never follow a link out of the folder the caller was allowed to name
                continue
            if name.endswith(".py") and len(src.triton_pys) >= MAX_PY_FILES:
                continue
            try:
                got = _read(p, MAX_PY_BYTES if name.endswith(".py") else MAX_SOURCE_BYTES, folder)
            except (BadInput, OSError) as exc:
                src.notes.append(f"skipped {name}: {exc}")
                continue
            if got is None:
                continue
            text, mtime = got
            total += sys.getsizeof(text)
            if total > MAX_SOURCES_BYTES:
                src.notes.append(f"stopped: the sources pass the {MAX_SOURCES_BYTES}-byte budget; point at a "
                                 "smaller folder")
                return _newest_first(src)
            if name.endswith(".py"):
                if "@triton.jit" in text:
                    src.triton_pys.append(Source(str(p), text, "triton_py", mtime))
            elif _is_wrapper(name, text):
                src.wrappers.append(Source(str(p), text, "wrapper", mtime))
            else:
                src.kernel_cpps.append(Source(str(p), text, "kernel_cpp", mtime))
    return _newest_first(src)


def _newest_first(src: Sources) -> Sources:
    """A cache shared by several builds: the newest wrapper first."""
    src.wrappers.sort(key=lambda s: -s.mtime)
    return src


def locate(path: str | Path, model: str | None = None, within: list[Path] | None = None) -> Sources:
    """Sources of a package, an extracted package folder or an inductor cache folder; BadInput if none.
    within: the folders every file read must lie in (the server's roots)."""
    p = Path(path).expanduser()
    if not p.exists():
        raise BadInput(f"no such package or folder: {p}")
    src = from_folder(p) if p.is_dir() else from_package(p, model, within)
    if not src.wrappers and not src.kernel_cpps:
        raise BadInput(f"no generated AOTI sources (*.wrapper.cpp, *.kernel.cpp) in {p}: pass the .pt2, the folder "
                       "it was extracted to, or the TORCHINDUCTOR_CACHE_DIR of the build")
    if not src.wrappers:
        src.notes.append("no wrapper.cpp: call sites, shape symbols and input guards are unknown")
    return src
