"""Exec the argv in $AOTI_DEBUG_EXEC_ARGV (JSON): a debugger starts this fixed command, then follows the exec.

gdb re-splits the arguments it passes to a program (with the shell off it breaks those holding spaces),
so forensic runs never hand it the user's argv.
"""

import json
import os

ENV = "AOTI_DEBUG_EXEC_ARGV"

if __name__ == "__main__":
    argv = json.loads(os.environ.pop(ENV))
    os.execv(argv[0], argv)
