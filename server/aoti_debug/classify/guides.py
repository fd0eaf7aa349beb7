"""Load guides/*.md: front matter validated into rules (pattern guides) and workflow guides."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from aoti_debug.common.errors import BadInput, DataError
from aoti_debug.common.fragments import Regex
from aoti_debug.common.paths import guides_dir
from aoti_debug.common.yamlio import YAMLError, load_yaml

# The public contract: these ids never change meaning.
PATTERN_IDS: tuple[str, ...] = (
    "triton_index_out_of_bounds",
    "device_mismatch_load",
    "input_device_mismatch",
    "input_shape_mismatch",
    "cuda_illegal_memory_access",
    "nan_inf",
    "constant_loading",
    "native_abi",
    "cpp_compile_error",
    "export_failure",
    "lowering_error",
    "custom_op",
    "out_of_memory",
    "segfault_no_message",
    "toolchain_setup",
    "version_skew",
    "wrong_output",
    "unknown",
)

TOOL_NAMES = (
    "classify_error",
    "check_parity",
    "rerun_with_flags",
    "get_run",
    "dump_kernel_inputs",
    "explain_index_oob",
    "triage",
)

Phase = Literal["export", "lowering", "compile", "load", "runtime", "teardown"]
URI_SCHEME = "aoti-guide"


class Pattern(BaseModel):
    """One regex of a rule, applied to a cleaned log line."""

    model_config = ConfigDict(extra="forbid")
    regex: Regex = Field(description="Python regex, matched with re.search against one cleaned line (the line as "
                         "logged with raw: true); shared fragments, (?&name), written out (data/fragments.yaml)")
    needle: str | list[str] = Field(
        description="Literal text every matching line contains (or a list: each matching line contains one)"
    )
    weight: float = Field(gt=0, le=1, description="How strongly one matching line indicates the rule")
    note: str = Field(default="", description="Why this line is evidence, for rule writers")
    aoti_only: bool = Field(default=False, description=(
        "Text eager PyTorch prints as well: it decides only in a log that shows a compiled model or package "
        "(a phase marker or a weak cue); elsewhere it only ranks the alternatives"))
    frame: bool = Field(default=False, description=(
        "A stack frame: it can decide when nothing more specific matched, but is not listed as evidence "
        "beside a line of the same rule that states the failure"))
    raw: bool = Field(default=False, description=(
        "Matched against the line as logged, before prefixes are stripped (a logger's source file is part of "
        "the prefix); the evidence shown is still the cleaned line"))
    yields_to: list[Literal[(*PATTERN_IDS, "any")]] = Field(  # type: ignore[valid-type]
        default_factory=list, description=(
            "Pattern ids whose decisive match in the same log makes this line a consequence, not a cause (an op "
            "missing because its library failed to load): it then only ranks the alternatives; `any`: every other "
            "pattern (a warning the program goes on after, so any cause printed beside it is the failure)"))

    @model_validator(mode="after")
    def _check(self) -> Pattern:
        try:
            re.compile(self.regex)
        except re.error as exc:
            raise ValueError(f"bad regex {self.regex!r}: {exc}") from exc
        if not self.needles or not all(self.needles):
            raise ValueError("needle must not be empty")
        return self

    @property
    def needles(self) -> list[str]:
        return [self.needle] if isinstance(self.needle, str) else list(self.needle)


class NextStep(BaseModel):
    """What to run after this pattern matched: a tool, optionally with a rerun preset and arguments."""

    model_config = ConfigDict(extra="forbid")
    tool: Literal[TOOL_NAMES] = Field(description="aoti-debug tool to call next")  # type: ignore[valid-type]
    preset: str | None = Field(default=None, description="rerun_with_flags preset, if the tool reruns")
    args: dict[str, Any] = Field(default_factory=dict, description="Suggested arguments")
    why: str = Field(description="What this step will show")
    when: str | None = Field(default=None, description="Run only when an earlier step found this: kernel_frame (a "
                             "native frame inside a generated kernel)")
    unless: list[str] = Field(default_factory=list, description=(
        "Skip it when earlier steps established every one of these facts (cheaper evidence that answers what it "
        "would): inputs_within_contract, printer_compares_eager; the facts' sentences are the reason given"))


class Examples(BaseModel):
    model_config = ConfigDict(extra="forbid")
    match: list[str] = Field(min_length=1, description="Logs that must classify as this rule")
    no_match: list[str] = Field(default_factory=list, description="Lines none of this rule's patterns match")


class Fix(BaseModel):
    """A fix of a pattern guide and the evidence under which it applies: reports list only fixes whose `when` holds."""

    model_config = ConfigDict(extra="forbid")
    fix: str = Field(description="What to do, one or two sentences")
    when: dict[str, str] = Field(default_factory=dict, description="fact -> regex (re.search); every one must match "
                                 "a fact of the diagnosis (a captured field, `line`: the evidence lines, `kind`: the "
                                 "root cause kind, `phase`, `owner`...); empty: always applies")
    example: dict[str, str] = Field(description="Facts under which it applies (checked by tests/test_rules.py)")
    not_for: dict[str, str] | None = Field(None, description="Facts under which it must not apply")

    @model_validator(mode="after")
    def _check(self) -> Fix:
        for rx in self.when.values():
            try:
                re.compile(rx)
            except re.error as exc:
                raise ValueError(f"bad regex {rx!r}: {exc}") from exc
        return self

    def applies(self, facts: dict[str, str]) -> bool:
        return all(k in facts and re.search(rx, facts[k]) for k, rx in self.when.items())


class Rule(BaseModel):
    """Front matter of a pattern guide: the routing rule as data."""

    model_config = ConfigDict(extra="forbid")
    id: Literal[PATTERN_IDS]  # type: ignore[valid-type]
    kind: Literal["pattern"]
    title: str
    summary: str = Field(description="One sentence: what this failure is")
    priority: int = Field(ge=0, le=1000, description="Unique; among decisive matches the highest wins")
    phase: list[Phase] = Field(min_length=1)
    usual_phase: Phase | None = Field(None, description=(
        "One of `phase`: where this failure shows most often, reported when no marker in the log and no single "
        "phase of the rule says where it failed"))
    patterns: list[Pattern] = Field(default_factory=list)
    cues: list[Pattern] = Field(
        default_factory=list,
        description="Weak hints (frames, file names, wrapper lines) that never decide: they rank this pattern "
                    "among the alternatives when no rule is decisive",
    )
    symptom: bool = Field(
        default=False,
        description="A symptom, not a cause (a wrong result): it wins only when no other rule matched at all",
    )
    silent_prior: float | None = Field(None, gt=0, lt=0.1, description=(
        "A failure that prints no error line (a wrong or NaN result): in a log where neither a rule, a cue nor a "
        "similar report ranks anything, it is listed as an alternative with this confidence, highest first"))
    captures: list[str] = Field(default_factory=list, description="Named groups reported as fields")
    value_maps: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="field -> {raw value -> readable value}, e.g. device type codes"
    )
    first_match: bool = Field(default=False, description="Keep the first matching line, not the last")
    next_steps: list[NextStep] = Field(default_factory=list)
    culprit: str | None = Field(None, description="What names this pattern's culprit, and which step does it")
    fixes: list[Fix] = Field(default_factory=list, description="Fixes with the condition under which each applies")
    examples: Examples | None = None

    @model_validator(mode="after")
    def _captures_exist(self) -> Rule:
        if self.usual_phase is not None and self.usual_phase not in self.phase:
            raise ValueError(f"usual_phase {self.usual_phase} is not one of phase {self.phase}")
        groups = set()
        for p in self.patterns:
            groups |= set(re.compile(p.regex).groupindex)
        missing = set(self.captures) - groups
        if missing:
            raise ValueError(f"captures not named in any regex: {sorted(missing)}")
        if any(c.weight >= 0.5 for c in self.cues):
            raise ValueError("a cue is a hint: its weight must stay below 0.5 (use a pattern to decide)")
        if any(c.yields_to for c in self.cues):
            raise ValueError("yields_to is for patterns (a cue never decides, so it has nothing to yield)")
        for p in self.patterns:
            if "any" in p.yields_to:
                p.yields_to = [i for i in PATTERN_IDS if i not in (self.id, "unknown")]
        if any(self.id in p.yields_to for p in self.patterns):
            raise ValueError(f"a pattern of {self.id} cannot yield to {self.id} itself")
        if self.id != "unknown" and self.id != "segfault_no_message" and not self.patterns:
            raise ValueError("a pattern guide needs at least one regex")
        return self


class Workflow(BaseModel):
    """Front matter of a workflow guide (a procedure, not a pattern)."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    kind: Literal["workflow"]
    title: str
    summary: str

    @field_validator("id")
    @classmethod
    def _not_a_pattern(cls, v: str) -> str:
        if v in PATTERN_IDS:
            raise ValueError(f"{v} is a pattern id; use kind: pattern")
        return v


