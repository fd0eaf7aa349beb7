"""The eager side of a captured call: the script's `aoti_debug_eager` run on the same inputs, its outputs compared.

Loaded by calls_runner.py in the target interpreter (never by the server). The hook is documented in
guides/wrong_output.md: a repro script that defines a module-level `aoti_debug_eager` (an nn.Module, or any
callable taking the package's arguments) bound by the time it calls the package gets, per captured call (the
first EAGER_CALLS), the outputs' mismatch summary against eager and, when they differ and the hook is an
nn.Module, the statistics of every node of the eager graph (torch.export on the captured inputs, run node by
node), which the server compares with the printer's per-kernel statistics to find the first kernel that diverges.
"""

import json
import os
import sys

HOOK = "aoti_debug_eager"
# Eager reruns cost a forward pass each: only the first calls are compared.
EAGER_CALLS = 3
# Inputs are cloned before the package call (a package may write into them); above this, no comparison.
CLONE_MAX_BYTES = 256 * 2**20
# Nodes of the eager graph described (a large model has many thousands).
MAX_NODES = 4000
# assert_close's default tolerances per dtype (torch/testing/_comparison.py).
TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
              "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def find_hook():
    """The script's eager model, if `__main__` defines it now (the script is running, so its globals are live)."""
    main = sys.modules.get("__main__")
    hook = getattr(main, HOOK, None) if main is not None else None
    return hook if callable(hook) else None


def clone_inputs(args, kwargs):
    """Detached copies of the call's tensors (same devices), or None when they are too large."""
    import torch
    from torch.utils import _pytree as pytree

    leaves = [x for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
    if sum(x.numel() * x.element_size() for x in leaves) > CLONE_MAX_BYTES:
        return None
    return pytree.tree_map(lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x, (args, kwargs))


def _where(t, flat):
    i, out = int(flat), []
    for size in reversed(list(t.shape)):
        out.append(i % size if size else 0)
        i //= size if size else 1
    return out[::-1]


def diff(got, want):
    """One output against eager: element counts out of assert_close's tolerance, the largest differences."""
    import torch

    d = {"shape": list(got.shape), "eager_shape": list(want.shape), "dtype": str(got.dtype).removeprefix("torch."),
         "numel": got.numel()}
    if got.shape != want.shape or got.numel() == 0:
        d["mismatched"] = got.numel() if got.shape != want.shape else 0
        return d
    a, b = got.detach().cpu(), want.detach().cpu().to(got.dtype)
    if not a.is_floating_point() and not a.is_complex():
        bad = a != b
        d["mismatched"] = int(bad.sum().item())
    else:
        rtol, atol = TOLERANCES.get(d["dtype"], (1.3e-6, 1e-5))
        a64, b64 = a.double(), b.double()
        both_nan = torch.isnan(a64) & torch.isnan(b64)
        err = (a64 - b64).abs()
        bad = ~((err <= atol + rtol * b64.abs()) | both_nan)
        d["mismatched"] = int(bad.sum().item())
        d["nan_only_in_package"] = int((torch.isnan(a64) & ~torch.isnan(b64)).sum().item())
        d["rtol"], d["atol"] = rtol, atol
        finite = torch.isfinite(err)
        if bool(finite.any().item()):
            e = torch.where(finite, err, torch.zeros_like(err))
            d["max_abs"], d["max_abs_at"] = float(e.max().item()), _where(a, e.argmax())
            rel = e / b64.abs().clamp_min(1e-12)
            d["max_rel"] = float(rel.max().item())
    if d["mismatched"]:
        d["first_at"] = _where(a, bad.flatten().nonzero()[0, 0])
        d["package_sample"] = a.flatten()[:6].tolist()
        d["eager_sample"] = b.flatten()[:6].tolist()
    return d


def _stats(t):
    import torch

    if not isinstance(t, torch.Tensor) or t.numel() == 0 or not (t.is_floating_point() or t.dtype in (
            torch.int32, torch.int64, torch.int16, torch.int8, torch.uint8)):
        return None
    f = t.detach().double()
    finite = torch.isfinite(f)
    s = {"shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch."), "numel": t.numel(),
         "nan": int(torch.isnan(f).sum().item()), "inf": int(torch.isinf(f).sum().item())}
    if bool(finite.any().item()):
        v = f[finite]
        s.update(min=float(v.min().item()), max=float(v.max().item()), mean=float(v.mean().item()))
    return s


def node_stats(model, args, kwargs):
    """Every call_function node of model's exported graph run on these inputs: its name, op, the constants it
    reads (their FQNs) and its output's statistics."""
    import torch
    from torch.utils import _pytree as pytree

    ep = torch.export.export(model, tuple(args), kwargs or None)
    gm = ep.module()
    consts = {}
    nodes = []

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            if n.op == "get_attr":
                consts[n.name] = str(n.target)
            elif n.op == "call_function" and len(nodes) < MAX_NODES:
                reads = [consts[a.name] for a in pytree.tree_leaves((n.args, n.kwargs))
                         if isinstance(a, torch.fx.Node) and a.name in consts]
                first = next((x for x in pytree.tree_leaves(out) if isinstance(x, torch.Tensor)), None)
                target = getattr(n.target, "__name__", str(n.target))
                nodes.append({"name": n.name, "op": target, "reads": reads, "stats": _stats(first)})
            return out

    flat = pytree.tree_leaves((tuple(args), kwargs or {}))
    with torch.no_grad():
        Recorder(gm).run(*flat)
    return nodes


def compare(out_dir, index, pkg_out, hook, cloned):
    """The call's comparison with eager, for its end record; the node statistics go to a file when they differ."""
    import torch
    from torch.utils import _pytree as pytree

    args, kwargs = cloned
    try:
        with torch.no_grad():
            want = hook(*args, **kwargs)
    except Exception as exc:
        return {"error": f"{HOOK} raised {type(exc).__name__}: {str(exc)[:300]}"}
    got_leaves = [x for x in pytree.tree_leaves(pkg_out) if isinstance(x, torch.Tensor)]
    want_leaves = [x for x in pytree.tree_leaves(want) if isinstance(x, torch.Tensor)]
    # no zip(strict=): the target Python may be 3.9; a count mismatch is reported below
    result = {"outputs": [diff(g, w) for g, w in zip(got_leaves, want_leaves)]}  # noqa: B905
    if len(got_leaves) != len(want_leaves):
        result["error"] = f"the package returned {len(got_leaves)} tensors, eager {len(want_leaves)}"
    if any(o.get("mismatched") for o in result["outputs"]) and isinstance(hook, torch.nn.Module):
        try:
            nodes = node_stats(hook, args, kwargs)
        except Exception as exc:  # export can refuse a model eager runs fine: the outputs' summary still stands
            result["nodes_error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
        else:
            path = os.path.join(out_dir, f"eager_nodes_{index}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(nodes, f)
            result["nodes_file"] = path
    return result
