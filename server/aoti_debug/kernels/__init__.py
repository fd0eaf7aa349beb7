"""The kernels a run launched: the intermediate value printer's output parsed and collected per launch, the last
kernel before a crash and its inputs (dump), suspects, and the index-out-of-bounds explanation from the wrapper
and kernel sources. Imports common/, package/ and runs/."""
