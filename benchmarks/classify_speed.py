"""Classify a generated large log (real printer output repeated, the error at the end) beside GNU grep -E.

    python benchmarks/classify_speed.py [--mb 100] [--runs 3]

Prints wall time and peak RSS of `aoti-debug classify FILE --json` and of `grep -E -c -f PATTERNS FILE`
over the same file, where PATTERNS is every rule regex translated to POSIX ERE. Targets (issue 2):
classify within 2x of grep's wall time, peak RSS under 64 MB.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Real level-2 printer output captured on an H200 (torch 2.11), minus its failure lines.
SOURCE = ROOT / "tests" / "fixtures" / "gpu_capture" / "logs" / "index_oob.printer2.log"
ERROR = "Error: index out of bounds: 0 <= tmp7 < 2L\n"


def make_log(path: Path, mb: int, unique: bool = False) -> None:
    body = "".join(line for line in SOURCE.read_text().splitlines(keepends=True)
                   if not line.startswith("#") and "out of bounds" not in line and "Error" not in line
                   and "error" not in line).encode()
    with path.open("wb") as f:
        for n in range(mb * 2**20 // len(body)):
            # --unique: tag every line with its copy number, so no line repeats (the engine's worst case)
            f.write(body.replace(b"\n", f" #{n}\n".encode()) if unique else body)
        f.write(ERROR.encode())


# Inside a bracket class, the escapes that have a POSIX class form; \S and \W have none there.
CLASS_ESCAPES = {"d": "0-9", "s": "[:space:]", "w": "[:alnum:]_"}
OUTSIDE_ESCAPES = {"d": "[0-9]", "s": "[[:space:]]", "S": "[^[:space:]]", "w": "[[:alnum:]_]", "W": "[^[:alnum:]_]"}
# POSIX guarantees counts up to 255; GNU grep unrolls a larger {m,n} into that many DFA states, which made the
# reference crawl (minutes per MiB) once the rules bounded their `.*` for linear time. Above it, {m,} is the ERE
# that matches the same lines grep counts here.
RE_DUP_MAX = 255


def to_ere(regex: str) -> str | None:
    """Python regex -> POSIX ERE for grep -E; None where a construct has no ERE form (lookarounds, inline flags, a
    negated class escape inside brackets)."""
    if "(?=" in regex or "(?!" in regex or "(?<" in regex.replace("(?P<", "") or re.search(r"\(\?[a-zA-Z]+\)", regex):
        return None
    src = re.sub(r"\(\?P<\w+>", "(", regex).replace("(?:", "(")
    out, i, in_class = [], 0, False
    while i < len(src):
        c = src[i]
        if c == "\\" and i + 1 < len(src):
            nxt = src[i + 1]
            if in_class:
                if nxt in CLASS_ESCAPES:
                    out.append(CLASS_ESCAPES[nxt])
                elif nxt.isalnum() or nxt in "]^-":
                    return None
                else:
                    out.append(nxt)  # \. \/ \\ and the like are literal inside brackets
            else:
                out.append(OUTSIDE_ESCAPES.get(nxt, c + nxt))
            i += 2
            continue
        if in_class:
            out.append(c)
            if c == "]" and not (out[-2:-1] == ["["] or out[-3:-1] == ["[", "^"]):
                in_class = False
        elif c == "[":
            in_class = True
            out.append(c)
        elif c in "*+?}" and i + 1 < len(src) and src[i + 1] == "?":
            out.append(c)  # lazy quantifiers: the same lines match
            i += 1
        else:
            out.append(c)
        i += 1
    return re.sub(r"\{(\d+),(\d+)\}", _open_count, "".join(out))


def _open_count(m: re.Match[str]) -> str:
    """{m,n} as it is up to RE_DUP_MAX, else {m,}."""
    return m.group(0) if int(m.group(2)) <= RE_DUP_MAX else f"{{{m.group(1)},}}"


def patterns() -> list[str]:
    sys.path.insert(0, str(ROOT / "server"))
    from aoti_debug.classify.guides import rules

    return [e for r in rules() for p in r.patterns if (e := to_ere(p.regex))]


def timed(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, the child's peak RSS in MiB and its CPU seconds (user + system: steadier than the wall on a
    shared host), each measurement in its own wrapper process.

    Output goes to a pipe, not /dev/null: GNU grep stops at the first match when its output is /dev/null.
    """
    code = ("import resource,subprocess,sys,time; t=time.perf_counter(); "
            "subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, check=False); "
            "u=resource.getrusage(resource.RUSAGE_CHILDREN); print(time.perf_counter()-t, u.ru_maxrss, "
            "u.ru_utime+u.ru_stime)")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    wall, rss_kb, cpu = out.stdout.split()[-3:]
    return float(wall), int(rss_kb) / 1024, float(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--unique", action="store_true", help="make every line distinct (worst case for the engine)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log, pats = Path(tmp) / "big.log", Path(tmp) / "patterns.ere"
        make_log(log, args.mb, args.unique)
        eres = patterns()
        pats.write_text("\n".join(eres) + "\n")
        exe = [sys.executable, "-m", "aoti_debug", "classify", str(log), "--json"]
        check = subprocess.run(exe, capture_output=True, text=True, check=True)
        assert '"pattern": "triton_index_out_of_bounds"' in check.stdout, check.stdout[:500]
        rows = {"aoti-debug classify": exe, f"grep -E -c -f ({len(eres)} patterns)": ["grep", "-E", "-c", "-f",
                                                                                     str(pats), str(log)]}
        kind = "every line made distinct" if args.unique else "repeated as is"
        print(f"log: {log.stat().st_size / 2**20:.0f} MiB of real printer output ({kind}), error on the last line")
        results = {}
        for name, argv in rows.items():
            runs = [timed(argv) for _ in range(args.runs)]
            results[name] = (statistics.median(w for w, _, _ in runs), max(r for _, r, _ in runs),
                             statistics.median(c for _, _, c in runs))
            print(f"{name:42} wall {results[name][0]:7.2f} s (min {min(w for w, _, _ in runs):.2f})   "
                  f"CPU {results[name][2]:6.2f} s   peak RSS {results[name][1]:7.1f} MiB")
        (cw, crss, cc), (gw, _, gc) = results.values()
        print(f"classify / grep wall ratio: {cw / gw:.2f} (target <= 2.0), CPU ratio {cc / gc:.2f}; classify RSS "
              f"{crss:.0f} MiB (target < 64); load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
