"""Run a package on named bad inputs and record what really happens (run in a subprocess by the tests).

    python tests/parity_cases.py PACKAGE OUT_DIR CASE [CASE...]
    python tests/parity_cases.py --build PACKAGE    # the shared-batch package the sh_ cases use

For each case: save the inputs to OUT_DIR/<case>.pt (torch.save), describe them, call the package once
and record the exception's first line (or "ok"). The caller sets AOTI_RUNTIME_CHECK_INPUTS. Results go
to OUT_DIR/results.json as {case: {"inputs": [...], "saved": bool, "outcome": str}}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

# examples/dtype_mismatch.py: x float32[4, 8], ids int64[4] (static shapes).
# examples/dynamic_above_max.py: x float32[4, seq] with seq in 2..64.
CASES = {
    "two_ok": lambda: (torch.randn(4, 8), torch.tensor([1, 7, 42, 99])),
    "two_dtype": lambda: (torch.randn(4, 8), torch.tensor([1, 7, 42, 99], dtype=torch.int32)),
    "two_static_dim": lambda: (torch.randn(6, 8), torch.tensor([1, 7, 42, 99])),
    "two_stride": lambda: (torch.randn(8, 4).t(), torch.tensor([1, 7, 42, 99])),
    "two_device": lambda: (torch.randn(4, 8, device="meta"), torch.tensor([1, 7, 42, 99])),
    "two_count": lambda: (torch.randn(4, 8),),
    "two_rank_up": lambda: (torch.randn(4, 8, 1), torch.tensor([1, 7, 42, 99])),
    "two_dict": lambda: {"x": torch.randn(4, 8), "ids": torch.tensor([1, 7, 42, 99], dtype=torch.int32)},
    "dyn_ok": lambda: (torch.randn(4, 16),),
    "dyn_above_max": lambda: (torch.randn(4, 100),),
    "dyn_below_min": lambda: (torch.randn(4, 1),),
    "dyn_stride": lambda: (torch.randn(16, 4).t(),),
    # --build: x float32[B, 8] and ids int64[B], one batch symbol B in 2..64 shared by both inputs.
    "sh_ok": lambda: (torch.randn(5, 8), torch.tensor([1, 2, 3, 4, 5])),
    "sh_shared": lambda: (torch.randn(4, 8), torch.tensor([1, 2, 3, 4, 5, 6])),
    "sh_ids_int32": lambda: (torch.randn(4, 8), torch.tensor([1, 2, 3, 4], dtype=torch.int32)),
    "sh_both_above": lambda: (torch.randn(65, 8), torch.zeros(65, dtype=torch.int64)),
}


class Shared(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 16)
        self.emb = torch.nn.Embedding(100, 16)

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.proj(x)) + self.emb(ids)


def build(path: str) -> None:
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=2, max=64)
    ep = torch.export.export(Shared().eval(), (torch.randn(4, 8), torch.tensor([1, 2, 3, 4])),
                             dynamic_shapes=({0: batch}, {0: batch}))
    torch._inductor.aoti_compile_and_package(ep, package_path=path)


def describe(t: torch.Tensor) -> dict:
    return {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape), "stride": list(t.stride()),
            "device": str(t.device)}


def main() -> None:
    if sys.argv[1] == "--build":
        return build(sys.argv[2])
    package, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    model = torch._inductor.aoti_load_package(package)
    results = {}
    for case in sys.argv[3:]:
        inputs = CASES[case]()
        flat = list(inputs.values()) if isinstance(inputs, dict) else list(inputs)
        saved = all(t.device.type != "meta" for t in flat)
        if saved:
            torch.save(inputs, out / f"{case}.pt")
        try:
            model(*flat)
            outcome = "ok"
        except Exception as exc:  # the outcome is the evidence
            outcome = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
        results[case] = {"inputs": [describe(t) for t in flat], "saved": saved, "outcome": outcome}
    (out / "results.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
