"""Time limits the tools' parameters default to and are bounded by.

Plain numbers in a module of their own: the MCP adapter needs them to declare the tools' parameters at start,
before (and without) importing the engines that use them.
"""

# rerun_with_flags, per run: under Codex's 60 s default tool timeout, with room for classifying the output.
DEFAULT_TIMEOUT_S = 40.0
# A compile under compute-sanitizer can take many minutes; beyond this something hangs.
MAX_TIMEOUT_S = 1800.0
# dump_kernel_inputs, per pass: each recompiles the repro; a small model takes 30-60 s on two CPU cores.
DEFAULT_PASS_TIMEOUT_S = 600.0
# triage compiles in its baseline and in every compile-time rerun: minutes, not seconds.
DEFAULT_BUDGET_S = 900.0
MAX_BUDGET_S = 3600.0
# triage, per run: a CPU compile of a tiny model takes 30-80 s on two busy cores; memcheck several times that.
DEFAULT_RUN_TIMEOUT_S = 300.0
