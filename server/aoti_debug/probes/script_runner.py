"""Run a repro script as `python SCRIPT ARGS...` would, with inductor's ISA probe answers reused from its cache
(isa_probe.py).

Run as `python script_runner.py SCRIPT [ARGS...]` in the target interpreter, with AOTI_DEBUG_REUSE_ISA_PROBE=1: the
script runs as `__main__` with `sys.argv = [SCRIPT, *ARGS]`; nothing is imported before it but this file's helper.
"""

import importlib.util
import os
import runpy
import sys

# isa_probe.py lives beside this file; sys.path[0] becomes the script's folder, so it is loaded by path.
_spec = importlib.util.spec_from_file_location("aoti_debug_isa_probe",  # isa_probe.NAME
                                               os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "isa_probe.py"))
isa_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(isa_probe)
sys.modules[isa_probe.NAME] = isa_probe


def main(argv):
    if len(argv) < 2:
        print("usage: script_runner.py SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    script = argv[1]
    isa_probe.install()
    sys.argv = [script, *argv[2:]]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
