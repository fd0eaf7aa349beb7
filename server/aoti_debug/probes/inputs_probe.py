"""Describe the tensors in a torch.save file as the model would receive them (flat, pytree order).

Run as `python inputs_probe.py INPUTS OUT.json` in the target interpreter. Loads with
weights_only=True and never touches a GPU: storages stay on the CPU and each tensor reports the
device it was saved from.
"""

import json
import sys


def describe(src):
    """The flat tensors of a torch.save file: {"status": ok|bad_inputs|no_torch, "inputs": [...], ...}."""
    result = {"status": "ok", "inputs": [], "non_tensors": []}
    try:
        import torch
        from torch.utils import _pytree as pytree
    except Exception as exc:  # not torch: the caller reports it
        result.update(status="no_torch", reason=f"{type(exc).__name__}: {exc}")
        return result
    locations = {}

    def keep_on_cpu(storage, location):
        locations[storage.data_ptr()] = location
        return storage

    try:
        obj = torch.load(src, weights_only=True, map_location=keep_on_cpu)
    except Exception as exc:  # any unpickling failure means "not a tensor file" for the caller
        result.update(status="bad_inputs", reason=f"torch.load(weights_only=True) failed: {type(exc).__name__}: "
                      f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
        return result
    leaves, _ = pytree.tree_flatten_with_path(obj)
    for path, leaf in leaves:
        where = pytree.keystr(path) or "<root>"
        if isinstance(leaf, torch.Tensor):
            loc = locations.get(leaf.untyped_storage().data_ptr(), str(leaf.device))
            result["inputs"].append({
                "path": where, "dtype": str(leaf.dtype).removeprefix("torch."), "shape": list(leaf.shape),
                "stride": list(leaf.stride()), "device": loc, "storage_offset": leaf.storage_offset(),
                "contiguous": leaf.is_contiguous(),
            })
        else:
            result["non_tensors"].append({"path": where, "type": type(leaf).__name__})
    if not result["inputs"]:
        kinds = ", ".join(sorted({n["type"] for n in result["non_tensors"]})) or type(obj).__name__
        result.update(status="bad_inputs", reason=f"no tensors in the file (found: {kinds})")
    return result


def main():
    with open(sys.argv[2], "w") as f:
        json.dump(describe(sys.argv[1]), f)


if __name__ == "__main__":
    main()
