"""The MCP fuzz for longer: python tests/fuzz_long.py --count 5000 [--seed N] [--budget-s S].

Same cases and checks as tests/test_fuzz_mcp.py (which CI runs for ~30 s); prints the calls per tool and exits
non-zero with the failing case on the first violation.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1311)
    ap.add_argument("--budget-s", type=float, default=3600.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="aoti-fuzz-") as tmp:
        os.environ["AOTI_DEBUG_HOME"] = str(Path(tmp) / "home")
        import anyio
        from fuzz_cases import setup
        from test_fuzz_mcp import fuzz

        root, outside = Path(tmp) / "root", Path(tmp) / "outside"
        root.mkdir()
        outside.mkdir()
        setup(root, outside)
        seen = anyio.run(fuzz, root, args.seed, args.count, args.budget_s)
    print(" ".join(f"{k}={v}" for k, v in sorted(seen.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
