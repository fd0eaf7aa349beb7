"""Random and mutated MCP tool calls for the fuzz test (tests/test_fuzz_mcp.py) and its long run (tests/fuzz_long.py).

Each case is one tool call: argv built from interpreter switches (allowed and hostile), scripts and paths inside
and outside the roots; debug flags; mutated .pt2 archives; mutated real logs (tests/fixtures/logs) with huge
numbers, binary bytes and cut lines. check() states what must hold for every answer: a result, or a ToolError
that says why (a crash answers only 'Error executing tool <name>'); nothing ran code outside the root check.
"""

from __future__ import annotations

import random
import zipfile
from pathlib import Path
from typing import Any

from pt2_fakes import make_pt2, metadata, model_files, wrapper_213

LOGS = Path(__file__).resolve().parent / "fixtures" / "logs"
MARKER = "FUZZ_PWNED"
# Code that would leave MARKER if any switch or argument made Python run it.
SNIPPET = f"open('{MARKER}', 'w').write('x')"
SWITCHES = ["-u", "-B", "-E", "-s", "-S", "-I", "-O", "-OO", "-q", "-b", "-P", "-v", "-uB", "-X", "-W", "-c", "-m",
            "-i", "-", "--", "--help", "-Xdev", "-Wignore", "-X", "faulthandler", "-W", "ignore::DeprecationWarning",
            "-W", "ignore::unittest.__main__.X", "-W", "error::os.X", "-X", "pycache_prefix=/tmp", "-Xpresite=x",
            "-x", "-R", "-d", "-Wd", "-Xutf8=2", "-X", "int_max_str_digits=99999999999"]
PROGRAMS = ["python", "python3", "sh", "/bin/sh", "env", "/usr/bin/env", "./repro.py", "repro.py", "../python3",
            "pdb", "", " ", "python\0", "python3 repro.py"]
PATHS = ["repro.py", "../outside.py", "/etc/passwd", "link.py", "dirlink/x.py", "fifo.py", "sub/../repro.py",
         "sub", ".", "", "repro.py\n", "\0", "~/x", "x" * 300, "pkg.pt2", "bad.pt2", "fifo.pt2", "log.txt"]
FLAG_NAMES = ["TORCH_LOGS", "CXX", "TORCHINDUCTOR_CACHE_DIR", "TORCH_TRACE", "LD_PRELOAD", "PATH", "PYTHONPATH",
              "PYTHONSTARTUP", "CUDA_LAUNCH_BLOCKING", "AOTI_RUNTIME_CHECK_INPUTS", "lower", ""]
FLAG_VALUES = ["1", "0", "+inductor", "-rf", "/tmp", "../x", "g++", "/bin/sh", "a\nb", "x" * 2000, "", "sub"]
HUGE = ["9" * 5000, "-" + "1" * 4400, "0x" + "f" * 3000, "1e99999"]


def setup(root: Path, outside: Path) -> None:
    """The files the calls name: a harmless repro, links out of the root, FIFOs, a package and a broken one."""
    import os

    (root / "repro.py").write_text("print('fuzz repro ran')\n")
    (root / "sub").mkdir(exist_ok=True)
    (outside / "outside.py").write_text(SNIPPET + "\n")
    (root / "link.py").symlink_to(outside / "outside.py")
    (root / "dirlink").symlink_to(outside)
    os.mkfifo(root / "fifo.py")
    os.mkfifo(root / "fifo.pt2")
    make_pt2(root / "pkg.pt2", model_files(wrapper_213("cpu"), metadata("cpu")))
    (root / "bad.pt2").write_bytes(b"PK\x03\x04" + b"\0" * 64)
    (root / "log.txt").write_text("RuntimeError: index out of bounds: 0 <= tmp3 < 8\n")


def _pick(rng: random.Random, pool: list[str], n: int) -> list[str]:
    return [rng.choice(pool) for _ in range(n)]


