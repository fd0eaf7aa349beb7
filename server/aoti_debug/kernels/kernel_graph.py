"""The launch order in run_impl and which earlier launch wrote each buffer a kernel reads (its producers)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aoti_debug.kernels.kernel_code import Kernel, arg_name, split_args
from aoti_debug.package.kernel_sources import Source

# Launch statements: call_<triton kernel>(, <cpp kernel>(, aoti_torch_<device>_<op>( (extern/fallback ops).
LAUNCH_RX = re.compile(r"^[ \t]*(?:AOTI_TORCH_ERROR_CODE_CHECK\()?(?:call_)?"
                       r"((?:triton|cpp)_\w+|aoti_torch_(?:cpu|cuda|xpu|mps)_\w+)\(", re.M)
ALIAS_RX = re.compile(r"\bauto\s+(buf\d+)\s*=\s*std::move\((buf\d+)\);")
WRITES = ("out_ptr", "in_out_ptr")


@dataclass
class LaunchSite:
    kernel: str
    line: int
    offset: int
    args: list[str]  # names (buf3, arg2_1, s70, 64)
    writes: list[str]  # buffers it writes (resolved through aliases)


def _body(wrapper: Source) -> tuple[int, int]:
    start = wrapper.text.find("::run_impl(")
    return (start, len(wrapper.text)) if start >= 0 else (0, len(wrapper.text))


def launch_order(wrapper: Source, defs: dict[str, Kernel]) -> list[LaunchSite]:
    """Every kernel launch in run_impl, in order, with the buffers it writes."""
    text = wrapper.text
    lo, hi = _body(wrapper)
    alias: dict[str, str] = {}
    events = [(m.start(), "alias", m) for m in ALIAS_RX.finditer(text, lo, hi)]
    events += [(m.start(), "launch", m) for m in LAUNCH_RX.finditer(text, lo, hi)]
    sites = []
    for pos, kind, m in sorted(events, key=lambda e: e[0]):
        if kind == "alias":
            alias[m.group(1)] = alias.get(m.group(2), m.group(2))
            continue
        name = m.group(1)
        if name.startswith(("aoti_torch_print", "aoti_torch_save")):
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = [arg_name(a) for a in split_args(text[m.end():i - 1])]
        k = defs.get(name)
        if k is not None and k.params:
            writes = [a for p, a in zip(k.params, args, strict=False) if p.startswith(WRITES)]
        elif name.startswith("aoti_torch_") and name.endswith("_out") and args:
            writes = [args[0]]
        else:
            writes = [a for a in args if a.startswith("buf")]
        res = [alias.get(a, a) for a in args]
        sites.append(LaunchSite(name, text.count("\n", 0, pos) + 1, pos, res, [alias.get(w, w) for w in writes]))
    return sites


def producers(wrapper: Source, defs: dict[str, Kernel], kernel: str) -> list[str]:
    """Kernels that last wrote the buffers the (last) launch of kernel reads, in launch order."""
    sites = launch_order(wrapper, defs)
    idx = next((i for i in range(len(sites) - 1, -1, -1) if sites[i].kernel == kernel), None)
    if idx is None:
        return []
    found: list[str] = []
    for buf in (a for a in sites[idx].args if a.startswith("buf")):
        for s in reversed(sites[:idx]):
            if buf in s.writes:
                if s.kernel not in found:
                    found.append(s.kernel)
                break
    return found
