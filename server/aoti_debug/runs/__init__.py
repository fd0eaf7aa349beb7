"""Running the user's repro: the one subprocess wrapper (proc), its output pump and its process tree, argv policy
(command), debug flags, the run store and its slots, rerun with outcome comparison, forensics (faulthandler, gdb,
compute-sanitizer), the calls capture, and probes run in the target Python. Imports common/ and classify/ (to
classify a run's log)."""
