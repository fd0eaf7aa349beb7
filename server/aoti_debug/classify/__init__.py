"""Classification: the guides and their routing rules (loaded as data), the log scan, the phase, the engine that
ranks patterns for a log, and the SKILL.md table generated from the guides. Imports common/ only."""
