"""Build and install the distributions for tests/test_distribution.py: a clean copy, python -m build, a venv."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

# A build or an install of a few dozen wheels: seconds here, but the machine is shared.
STEP_TIMEOUT_S = 240


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(argv, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, **kw)
    if out.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, argv))}: exit {out.returncode}\n{out.stdout[-3000:]}\n"
                             f"{out.stderr[-3000:]}")
    return out


def tracked_copy(root: Path, dest: Path) -> Path:
    """The files git tracks, as they are in the working tree: what a clone of this tree holds (no .venv, no
    tests/.build, no untracked file)."""
    if not (root / ".git").exists():  # e.g. the tests of an unpacked sdist: no record of what is tracked
        pytest.skip(f"{root} is not a git checkout")
    listed = _run(["git", "ls-files", "-z"], cwd=root).stdout.split("\0")
    for rel in filter(None, listed):
        src = root / rel
        if src.exists() or src.is_symlink():  # a tracked file deleted in the working tree is not copied
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel, follow_symlinks=False)
    return dest


def build(srcdir: Path, outdir: Path, *kinds: str) -> dict[str, Path]:
    """python -m build --sdist/--wheel. No isolation: the backend (hatchling) comes from the test extra, so a
    build needs no network and takes seconds; the release workflow builds with isolation."""
    _run([sys.executable, "-m", "build", "--no-isolation", *(f"--{k}" for k in kinds), "--outdir", str(outdir),
          str(srcdir)])
    return found(outdir)


def found(folder: Path) -> dict[str, Path]:
    """The one sdist and the one wheel in a folder."""
    sdists, wheels = sorted(folder.glob("*.tar.gz")), sorted(folder.glob("*.whl"))
    assert len(sdists) <= 1 and len(wheels) <= 1, f"more than one distribution in {folder}: {sdists + wheels}"
    return {"sdist": sdists[0], "wheel": wheels[0]} if sdists and wheels else (
        {"sdist": sdists[0]} if sdists else {"wheel": wheels[0]} if wheels else {})


def build_dists(root: Path, out: Path, given: Path | None = None) -> dict[str, Path]:
    """The sdist and the wheel: the ones in `given`, else both built from a clean copy of the checkout."""
    if given is not None:
        dists = found(given)
        assert set(dists) == {"sdist", "wheel"}, f"{given} should hold one sdist and one wheel: {dists}"
        return dists
    return build(tracked_copy(root, out / "src"), out / "dist", "sdist", "wheel")


def wheel_from_sdist(sdist: Path, out: Path) -> Path:
    """The wheel the sdist builds once unpacked, as pip does when no wheel is published."""
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+, 3.11.4+
            tar.extractall(out / "src", filter="data")
        else:
            tar.extractall(out / "src")  # noqa: S202 (our own archive, built a moment ago)
    (top,) = (out / "src").iterdir()
    return build(top, out / "dist", "wheel")["wheel"]


def wheel_contents(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as z:
        return {name: z.read(name) for name in z.namelist()}


def runtime_pins(name: str = "aoti-debug") -> list[str]:
    """name==version of every distribution that the package's runtime requirements pull in, as installed here
    (extras and markers followed; the test extra and torch are not runtime requirements)."""
    pins: dict[str, str] = {}
    todo, seen = [(name, frozenset())], set()
    while todo:
        dist_name, extras = todo.pop()
        for line in metadata.distribution(dist_name).requires or []:
            req = Requirement(line)
            if req.marker and not any(req.marker.evaluate({"extra": e}) for e in {"", *extras}):
                continue
            key = canonicalize_name(req.name)
            pins.setdefault(key, metadata.distribution(req.name).version)
            if (key, frozenset(req.extras)) not in seen:  # a name is walked once per set of extras asked of it
                seen.add((key, frozenset(req.extras)))
                todo.append((req.name, frozenset(req.extras)))
    return sorted(f"{k}=={v}" for k, v in pins.items())


def wheelhouse(root: Path) -> Path:
    """A folder of wheels of the runtime dependencies and of the build backend (pipx and uv build a git URL in an
    isolated environment), at the versions installed here, downloaded once per set of versions and Python
    (tests/.build/wheelhouse/), so every install of the tests runs with --no-index."""
    pins = sorted({*runtime_pins(), f"hatchling=={metadata.version('hatchling')}", *runtime_pins("hatchling")})
    key = hashlib.sha256("\n".join([sys.version.split()[0], platform.machine(), *pins]).encode()).hexdigest()[:16]
    folder = root / "tests" / ".build" / "wheelhouse" / key
    if (folder / "pins.txt").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=folder.parent))
    tmp.chmod(0o755)  # mkdtemp's 0700 would keep the shared cache from other users
    try:
        _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
              "--dest", str(tmp), *pins])
        (tmp / "pins.txt").write_text("\n".join(pins) + "\n")
        if not folder.exists():  # another session may have made it meanwhile: its copy is as good
            tmp.rename(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def make_venv(dest: Path, wheel: Path, wheels: Path) -> Path:
    """A fresh venv (no system site-packages, so no torch) with the wheel installed from the wheelhouse only."""
    python = str(dest / "bin" / "python")
    if Version(metadata.version("pip")) >= Version("22.3"):
        # pip of this environment installs into the new one (--python): no ensurepip run in the fresh venv.
        _run([sys.executable, "-m", "venv", "--without-pip", str(dest)])
        pip = [sys.executable, "-m", "pip", "--python", python]
    else:
        _run([sys.executable, "-m", "venv", str(dest)])
        pip = [python, "-m", "pip"]
    # --no-compile: the modules a test imports are compiled on first import, not all of them now (half the time).
    # No pip configuration either: the wheelhouse is the only source, wherever this runs.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_CONFIG_FILE": os.devnull}
    _run([*pip, "install", "--quiet", "--no-compile", "--no-index", "--find-links", str(wheels), str(wheel)], env=env)
    return dest


def git_repo(root: Path, dest: Path) -> str:
    """A clean copy of the checkout committed into a fresh git repository: its git+file:// URL, a stand-in for the
    public repository URL (pipx, uv and pip clone both kinds alike)."""
    tracked_copy(root, dest)
    git = ["git", "-c", "user.name=aoti-debug tests", "-c", "user.email=tests@localhost", "-c", "commit.gpgsign=false"]
    _run([*git, "init", "--quiet"], cwd=dest)
    _run([*git, "add", "--all"], cwd=dest)
    _run([*git, "commit", "--quiet", "--message", "clean copy of the checkout"], cwd=dest)
    return f"git+{dest.resolve().as_uri()}"


def offline_env(wheels: Path, home: Path) -> dict[str, str]:
    """The environment for pipx, uv and uvx: the wheelhouse as the only index, every folder they write under home,
    no user configuration, this Python as the interpreter; no checkout on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith(("UV_", "PIPX_", "PIP_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update({
        "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_CONFIG_FILE": os.devnull,
        "PIPX_HOME": str(home / "pipx"), "PIPX_BIN_DIR": str(home / "pipx-bin"), "PIPX_MAN_DIR": str(home / "man"),
        "PIPX_DEFAULT_PYTHON": sys.executable,
        "UV_NO_INDEX": "1", "UV_FIND_LINKS": str(wheels), "UV_NO_CONFIG": "1", "UV_PYTHON": sys.executable,
        "UV_PYTHON_DOWNLOADS": "never", "UV_CACHE_DIR": str(home / "uv-cache"), "UV_TOOL_DIR": str(home / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(home / "uv-bin"),
    })
    return env
