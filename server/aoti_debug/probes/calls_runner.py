"""Run a repro script with its AOTI package loads and calls recorded (the package, each tensor in and out).

Run as `python calls_runner.py OUT_DIR SCRIPT [ARGS...]` in the target interpreter: the script runs as
`__main__` with `sys.argv = [SCRIPT, *ARGS]`, exactly as `python SCRIPT ARGS...` would run it, after hooks
are put on `torch._inductor.aoti_load_package`, `AOTICompiledModel.__call__` / `.load_constants` and
`torch._export.aot_load`. Each event is written to OUT_DIR/calls.jsonl and flushed to disk before the
package code runs, so a process that dies inside a call still names it: its last `start` has no `end`.

Inputs are described with bounded statistics (min, max, NaN/Inf counts, a few values); their values are
saved in full (torch.save, OUT_DIR/call_<n>_inputs.pt) only when AOTI_DEBUG_CALLS_SAVE_BYTES is set, and
only for calls whose inputs fit under that many bytes.
"""

import functools
import importlib.util
import json
import os
import sys
import time

# The helpers live beside this file; sys.path[0] becomes the script's folder, so script_runner.py is loaded by path
# and loads the others (the eager comparison for the script's aoti_debug_eager hook, the ISA probe reuse).
_spec = importlib.util.spec_from_file_location("aoti_debug_script_runner",
                                               os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "script_runner.py"))
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)
eager = runner.load_beside("eager_probe.py", "aoti_debug_eager_probe")
isa_probe = runner.isa_probe

# Calls described in full; later calls keep only a one-line start/end record in current.json.
DETAILED_CALLS = 50
# Statistics are skipped for a tensor with more elements (they would cost a pass over it).
STATS_MAX_NUMEL = 1 << 27
SAMPLE = 8
SAVED_CALLS = 3


class Recorder:
    """Appends events to calls.jsonl, durable before the package code they announce runs."""

    def __init__(self, out_dir):
        os.makedirs(out_dir, exist_ok=True)
        self.dir = out_dir
        self.file = open(os.path.join(out_dir, "calls.jsonl"), "a", encoding="utf-8")  # noqa: SIM115
        self.n = {"load": 0, "call": 0, "load_constants": 0}
        self.saved = 0
        # aoti_load_package calls load_package: only the outermost load is recorded
        self.loading = 0
        self.save_cap = int(os.environ.get("AOTI_DEBUG_CALLS_SAVE_BYTES", "0") or 0)

    def write(self, event, durable=True):
        event["t"] = round(time.time(), 6)
        if event.get("kind") == "call" and event["index"] > DETAILED_CALLS:
            # past the detailed calls only the newest start/end is kept, overwritten in place
            with open(os.path.join(self.dir, "current.json"), "w", encoding="utf-8") as f:
                json.dump({k: event[k] for k in ("event", "kind", "index", "package", "t") if k in event}, f)
                f.flush()
                os.fsync(f.fileno())
            return
        self.file.write(json.dumps(event, default=str) + "\n")
        self.file.flush()
        if durable:
            os.fsync(self.file.fileno())

    def next(self, kind):
        self.n[kind] += 1
        return self.n[kind]


