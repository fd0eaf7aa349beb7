"""Allowed roots: every path a client names (log, script, working directory) must resolve inside one."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from aoti_debug.common.errors import BadInput

ENV_ROOTS = "AOTI_DEBUG_ROOTS"
ENV_HOME = "AOTI_DEBUG_HOME"
# Longer names fail every system call with ENAMETOOLONG: refused up front, as bad input.
NAME_MAX, PATH_MAX = 255, 4096


def state_dir() -> Path:
    """Where runs and caches live: $AOTI_DEBUG_HOME, else ~/.cache/aoti-debug."""
    home = os.environ.get(ENV_HOME)
    base = Path(home) if home else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aoti-debug"
    return base.expanduser().resolve()


def runs_dir() -> Path:
    return state_dir() / "runs"


def configured_roots(cli_roots: list[str] | None = None, cwd: Path | None = None) -> list[Path]:
    """--root options plus $AOTI_DEBUG_ROOTS; the starting directory when neither is given."""
    raw = list(cli_roots or [])
    raw += [p for p in os.environ.get(ENV_ROOTS, "").split(os.pathsep) if p]
    if not raw:
        raw = [str(cwd or Path.cwd())]
    roots = []
    for r in raw:
        p = Path(r).expanduser()
        if not p.is_dir():
            raise BadInput(f"allowed root {r!r} is not a directory")
        roots.append(p.resolve())
    return roots


def check_path(path: str | Path, roots: list[Path], *, what: str = "path", base: Path | None = None) -> Path:
    """Resolve path (symlinks too) and require it inside a root or the runs folder; BadInput otherwise."""
    if isinstance(path, str) and "\x00" in path:
        raise BadInput(f"{what} contains a NUL byte")
    if len(str(path)) > PATH_MAX or any(len(part) > NAME_MAX for part in str(path).split("/")):
        raise BadInput(f"{what} is longer than the system allows ({NAME_MAX} bytes a name, {PATH_MAX} in all)")
    p = Path(path).expanduser()
    if not p.is_absolute():
        p = (base or roots[0]) / p
    resolved = p.resolve()
    if inside(resolved, [*roots, runs_dir()]):
        return resolved
    allowed = ", ".join(str(r) for r in roots)
    # The resolved path is not shown: it would reveal where a symlink points outside the roots.
    raise BadInput(f"{what} {str(path)!r} lies outside the allowed roots ({allowed}; symlinks are followed); "
                   f"start the server with --root DIR or set {ENV_ROOTS}")


def inside(path: Path, folders: list[Path]) -> bool:
    return any(path == f or path.is_relative_to(f) for f in folders)


def _fd_path(fd: int) -> Path | None:
    """Where an open descriptor really points (Linux /proc), or None where the system cannot tell."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def open_regular(path: Path, within: list[Path] | None = None, *, what: str = "file",
                 shown: str | None = None) -> BinaryIO:
    """Open a resolved path for reading; BadInput unless it is a regular file and (within given) the opened
    descriptor itself lies inside those folders.

    O_NONBLOCK: opening a FIFO or a device never blocks; fstat then refuses anything but a regular file.
    The containment check runs on the descriptor, after the open: a directory swapped for a symlink between the
    path check and the open is caught (the kernel's path of the opened file lies outside), not followed.
    """
    shown = shown if shown is not None else str(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if within is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)  # the path was resolved: a link there now was swapped in
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise BadInput(f"{what} {shown!r} does not exist") from None
    except OSError as exc:
        raise BadInput(f"cannot open {what} {shown!r}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(f"{what} {shown!r} is not a regular file")
        if within is not None:
            real = _fd_path(fd)
            if real is None:  # no /proc: compare with the path's file now (catches a swap before the open)
                now = os.stat(path)
                ok = (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)
            else:
                ok = inside(real, within)
            if not ok:
                raise BadInput(f"{what} {shown!r} changed while it was opened (a link swapped in?): refused")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def confine(roots: list[Path] | None) -> list[Path] | None:
    """The folders a server's reads must stay in (its roots and the runs folder); None (the CLI): anywhere."""
    return None if roots is None else [*roots, runs_dir()]


def open_inside(path: str | Path, roots: list[Path], *, what: str = "path", base: Path | None = None) -> BinaryIO:
    """check_path, then open_regular confined to the roots (and the runs folder)."""
    resolved = check_path(path, roots, what=what, base=base)
    return open_regular(resolved, confine(roots), what=what, shown=str(path))
