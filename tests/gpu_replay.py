"""A stand-in repro that replays the real H200 capture, so the printer passes run end to end without a GPU.

    python tests/gpu_replay.py EXAMPLE [--slow]     (index_oob, nan, dynamic_zero_below_min)

Like a repro that compiles, it reads the printer flags from its environment and "builds" into
TORCHINDUCTOR_CACHE_DIR (it copies that job's real generated sources there), then prints what the real
run printed at that level (tests/fixtures/gpu_capture/logs/<example>.printer{3,2}.log, capture header
dropped) and exits with the real exit status. With AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT set at level 2 it
replays the capture built with exactly that filter (<example>.printer2_filtered.log) when there is one, else
the unfiltered capture without the records of other kernels: what a filtered build prints (the model-input
records and the listed kernels' records; tests/test_dump_kernels.py checks this rule against every filtered
capture). A filter at another level is refused (exit 2, the reason on stderr): no capture shows that. --slow
waits a while first, as a compile would (progress reports get a chance).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

SLOW_S = 2.5
CAPTURE = Path(__file__).resolve().parent / "fixtures" / "gpu_capture"
LEVEL = "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER"
FILTER = "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT"


def kernels(value: str | None) -> frozenset[str]:
    return frozenset(k.strip() for k in (value or "").split(",") if k.strip())


def captured_env(log: Path) -> dict[str, str]:
    """The `# env: K=V ...` line of a capture log's header."""
    line = next((ln for ln in log.read_text().splitlines() if ln.startswith("# env: ")), "# env: ")
    return dict(kv.split("=", 1) for kv in line[len("# env: "):].split() if "=" in kv)


# Printer records: '[  before_launch - KERNEL - ARG  ]:' (tensor) or '... - ARG: VALUE  ]\n' (scalar: a literal \n).
RECORD = re.compile(r"\[  (?:before_launch|after_launch|aoti_model_inputs) - ")
KERNEL_RECORD = re.compile(r"\[  (?:before_launch|after_launch) - (\S+) - ")
SCALAR_END = re.compile(r"\[  [^\]]*?  \]\\n")
TENSOR_END = re.compile(r"^Requires grad: \d+\n\n?", re.M)


def filtered(text: str, wanted: frozenset[str]) -> str:
    """The printer output of a build filtered to these kernels: other kernels' records dropped, all else kept."""
    starts = [m.start() for m in RECORD.finditer(text)]
    out = [text[:starts[0]] if starts else text]
    for a, b in zip(starts, [*starts[1:], len(text)], strict=True):
        part = text[a:b]
        m = KERNEL_RECORD.match(part)
        if m and m.group(1) not in wanted:
            end = SCALAR_END.match(part) or TENSOR_END.search(part)
            part = part[end.end():] if end else ""  # what follows a record (a traceback) is not part of it
        out.append(part)
    return "".join(out)


def replayed(name: str, level: str, wanted: frozenset[str]) -> str | None:
    """The capture's output for these flags; None when no capture shows it."""
    job = "printer3" if level == "3" else "printer2" if level == "2" else "base"
    if wanted:
        if level != "2":
            return None
        log = CAPTURE / "logs" / f"{name}.printer2_filtered.log"
        if log.is_file() and kernels(captured_env(log).get(FILTER)) == wanted:
            return log.read_text()
    text = (CAPTURE / "logs" / f"{name}.{job}.log").read_text()
    return filtered(text, wanted) if wanted else text


def main() -> int:
    name = sys.argv[1]
    if "--slow" in sys.argv:
        time.sleep(SLOW_S)
    level, wanted = os.environ.get(LEVEL, "0"), kernels(os.environ.get(FILTER))
    text = replayed(name, level, wanted)
    if text is None:
        print(f"gpu_replay: no capture of {name} at printer level {level} with {FILTER}={','.join(sorted(wanted))}",
              file=sys.stderr)
        return 2
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if cache:
        shutil.copytree(CAPTURE / "artifacts" / f"{name}.printer2" / "cache", cache, dirs_exist_ok=True)
        for p in Path(cache).rglob("*"):
            p.touch()  # generated now, as a real build's files would be
    status = next((int(ln.split()[2]) for ln in text.splitlines() if ln.startswith("# exit_status:")), 1)
    sys.stdout.write("".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("# ")))
    sys.stdout.flush()
    return status if status < 128 else 1


if __name__ == "__main__":
    sys.exit(main())
