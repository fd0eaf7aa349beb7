"""Parse a model's generated wrapper C++ (torch 2.6-2.13 forms): inputs, checks, constants, specs, toolchain."""

from __future__ import annotations

import re
import shlex

from aoti_debug.package import torch_facts as parity_data
from aoti_debug.package.contract import ConstantSpec, DimSpec, InputContract, InputSpec, Toolchain, TorchHint

CMD_CHARS = 4000
INT = r"(-?\d+)L?"

INFO_RX = re.compile(r'\b(inputs|outputs)_info_\[(\d+)\]\.name\s*=\s*"([^"]*)";')
BASE_RX = re.compile(r"AOTInductorModelBase\(\s*(\d+),\s*(\d+),\s*(\d+)")
# The constructor's last argument, include_weights (constants embedded in the .so), matched right after BASE_RX.
WEIGHTS_RX = re.compile(r"[^{;]*?,\s*(true|false)\s*\)\s*\{")
CONST_RX = re.compile(r"^\s*constants_info_\[(\d+)\]\.(\w+)\s*=\s*(.*?);\s*$", re.M)
# ConstantHandle x = ConstantHandle(input_handles[i]); (2.6+), or auto x = input_handles[i]; (#122047, 2024)
BLOCK_RX = re.compile(
    r"(?:ConstantHandle\s+(\w+)\s*=\s*ConstantHandle\(|auto\s+(\w+)\s*=\s*)input_handles\[(\d+)\]\)?;")
BLOCK_END_RX = re.compile(
    r"_check_aoti_runtime_check_inputs_env\(\)\s*\{|::run_impl\(|__check_inputs_outputs\(\s*AtenTensorHandle")
SIZE_ASSERT_RX = re.compile(r"if \(_check_aoti_runtime_check_inputs_env\(\)\) \{ ?"
                            r'assert_size_stride\((\w+), \{([^}]*)\}, \{([^}]*)\}, "input"\)')
BIND_RX = re.compile(r"\bint64_t\s+(\w+)\s*=\s*(\w+)_size\[(\d+)\];")
LOADKERNEL_RX = re.compile(r'loadKernel\(\s*"([^"]+)"\s*,\s*"([^"]+)"')
TRAILER_RX = re.compile(r"^// (Compile|Link) cmd\n// (.*)$", re.M)


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def _expr(item: str) -> int | str:
    """'4L' -> 4; 's27' / '8L*s27' stay symbolic (without the L suffixes)."""
    item = re.sub(r"\b(\d+)L\b", r"\1", item.strip())
    return int(item) if re.fullmatch(r"-?\d+", item) else item


def _spec_string(text: str, name: str) -> str | None:
    """The value of in_spec_/out_spec_: R"(...)" pieces (2.7+) or one escaped "..." string (older)."""
    m = re.search(rf"\b{name}\s*=", text)
    if not m:
        return None
    pos, pieces = m.end(), []
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if text.startswith('R"(', pos):
            end = text.find(')"', pos + 3)
            if end < 0:
                return None
            pieces.append(text[pos + 3:end])
            pos = end + 2
        elif text.startswith('"', pos):
            m2 = re.compile(r'"((?:[^"\\\n]|\\.)*)"').match(text, pos)
            if not m2:
                return None
            raw = m2.group(1)
            pieces.append(re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)), raw))
            pos = m2.end()
        else:
            break
    return "".join(pieces) if pieces else None


def _check_block(var: str, body: str, spec: InputSpec) -> None:
    v = re.escape(var)
    enums = parity_data.enums()
    m = re.search(rf"{v}_expected_dtype\s*=\s*aoti_torch_dtype_(\w+)\(\)", body)
    if m:
        spec.dtype = enums.dtype_name(m.group(1)) or m.group(1)
    dims: dict[int, DimSpec] = {}
    for val, d in re.findall(rf"if \({INT} != {v}_size\[(\d+)\]\)", body):
        dims.setdefault(int(d), DimSpec(dim=int(d))).value = int(val)
    for d, lo in re.findall(rf"if \({v}_size\[(\d+)\] < {INT}\)", body):
        dims.setdefault(int(d), DimSpec(dim=int(d))).min = int(lo)
    for d, hi in re.findall(rf"if \({v}_size\[(\d+)\] > {INT}\)", body):
        dims.setdefault(int(d), DimSpec(dim=int(d))).max = int(hi)
    strides: dict[int, int] = {int(d): int(val) for val, d in re.findall(rf"if \({INT} != {v}_stride\[(\d+)\]\)", body)}
    m = re.search(rf"{v}_expected_device_type\s*=\s*(\d+);", body)
    if m:
        spec.device_type = enums.device_name(int(m.group(1)))
    rank = max([*dims, *strides], default=-1) + 1
    spec.rank = rank if rank else None
    spec.sizes = [dims.get(d, DimSpec(dim=d)) for d in range(rank)]
    spec.strides = [strides.get(d) for d in range(rank)]
    spec.checked = True


