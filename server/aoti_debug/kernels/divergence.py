"""The first kernel whose output diverges from eager: the level-2 printer's statistics per kernel output against
the statistics of the eager graph's nodes on the same inputs (the capture runner's aoti_debug_eager hook).

A kernel's outputs are the buffers it is the first to print after launch. A buffer is matched to the eager nodes
of the same shape whose op is one the kernel is named after (cpp_fused_<ops>_N, triton_<kind>_fused_<ops>_N,
aoti_torch_<device>_<op>_out): it agrees when one of them has the same min, max and mean within the printer's
six significant digits, diverges when none does, and is unmapped when no node fits (a fusion-internal buffer, an
op decomposed under another name). Inputs that are model inputs agree by construction (eager ran on a copy).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

HEADER = re.compile(r"^\[\s+(aoti_model_inputs|before_launch|after_launch) - (?:(\S+) - )?(\S+)\s+\]:")
STAT = re.compile(r"^(Mean|Min|Max) value: (\S+)$")
SIZE = re.compile(r"^Size: \[([\d, ]*)\]$")
# The printer log is read up to here (a big model at level 2 prints a lot; the first divergence comes early).
MAX_LOG_BYTES = 256 * 2**20
MAX_NODES_BYTES = 16 * 2**20
# The printer prints 6 significant digits.
RTOL, ATOL = 2e-3, 1e-4


@dataclass
class Rec:
    shape: list[int] | None = None
    stats: dict[str, float] = field(default_factory=dict)


@dataclass
class Launch:
    kernel: str
    ordinal: int
    before: dict[str, Rec] = field(default_factory=dict)
    after: dict[str, Rec] = field(default_factory=dict)


class Divergence(BaseModel):
    """Where the compiled model first leaves the eager one."""

    kernel: str | None = Field(None, description="The first kernel whose output diverges")
    ordinal: int | None = Field(None, description="Its 0-based launch position in the call")
    buffer: str | None = None
    eager_nodes: list[str] = Field(default_factory=list, description="The eager nodes of its output's shape and ops")
    ops: list[str] = Field(default_factory=list)
    reads: list[str] = Field(default_factory=list, description="Constants (FQNs) those eager nodes read")
    inputs_agree: list[str] = Field(default_factory=list, description="Its inputs shown to agree with eager")
    inputs_unchecked: list[str] = Field(default_factory=list)
    agreed: list[str] = Field(default_factory=list, description="Earlier kernels whose outputs agree")
    unmapped: list[str] = Field(default_factory=list, description="Kernels with no eager node to compare")
    detail: str = ""


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_log(path: Path, call: int = 1) -> tuple[list[str], list[Launch]]:
    """(model input names, launches) of one model call (1-based) in a level-2 printer log."""
    inputs: list[str] = []
    launches: list[Launch] = []
    cur: Rec | None = None
    seen = 0  # model calls begun so far
    fresh = False  # inside a run of aoti_model_inputs records
    with open(path, "rb") as f:
        data = f.read(MAX_LOG_BYTES)
    # A level-2 scalar record ends in a literal backslash-n, and the next record's header follows on the same line
    # (torch 2.11's CUDA printer: `[  before_launch - k - 32L: 32  ]\n[  after_launch - k - buf0  ]:`).
    text = data.decode("utf-8", errors="replace").replace("]\\n[", "]\n[")
    for raw in text.splitlines():
        line = raw.strip()
        m = HEADER.match(line)
        if m:
            where, kernel, arg = m.groups()
            if where == "aoti_model_inputs":
                if not fresh:
                    seen, fresh = seen + 1, True
                    if seen > call:
                        break
                if seen == call:
                    inputs.append(arg)
                cur = None
                continue
            fresh = False
            if seen != call:
                cur = None
                continue
            last = launches[-1] if launches else None
            if last is None or last.kernel != kernel or (where == "before_launch" and last.after):
                last = Launch(kernel, len(launches))
                launches.append(last)
            cur = Rec()
            (last.before if where == "before_launch" else last.after)[arg] = cur
            continue
        if cur is None:
            continue
        s = STAT.match(line)
        if s:
            v = _num(s.group(2))
            if v is not None:
                cur.stats[s.group(1).lower()] = v
        z = SIZE.match(line)
        if z:
            cur.shape = [int(x) for x in z.group(1).replace(" ", "").split(",") if x]
    return inputs, launches


def _close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= ATOL * max(1.0, scale) + RTOL * max(abs(a), abs(b))


def _agrees(rec: Rec, node: dict) -> bool:
    st = node.get("stats") or {}
    if not rec.stats or any(k not in st for k in ("min", "max", "mean")):
        return False
    scale = max(abs(st["min"]), abs(st["max"]))
    return all(k in rec.stats and _close(rec.stats[k], st[k], scale) for k in ("min", "max", "mean"))


def _op(node: dict) -> str:
    return str(node.get("op", "")).split(".")[0].lstrip("_")


def _candidates(kernel: str, rec: Rec, nodes: list[dict]) -> list[dict]:
    return [n for n in nodes if (n.get("stats") or {}).get("shape") == rec.shape and _op(n) and _op(n) in kernel]


def read_nodes(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        data = f.read(MAX_NODES_BYTES + 1)
    nodes = json.loads(data[:MAX_NODES_BYTES]) if len(data) <= MAX_NODES_BYTES else []
    return [n for n in nodes if isinstance(n, dict)] if isinstance(nodes, list) else []


def first_divergence(log_path: Path, nodes: list[dict], call: int = 1) -> Divergence:
    """Walk that call's launches in order; stop at the first kernel with an output no eager node agrees with."""
    inputs, launches = parse_log(log_path, call)
    res = Divergence()
    if not launches:
        res.detail = f"the printer output has no kernel launch of call {call} to compare"
        return res
    state: dict[str, str] = {a: "agrees" for a in inputs}  # buffer -> agrees | diverges | unmapped
    for L in launches:
        produced = [(a, r) for a, r in L.after.items() if a not in state and r.shape is not None]
        verdicts = []
        for arg, rec in produced:
            cands = _candidates(L.kernel, rec, nodes)
            if not cands:
                state[arg] = "unmapped"
            elif any(_agrees(rec, n) for n in cands):
                state[arg] = "agrees"
            else:
                state[arg] = "diverges"
                verdicts.append((arg, rec, cands))
        if not verdicts:
            (res.agreed if any(state[a] == "agrees" for a, _ in produced) else res.unmapped).append(L.kernel)
            continue
        arg, rec, cands = verdicts[0]
        ins = [a for a in L.before if a not in dict(produced)]
        res.kernel, res.ordinal, res.buffer = L.kernel, L.ordinal, arg
        res.eager_nodes = [n["name"] for n in cands]
        res.ops = list(dict.fromkeys(_op(n) for n in cands))
        res.reads = list(dict.fromkeys(r for n in cands for r in n.get("reads") or []))
        res.inputs_agree = [a for a in ins if state.get(a) == "agrees"]
        res.inputs_unchecked = [a for a in ins if state.get(a) != "agrees"]
        best = cands[-1]["stats"]
        got = ", ".join(f"{k} {rec.stats.get(k, float('nan')):.6g}" for k in ("min", "max", "mean"))
        want = ", ".join(f"{k} {best[k]:.6g}" for k in ("min", "max", "mean"))
        res.detail = (f"{L.kernel} (launch #{L.ordinal}) writes {arg} {rec.shape} with {got}; eager's "
                      f"{cands[-1]['name']} ({_op(cands[-1])}) on the same inputs has {want}")
        return res
    res.detail = ("no kernel output diverges from an eager node it could be matched to"
                  + (f"; unmatched kernels: {', '.join(res.unmapped[:6])}" if res.unmapped else ""))
    return res