def argv(rng: random.Random) -> list[str]:
    out = [rng.choice(PROGRAMS)] + _pick(rng, SWITCHES, rng.randint(0, 3))
    out += [rng.choice(PATHS)] + _pick(rng, [*SWITCHES, SNIPPET, "pdb.main", "discover", "-s", "/"], rng.randint(0, 3))
    if rng.random() < 0.1:
        out = [rng.choice(PROGRAMS)] * rng.randint(0, 300)
    return out


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 20)):
        op = rng.random()
        if op < 0.5 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op < 0.7:
            b[rng.randrange(len(b) + 1):rng.randrange(len(b) + 1)] = rng.randbytes(rng.randint(1, 64))
        elif op < 0.85:
            b = b[:rng.randrange(len(b) + 1)]
        else:
            b += rng.choice(HUGE).encode()
    return bytes(b)


def archive(rng: random.Random, root: Path, i: int) -> Path:
    src = root / "pkg.pt2"
    data = src.read_bytes()
    if rng.random() < 0.5:  # a mutated member inside a well-formed zip
        path = root / f"m{i}.pt2"
        files = model_files(mutate_bytes(rng, wrapper_213("cpu").encode()).decode("utf-8", "replace"),
                            metadata("cpu"), so=mutate_bytes(rng, b"\x7fELF\x02\x01" + bytes(58)))
        return make_pt2(path, files, compression=rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    path = root / f"m{i}.pt2"
    path.write_bytes(mutate_bytes(rng, data))
    return path


def log_text(rng: random.Random) -> str:
    logs = sorted(LOGS.glob("*.log"))
    text = rng.choice(logs).read_bytes()[:20000] if logs else b"RuntimeError: x\n"
    text = mutate_bytes(rng, text)
    if rng.random() < 0.5:
        text += f"index out of bounds: {rng.choice(['0', rng.choice(HUGE)])} <= tmp3 < {rng.choice(HUGE)}\n".encode()
    return text.decode("utf-8", "replace")


def case(rng: random.Random, root: Path, i: int) -> tuple[str, dict[str, Any]]:
    """One tool call: its name and arguments."""
    kind = rng.choice(["rerun", "rerun", "triage", "parity", "oob", "classify", "get_run"])
    if kind == "rerun":
        flags = {rng.choice(FLAG_NAMES): rng.choice(FLAG_VALUES) for _ in range(rng.randint(0, 2))}
        return "rerun_with_flags", {"argv": argv(rng), "flags": flags, "cwd": rng.choice([None, str(root), "sub",
                                                                                          "..", "/"]),
                                    "timeout_s": 10, "fresh_cache": False, "forensics": False}
    if kind == "triage":
        return "triage", {"argv": argv(rng), "cwd": str(root), "budget_s": 20, "timeout_s": 10,
                          "probe_runtime": False}
    if kind == "parity":
        pkg = str(archive(rng, root, i)) if rng.random() < 0.7 else rng.choice(PATHS)
        return "check_parity", {"package_path": pkg, "python": rng.choice([None, "python3", "/bin/sh", "sh"])}
    if kind == "oob":
        pkg = str(archive(rng, root, i)) if rng.random() < 0.7 else rng.choice(PATHS)
        return "explain_index_oob", {"package_path": pkg, "log_text": log_text(rng)}
    if kind == "classify":
        if rng.random() < 0.3:
            return "classify_error", {"log_path": rng.choice(PATHS)}
        return "classify_error", {"log_text": log_text(rng), "exit_status": rng.choice([None, 139, -11, 2**63])}
    rid = rng.choice(["20250101-120000-a1b2c3", "20250101-120000-a1b2c3\n", "../../etc", "", "x" * 100])
    return "get_run", {"run_id": rid}


def check(name: str, args: dict[str, Any], result: Any, root: Path) -> None:
    """What every answer must satisfy."""
    if result.is_error:
        text = result.content[0].text
        assert text.strip() != f"Error executing tool {name}", f"{name} crashed on {args!r}"
        assert "Traceback" not in text, text
    assert not (root / MARKER).exists() and not (root.parent / MARKER).exists(), f"code ran: {name} {args!r}"
