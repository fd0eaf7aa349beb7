"""A .pt2 package read without loading it: the bounded zip reader, the ELF scan of its shared objects, the
wrapper.cpp input-check contract, the kernel sources, torch's enums and version facts. Imports common/ only."""
