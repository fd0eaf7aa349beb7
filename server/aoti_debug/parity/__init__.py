"""check_parity: the package's contract (package/) compared with the runtime probed in the target Python and with
the inputs (a file or a captured call). Imports common/, package/ and runs/ (the probe, the run store)."""
