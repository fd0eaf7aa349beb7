"""triage: the one-call chain. The engine runs steps (plug-ins in a registry) chosen by the matched guide's
next_steps, the causes and culprits they name, fixes chosen by the evidence, the report model, its markdown
explanation, and the planted examples. Imports every engine layer below it; nothing imports triage but mcp/ and cli/."""
