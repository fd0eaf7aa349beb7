"""What names a root cause, as data (data/triage.yaml): naming patterns, parity kinds per pattern, backtraces."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from aoti_debug.classify.engine import Classification
from aoti_debug.classify.guides import load_guides
from aoti_debug.common.yamlio import load_model
from aoti_debug.runs.flags import flag_table

DATA = Path(__file__).resolve().parent.parent / "data" / "triage.yaml"
# Flags every run gets (flags.resolve): a preset made only of these is already in the baseline.
DEFAULT_FLAGS = {"PYTHONFAULTHANDLER": "1"}


class TriageRules(BaseModel):
    model_config = ConfigDict(extra="forbid")
    min_confidence: float = Field(ge=0, le=1)
    naming_fields: dict[str, list[str]]
    culprit_fields: dict[str, list[str]]
    culprit_lines: dict[str, list[str]]
    custom_op_phases: dict[str, str]
    native_abi_kinds: dict[str, str]
    source_owners: dict[str, str]
    generated_line_owners: dict[str, str]
    contradicted_by: dict[str, list[str]]
    check_kinds: dict[str, str]
    parity_explains: dict[str, list[str]]
    parity_suggests: dict[str, list[str]]
    parity_cause_pattern: dict[str, str]
    points_to_pattern: dict[str, str]
    compile_flags_needed: dict[str, list[str]]
    example_root_causes: dict[str, list[str]]


@cache
def rules() -> TriageRules:
    return load_model(DATA, TriageRules)


def names_cause(c: Classification | None) -> bool:
    """The classification alone states the cause (an input_handles[i] line, an ABI error...)."""
    r = rules()
    if c is None or c.pattern not in r.naming_fields or c.confidence < r.min_confidence:
        return False
    wanted = r.naming_fields[c.pattern]
    return not wanted or any(k in c.fields for k in wanted)


def culprit_level(c: Classification) -> bool:
    """The classification's fields name what to change (an input index, a symbol, an op, a source line)."""
    r = rules()
    return any(k in c.fields for k in r.culprit_fields.get(c.pattern, [])) or any(
        re.search(rx, e.text) for rx in r.culprit_lines.get(c.pattern, []) for e in c.evidence)


def priority(pattern: str | None) -> int:
    g = load_guides().get(pattern or "")
    return g.rule.priority if g and g.rule else -1


def more_specific(new: Classification | None, current: str | None) -> bool:
    """A rerun's pattern replaces the current one when it ranks higher (causes outrank their consequences)."""
    return new is not None and new.pattern != "unknown" and priority(new.pattern) > priority(current)


def preset_flags(preset: str) -> dict[str, str]:
    p = flag_table().presets.get(preset)
    return dict(p.flags) if p else {}


def in_every_run(preset: str) -> bool:
    """The preset sets nothing beyond what every run already has (faulthandler)."""
    flags = preset_flags(preset)
    return bool(flags) and preset not in ("backtrace", "memcheck") and all(
        DEFAULT_FLAGS.get(k) == v for k, v in flags.items())


def runtime_flags(preset: str) -> dict[str, str]:
    specs = flag_table().by_name
    return {k: v for k, v in preset_flags(preset).items() if specs[k].phase == "runtime"}


def needs_compile(tool: str, preset: str | None, pattern: str | None) -> bool:
    """Whether this step only means something when the command rebuilds the package."""
    if tool == "dump_kernel_inputs":
        return True
    if tool != "rerun_with_flags" or not preset:
        return False
    compile_flags = set(preset_flags(preset)) - set(runtime_flags(preset))
    if not compile_flags:
        return False
    only_for = rules().compile_flags_needed.get(preset)
    return only_for is None or pattern in only_for