def _apply_size_assert(spec: InputSpec, sizes: str, strides: str) -> None:
    size_items = [_expr(s) for s in sizes.split(",") if s.strip()]
    stride_items = [_expr(s) for s in strides.split(",") if s.strip()]
    old = {d.dim: d for d in spec.sizes}
    spec.sizes = []
    for d, item in enumerate(size_items):
        dim = old.get(d, DimSpec(dim=d))
        if isinstance(item, int):
            dim.value = item
        elif re.fullmatch(r"[A-Za-z_]\w*", item):
            dim.symbol = item
        spec.sizes.append(dim)
    spec.strides = [item if isinstance(item, int) or item else None for item in stride_items]
    spec.rank, spec.rank_exact = len(size_items), True


def _infer_symbols(specs: list[InputSpec]) -> None:
    """Older wrappers (2.11) bind a size symbol once, at its first input: a later dynamic dim left without one
    is an already-bound symbol; when exactly one bound symbol has its range, take that one."""
    ranges: dict[str, tuple[int | None, int | None]] = {}
    for spec in specs:
        for d in spec.sizes:
            if d.symbol and d.value is None:
                ranges.setdefault(d.symbol, (d.min, d.max))
    for spec in specs:
        for d in spec.sizes:
            if d.value is None and d.symbol is None and (d.min is not None or d.max is not None):
                same = [s for s, r in ranges.items() if r == (d.min, d.max)]
                if len(same) == 1:
                    d.symbol, d.symbol_inferred = same[0], True


def parse_contract(text: str, model: str, device_key: str | None = None) -> tuple[InputContract, list[str]]:
    """The InputContract stated by one wrapper source, plus notes on what could not be read."""
    try:
        return _parse_contract(text, model, device_key)
    except ValueError as exc:  # a crafted source: a number past int()'s digit limit
        return InputContract(model=model, device_key=device_key), [f"the wrapper's input checks are unreadable: {exc}"]


def _parse_contract(text: str, model: str, device_key: str | None) -> tuple[InputContract, list[str]]:
    notes: list[str] = []
    c = InputContract(model=model, device_key=device_key)
    names: dict[str, dict[int, str]] = {"inputs": {}, "outputs": {}}
    for kind, idx, name in INFO_RX.findall(text):
        names[kind][int(idx)] = name
    c.output_names = [names["outputs"][i] for i in sorted(names["outputs"])]
    if m := BASE_RX.search(text):
        c.num_inputs, c.num_outputs, c.num_constants = (int(x) for x in m.groups())
        if w := WEIGHTS_RX.match(text, m.end(), m.end() + 500):
            c.constants_in_so = w.group(1) == "true"
    count = c.num_inputs if c.num_inputs is not None else (max(names["inputs"], default=-1) + 1)
    specs = [InputSpec(index=i, name=names["inputs"].get(i, f"input{i}")) for i in range(count)]
    blocks = list(BLOCK_RX.finditer(text))
    for n, m in enumerate(blocks):
        idx = int(m.group(3))
        if idx >= len(specs):
            notes.append(f"a check block names input_handles[{idx}] but the model has {len(specs)} inputs")
            continue
        stop = blocks[n + 1].start() if n + 1 < len(blocks) else len(text)
        if end := BLOCK_END_RX.search(text, m.end(), stop):
            stop = end.start()
        _check_block(m.group(1) or m.group(2), text[m.end():stop], specs[idx])
    by_name = {s.name: s for s in specs}
    for name, sizes, strides in SIZE_ASSERT_RX.findall(text):
        if name in by_name:
            _apply_size_assert(by_name[name], sizes, strides)
            c.size_asserts = True
    for sym, name, d in BIND_RX.findall(text):
        spec = by_name.get(name)
        if spec and int(d) < len(spec.sizes) and spec.sizes[int(d)].symbol is None:
            spec.sizes[int(d)].symbol = sym
    _infer_symbols(specs)
    c.inputs = specs
    if "_check_aoti_runtime_check_inputs_env" in text:
        c.checks = "runtime_env"
    elif blocks:
        c.checks = "always"
    elif "::run_impl(" in text:
        c.checks = "absent"
    if count and not blocks:
        notes.append("no input check code: dtypes, shapes and devices of the inputs are unknown")
    c.constants = _constants(text)
    c.in_spec, c.out_spec = _spec_string(text, "in_spec_"), _spec_string(text, "out_spec_")
    if not names["inputs"] and "inputs_info_" not in text:
        notes.append("no inputs_info_ in the wrapper: not a form this tool knows (newer torch?)")
    return c, notes