def describe(t, stats=True):
    """dtype, shape, stride, device and bounded statistics of one tensor (never raises)."""
    import torch

    if not isinstance(t, torch.Tensor):
        return {"type": type(t).__name__}
    d = {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape), "device": str(t.device),
         "numel": t.numel()}
    try:
        d["stride"] = list(t.stride())
        d["storage_offset"] = t.storage_offset()
    except RuntimeError:  # sparse or opaque layouts
        pass
    if not stats or t.numel() == 0 or t.device.type == "meta":
        return d
    if t.numel() > STATS_MAX_NUMEL:
        d["stats_skipped"] = f"more than {STATS_MAX_NUMEL} elements"
        return d
    try:
        with torch.no_grad():
            x = t.detach()
            if x.is_complex():
                x = torch.view_as_real(x)
            if x.dtype == torch.bool:
                d["true_count"] = int(x.sum().item())
            elif x.is_floating_point():
                f = x.float()
                finite = torch.isfinite(f)
                d["nan"] = int(torch.isnan(f).sum().item())
                d["posinf"] = int(torch.isposinf(f).sum().item())
                d["neginf"] = int(torch.isneginf(f).sum().item())
                d["zeros"] = int((f == 0).sum().item())
                d["negatives"] = int((f < 0).sum().item())
                if bool(finite.any().item()):
                    masked = torch.where(finite, f, torch.full_like(f, float("inf")))
                    d["min"], d["min_at"] = float(masked.min().item()), at(t, masked.argmin())
                    masked = torch.where(finite, f, torch.full_like(f, float("-inf")))
                    d["max"], d["max_at"] = float(masked.max().item()), at(t, masked.argmax())
                    d["mean"] = float(f[finite].double().mean().item())
            else:
                d["min"], d["min_at"] = int(x.min().item()), at(t, x.argmin())
                d["max"], d["max_at"] = int(x.max().item()), at(t, x.argmax())
                d["negatives"] = int((x < 0).sum().item())
            d["sample"] = x.flatten()[:SAMPLE].tolist()
    except Exception as exc:  # a CUDA error pending from the call shows up here: that is evidence too
        d["stats_error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    return d


def at(t, flat_index):
    """The multi-index of a flat (row-major) position in t."""
    i, out = int(flat_index.item()), []
    for size in reversed(list(t.shape)):
        out.append(i % size if size else 0)
        i //= size if size else 1
    return out[::-1]


def flat_tensors(obj):
    """The tensors of a nested output, in pytree order."""
    from torch.utils import _pytree as pytree

    return pytree.tree_leaves(obj)


def install(rec):
    """Put the hooks on every AOTI entry point this torch has."""
    import torch

    def package_of(model):
        return getattr(model, "_aoti_debug_package", None)

    def wrap_load(fn, name):
        @functools.wraps(fn)
        def load(path, *args, **kwargs):
            if rec.loading:
                return fn(path, *args, **kwargs)
            rec.loading += 1
            try:
                return _load(path, *args, **kwargs)
            finally:
                rec.loading -= 1

        def _load(path, *args, **kwargs):
            i = rec.next("load")
            pkg = os.fspath(path) if isinstance(path, (str, os.PathLike)) else repr(path)
            rec.write({"event": "start", "kind": "load", "index": i, "package": pkg, "via": name})
            t0 = time.monotonic()
            try:
                model = fn(path, *args, **kwargs)
            except BaseException as exc:
                rec.write({"event": "error", "kind": "load", "index": i, "package": pkg,
                           "error": f"{type(exc).__name__}: {exc}"[:2000], "duration_s": time.monotonic() - t0})
                raise
            try:
                model._aoti_debug_package = pkg
            except Exception:  # a callable that takes no attributes still gets recorded by its calls
                pass
            rec.write({"event": "end", "kind": "load", "index": i, "package": pkg,
                       "duration_s": round(time.monotonic() - t0, 6)})
            return model if name != "aot_load" else wrap_callable(model, pkg)
        return load

    def record_call(pkg, fn, args, kwargs):
        i = rec.next("call")
        detailed = i <= DETAILED_CALLS
        leaves = [x for x in flat_tensors((args, kwargs))]
        start = {"event": "start", "kind": "call", "index": i, "package": pkg}
        if detailed:
            start["inputs"] = [describe(x) for x in leaves]
            if rec.save_cap and rec.saved < SAVED_CALLS:
                size = sum(x.numel() * x.element_size() for x in leaves if isinstance(x, torch.Tensor))
                if size <= rec.save_cap:
                    path = os.path.join(rec.dir, f"call_{i}_inputs.pt")
                    torch.save([x for x in leaves if isinstance(x, torch.Tensor)], path)
                    start["inputs_file"] = path
                    rec.saved += 1
        hook = eager.find_hook() if detailed and i <= eager.EAGER_CALLS else None
        cloned = eager.clone_inputs(args, kwargs) if hook is not None else None
        rec.write(start)
        t0 = time.monotonic()
        try:
            out = fn(*args, **kwargs)
        except BaseException as exc:
            rec.write({"event": "error", "kind": "call", "index": i, "package": pkg,
                       "error": f"{type(exc).__name__}: {exc}"[:2000], "duration_s": time.monotonic() - t0})
            raise
        end = {"event": "end", "kind": "call", "index": i, "package": pkg,
               "duration_s": round(time.monotonic() - t0, 6)}
        if detailed:
            end["outputs"] = [describe(x) for x in flat_tensors(out)]
        if cloned is not None:
            end["eager"] = eager.compare(rec.dir, i, out, hook, cloned)
        elif hook is not None:
            end["eager"] = {"error": f"inputs above {eager.CLONE_MAX_BYTES} bytes: not compared with eager"}
        rec.write(end, durable=False)
        return out

    def wrap_callable(fn, pkg):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            return record_call(pkg, fn, args, kwargs)
        return call

    classes = []
    for modname in ("torch.export.pt2_archive._package", "torch._inductor.package.package"):
        try:
            mod = __import__(modname, fromlist=["AOTICompiledModel"])
        except Exception:  # older or newer torch: the other place has it
            continue
        cls = getattr(mod, "AOTICompiledModel", None)
        if cls is not None and cls not in classes:
            classes.append(cls)
    for cls in classes:
        orig_call = cls.__call__

        def __call__(self, *args, _orig=orig_call, **kwargs):
            return record_call(package_of(self), functools.partial(_orig, self), args, kwargs)

        cls.__call__ = __call__
        if hasattr(cls, "load_constants"):
            orig_lc = cls.load_constants

            def load_constants(self, constants_map, *args, _orig=orig_lc, **kwargs):
                i = rec.next("load_constants")
                names = sorted(constants_map)[:2000] if isinstance(constants_map, dict) else None
                rec.write({"event": "start", "kind": "load_constants", "index": i, "package": package_of(self),
                           "names": names, "kwargs": {k: repr(v) for k, v in kwargs.items()}})
                try:
                    out = _orig(self, constants_map, *args, **kwargs)
                except BaseException as exc:
                    rec.write({"event": "error", "kind": "load_constants", "index": i,
                               "package": package_of(self), "error": f"{type(exc).__name__}: {exc}"[:2000]})
                    raise
                rec.write({"event": "end", "kind": "load_constants", "index": i, "package": package_of(self)})
                return out

            cls.load_constants = load_constants

    import torch._inductor as inductor

    for owner, attr in ((inductor, "aoti_load_package"),):
        if hasattr(owner, attr):
            setattr(owner, attr, wrap_load(getattr(owner, attr), attr))
    try:
        import torch._inductor.package as pkgmod

        if hasattr(pkgmod, "load_package"):
            pkgmod.load_package = wrap_load(pkgmod.load_package, "load_package")
    except Exception:  # no package module in this torch
        pass
    try:
        import torch._export as export_mod

        if hasattr(export_mod, "aot_load"):
            export_mod.aot_load = wrap_load(export_mod.aot_load, "aot_load")
    except Exception:  # no torch._export in this torch
        pass
    return classes


def main(argv):
    if len(argv) < 3:
        print("usage: calls_runner.py OUT_DIR SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    out_dir, script = argv[1], argv[2]
    rec = Recorder(out_dir)
    isa_probe.install()  # only with AOTI_DEBUG_REUSE_ISA_PROBE=1 (the reuse_isa_probe preset)
    try:
        import torch  # noqa: F401 - the hooks need it; the script imports it anyway
    except Exception as exc:
        rec.write({"event": "note", "kind": "runner", "note": f"torch not importable: {exc}"})
    else:
        found = install(rec)
        rec.write({"event": "note", "kind": "runner", "torch": torch.__version__,
                   "hooked_classes": [f"{c.__module__}.{c.__qualname__}" for c in found]})
    runner.run_script(script, argv[3:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