class Guide(BaseModel):
    """A loaded guide: front matter plus markdown body."""

    id: str
    kind: Literal["pattern", "workflow"]
    title: str
    summary: str
    path: Path
    body: str
    rule: Rule | None = None
    meta: dict[str, Any] = Field(default_factory=dict, description="Raw front matter")

    @property
    def uri(self) -> str:
        return f"{URI_SCHEME}://{self.id}"

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")


_FRONT = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.S)


def parse_guide(path: Path) -> Guide:
    """Parse one guide file; DataError names the file and the problem."""
    raw = path.read_text(encoding="utf-8")
    m = _FRONT.match(raw)
    if not m:
        raise DataError(f"{path}: no YAML front matter between --- lines")
    try:
        meta = load_yaml(m.group(1)) or {}
    except YAMLError as exc:
        raise DataError(f"{path}: front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise DataError(f"{path}: front matter must be a mapping")
    if meta.get("id") != path.stem:
        raise DataError(f"{path}: id {meta.get('id')!r} must equal the file name {path.stem!r}")
    try:
        if meta.get("kind") == "pattern":
            rule = Rule.model_validate(meta)
            return Guide(id=rule.id, kind="pattern", title=rule.title, summary=rule.summary,
                         path=path, body=m.group(2), rule=rule, meta=meta)
        wf = Workflow.model_validate(meta)
    except ValidationError as exc:
        raise DataError(f"{path}: invalid front matter:\n{exc}") from exc
    return Guide(id=wf.id, kind="workflow", title=wf.title, summary=wf.summary,
                 path=path, body=m.group(2), meta=meta)


@cache
def load_guides(folder: Path | None = None) -> dict[str, Guide]:
    """All guides by id (README.md is the maintainer note and is skipped)."""
    folder = folder or guides_dir()
    guides: dict[str, Guide] = {}
    for path in sorted(folder.glob("*.md")):
        if path.name == "README.md":
            continue
        g = parse_guide(path)
        guides[g.id] = g
    missing = set(PATTERN_IDS) - guides.keys()
    if missing:
        raise DataError(f"{folder}: no guide for patterns {sorted(missing)}")
    prios: dict[int, str] = {}
    for g in guides.values():
        if g.rule:
            if g.rule.priority in prios:
                raise DataError(f"priority {g.rule.priority} used by {prios[g.rule.priority]} and {g.id}")
            prios[g.rule.priority] = g.id
    return guides


def rules() -> list[Rule]:
    """Pattern rules, highest priority first."""
    return sorted((g.rule for g in load_guides().values() if g.rule), key=lambda r: -r.priority)


def get_guide(guide_id: str) -> Guide:
    guides = load_guides()
    if guide_id not in guides:
        raise BadInput(f"no guide {guide_id!r}; known: {', '.join(sorted(guides))}")
    return guides[guide_id]
