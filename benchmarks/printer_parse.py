"""Printer-output parser throughput and memory, beside `grep -c` over the same file.

    python benchmarks/printer_parse.py [--mb 200] [--keep]

Builds files of real printer output (the H200 captures in tests/fixtures/gpu_capture/logs) repeated to
--mb megabytes, then times, on each: `grep -c 'Number of elements'` (resp. 'before_launch'), and
aoti_debug's parser (parse_file: tokenizer + launch collector) in a fresh process, reporting MB/s and the
child's peak RSS. Files:

- level2: the model inputs once, then the launch records of index_oob.printer2.log repeated (a big model),
  then the real failing tail (device assert, traceback): the shape of an unfiltered level-2 run;
- level2_nan: the same with nan.printer2.log's records spliced in the middle (the NaN search parses there);
- level3: index_oob.printer3.log's launch lines repeated, then its failing tail.

Target: the parser at 200 MB/s or more; memory flat whatever the size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "fixtures" / "gpu_capture" / "logs"
TARGET_MBS = 200.0
CHILD = """
import json, resource, sys, time
from aoti_debug.kernels.printer_collect import parse_file
t = time.perf_counter()
log, _ = parse_file(sys.argv[1])
dt = time.perf_counter() - t
print(json.dumps({"s": dt, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "records": log.records, "launches": log.launches_total + log.level3_launches,
                  "failing": log.failing_kernel or log.unfinished_launch, "nan": log.nan_producer}))
"""


def _body(name: str) -> str:
    """The captured output without the capture's '# ' header."""
    text = (LOGS / name).read_text()
    return "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("# "))


def _split(text: str, first: str, last_end: str) -> tuple[str, str, str]:
    a = text.index(first)
    b = text.rindex(last_end) + len(last_end)
    return text[:a], text[a:b], text[b:]


def build(kind: str, path: Path, mb: int) -> int:
    """Write the file; return its size."""
    target = mb << 20
    if kind == "level3":
        head, mid, tail = _split(_body("index_oob.printer3.log"), "[ before_launch",
                                 "[ after_launch: aoti_torch_cuda_mm_out ]\n")
    else:
        text = _body("index_oob.printer2.log")
        inputs_end = text.index("[  before_launch")
        head, mid, tail = text[:inputs_end], text[inputs_end:text.rindex("[  before_launch - triton")], ""
        tail = text[text.rindex("[  before_launch - triton"):]
    nan = _body("nan.printer2.log")
    nan_mid = nan[nan.index("[  before_launch"):nan.rindex("Requires grad: 0\n") + len("Requires grad: 0\n\n")]
    with open(path, "w") as f:
        f.write(head)
        n, written = len(mid.encode()), len(head) + len(tail)
        reps = max(1, (target - written) // n)
        for i in range(reps):
            if kind == "level2_nan" and i == reps // 2:
                f.write(nan_mid)
            f.write(mid)
        f.write(tail)
    return path.stat().st_size


def timed(argv: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    return time.perf_counter() - t, out.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200, help="Size of each generated file (default 200)")
    ap.add_argument("--keep", action="store_true", help="Keep the generated files (printed)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="aoti_printer_bench_"))
    grep = shutil.which("grep")
    print(f"{'file':11} {'MB':>6} {'grep -c s':>10} {'grep MB/s':>10} {'parse s':>8} {'parse MB/s':>10} "
          f"{'peak RSS MB':>11}  result")
    try:
        for kind in ("level2", "level2_nan", "level3"):
            path = tmp / f"{kind}.log"
            size = build(kind, path, args.mb)
            needle = "before_launch" if kind == "level3" else "Number of elements"
            subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
            g_s, g_out = timed([grep, "-c", needle, str(path)]) if grep else (float("nan"), "")
            p_s, p_out = timed([sys.executable, "-c", CHILD, str(path)])
            res = json.loads(p_out)
            mbs = size / res["s"] / 1e6
            flag = "ok" if mbs >= TARGET_MBS else "BELOW TARGET"
            print(f"{kind:11} {size / 1e6:6.0f} {g_s:10.2f} {size / g_s / 1e6:10.0f} {res['s']:8.2f} {mbs:10.0f} "
                  f"{res['rss_mb']:11.0f}  {flag}; grep={g_out} records={res['records']} "
                  f"launches={res['launches']} failing={res['failing']} nan_launch={res['nan']}")
    finally:
        if args.keep:
            print(f"files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"(parse s: inside the child, excluding interpreter start; target {TARGET_MBS:.0f} MB/s)")


if __name__ == "__main__":
    main()