def _constants(text: str) -> list[ConstantSpec]:
    enums = parity_data.enums()
    fields: dict[int, dict[str, str]] = {}
    for idx, key, value in CONST_RX.findall(text):
        fields.setdefault(int(idx), {})[key] = value
    out = []
    for idx in sorted(fields):
        f = fields[idx]
        dtype = None
        if m := re.search(r"(?:cached_torch_dtype_|aoti_torch_dtype_)(\w+)|at::k(\w+)", f.get("dtype", "")):
            dtype = enums.dtype_name(m.group(1) or m.group(2))
        dev = re.search(r"cached_torch_device_type_(\w+)", f.get("device_type", ""))
        kind = re.search(r"ConstantType::(\w+)", f.get("type", ""))
        size = f.get("data_size", "")
        out.append(ConstantSpec(
            index=idx, name=f.get("name", "").strip('"'), original_fqn=f.get("original_fqn", "").strip('"') or None,
            dtype=dtype, shape=_ints(f.get("shape", "")), stride=_ints(f.get("stride", "")),
            device_type=dev.group(1) if dev else None, kind=kind.group(1) if kind else None,
            data_size=int(size) if size.isdigit() else None,
            from_folded={"true": True, "false": False}.get(f.get("from_folded", "")),
        ))
    return out


def parse_toolchain(text: str) -> Toolchain | None:
    """The last '// Compile cmd' / '// Link cmd' pair at the end of the source."""
    cmds: dict[str, str] = {}
    for kind, cmd in TRAILER_RX.findall(text[-200_000:]):
        cmds[kind] = cmd.strip()
    if "Compile" not in cmds:
        return None
    t = Toolchain(compile_cmd=cmds["Compile"][:CMD_CHARS], link_cmd=cmds.get("Link", "")[:CMD_CHARS] or None)
    try:
        words = shlex.split(cmds["Compile"])
    except ValueError:
        words = cmds["Compile"].split()
    t.compiler = words[0] if words else None
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w.startswith("-march="):
            t.march = w.split("=", 1)[1]
        elif w.startswith("-std="):
            t.std = w.split("=", 1)[1]
        elif re.fullmatch(r"-O[0-3sgz]?|-Ofast", w):
            t.opt_level = w
        elif w == "-D" and nxt and not nxt.startswith("-"):
            t.defines.append(nxt)
        elif w.startswith("-D") and len(w) > 2:
            t.defines.append(w[2:])
        elif w.startswith("-I"):
            t.include_dirs.append(w[2:])
        elif re.fullmatch(r"-m(avx\w*|sse\w*|fma|f16c|amx[\w-]*|neon|sve\w*|arch=\S+|cpu=\S+)", w):
            t.isa_flags.append(w)
    link = (cmds.get("Link") or "").split()
    t.libraries = [w[2:] for w in link if w.startswith("-l")]
    return t


def kernels_loaded(text: str) -> dict[str, str]:
    """Kernel name -> binary file basename, from loadKernel("<path>", "<name>", ...) calls (CUDA packages)."""
    return {name: path.rsplit("/", 1)[-1] for path, name in LOADKERNEL_RX.findall(text)}


def torch_hint(text: str) -> TorchHint:
    """Narrow the torch version range from version-specific forms (rules in data/torch_hints.yaml)."""
    hint = TorchHint()
    lo: tuple[int, ...] = ()
    hi: tuple[int, ...] | None = None
    for rule in parity_data.hints():
        if not re.search(rule.regex, text) or (rule.unless and re.search(rule.unless, text)):
            continue
        hint.evidence.append(f"{rule.id}: {rule.provenance}")
        if rule.min and parity_data.version_tuple(rule.min) > lo:
            lo, hint.min_version = parity_data.version_tuple(rule.min), rule.min
        if rule.max and (hi is None or parity_data.version_tuple(rule.max) < hi):
            hi, hint.max_version = parity_data.version_tuple(rule.max), rule.max
    return hint
