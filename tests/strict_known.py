"""What the strict example check (aoti_debug.triage.examples.check) finds wrong in the recorded GPU runs, as data.

The recorded GPU suite (tests/fixtures/gpu_triage_suite/, H200 since 2026-11-25), its MCP stdio run
(tests/fixtures/gpu_mcp_triage/) and the offline triage of the H200 capture (tests/fixtures/gpu_capture/) printed
full matches under the older check; docs/gpu-verification.md states these numbers. A fix or a new difference fails
the tests that read this: update it (and the docs) after a new GPU run, never to make a test pass.
"""

# example -> its differences; examples not named here match. The 2026-11-25 H200 run: all 21 match.
GPU_SUITE: dict[str, list[str]] = {}
# the 2026-11-25 MCP run (H200) triaged index_oob, ima_triton, static_shape_mismatch and toolchain_segfault: all match
MCP_STDIO: dict[str, list[str]] = {}
# offline there are no captured calls: the kernel's launch names input 1 as the index it reads with, but without
# its values the crash site stays a hypothesis (the live triage has the call; see docs/gpu-verification.md)
OFFLINE_CAPTURE = {"ima_triton": ["root cause: expected index_value_out_of_range (index_value_out_of_range), got "
                                  "illegal_access (not named)", "input index: expected 1 (baseline), got none"]}
