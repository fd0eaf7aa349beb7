"""Whether an operator is registered in a fresh `import torch` of this interpreter, and by what.

Run as `python op_probe.py OUT_JSON NS::NAME` in the target interpreter. Writes {"op", "torch",
"registered", "schemas", "registered_at", "loaded_libraries"}; never imports the user's code, so an
op found here is one torch itself (or a plugin torch auto-loads) provides.
"""

import json
import sys


def main(argv):
    out, op = argv[1], argv[2]
    facts = {"op": op, "registered": False, "schemas": [], "registered_at": [], "loaded_libraries": []}
    try:
        import torch

        facts["torch"] = torch.__version__
        facts["schemas"] = [str(s) for s in torch._C._jit_get_schemas_for_operator(op)][:8]
        facts["registered"] = bool(facts["schemas"])
        if facts["registered"]:
            # the dispatcher keys an overload by its full name (aten::add.Tensor); a custom op has none
            name = facts["schemas"][0].split("(", 1)[0]
            dump = torch._C._dispatch_dump(name) or torch._C._dispatch_dump(op)
            facts["registered_at"] = sorted({line.split("registered at ", 1)[1].strip()
                                             for line in (dump or "").splitlines() if "registered at " in line})[:8]
        facts["loaded_libraries"] = sorted(str(x) for x in getattr(torch.ops, "loaded_libraries", ()))[:20]
    except Exception as exc:  # any failure is the answer: the probe reports it instead of a traceback
        facts["error"] = f"{type(exc).__name__}: {exc}"[:500]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(facts, f)


if __name__ == "__main__":
    main(sys.argv)
