"""Run a repro script as `python SCRIPT ARGS...` would, with inductor's ISA probe answers reused from its cache
(isa_probe.py).

Run as `python script_runner.py SCRIPT [ARGS...]` in the target interpreter, with AOTI_DEBUG_REUSE_ISA_PROBE=1: the
script runs as `__main__` with `sys.argv = [SCRIPT, *ARGS]`; nothing is imported before it but this file's helper.
calls_runner.py loads this file for load_beside, isa_probe and run_script.
"""

import importlib.util
import os
import runpy
import sys


def load_beside(filename, name):
    """A module that lives beside this file, loaded by path (sys.path[0] becomes the script's folder)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                     filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


isa_probe = load_beside("isa_probe.py", "aoti_debug_isa_probe")
sys.modules[isa_probe.NAME] = isa_probe  # a script can read isa_probe.NOTES


def run_script(script, args):
    """Run script as `__main__` with sys.argv = [script, *args] and its folder first on sys.path."""
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


def main(argv):
    if len(argv) < 2:
        print("usage: script_runner.py SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    isa_probe.install()
    run_script(argv[1], argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
