"""The debug-flag allow-list and rerun presets (data in guides/debug-flags.md), and validation of a request."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aoti_debug.classify.guides import parse_guide
from aoti_debug.common import programs
from aoti_debug.common.errors import BadInput
from aoti_debug.common.paths import guides_dir
from aoti_debug.common.roots import check_path
from aoti_debug.common.yamlio import validated

GUIDE = "debug-flags"
Phase = Literal["compile", "runtime"]
# Flags whose value is a directory: placed in the run directory, or checked against the roots.
DIR_FLAGS = {"TORCH_TRACE": "trace", "TORCHINDUCTOR_CACHE_DIR": "inductor_cache"}
# Flags whose value names a program: it must be an existing executable file.
EXEC_FLAGS = {"CXX"}
# Presets that wrap the command in a tool instead of (or besides) setting flags.
WRAPPER_PRESETS = {"backtrace": "gdb or cuda-gdb", "memcheck": "compute-sanitizer"}
MAX_VALUE = 1024
_NAME = r"^[A-Z][A-Z0-9_]*$"


class FlagSpec(BaseModel):
    """One allowed environment variable."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=_NAME)
    values: list[str] | None = Field(None, description="Allowed values; None: any value value_regex accepts")
    value_regex: str | None = Field(None, description="Full-match regex for values when values is None")
    phase: Phase = Field(description="compile: acts only when the package is (re)built; runtime: on every run")
    effect: str
    cost: str
    observed: str | bool | None = None
    cache_safe: bool | None = Field(None, description="compile flags: True when inductor's cache keys cover what the "
                                    "flag changes, so a triage's reruns may share one cache with it set")
    cache_reason: str | None = Field(None, description="Why (the keys that cover it, or what a cache hit would hide)")

    @model_validator(mode="after")
    def _check(self) -> FlagSpec:
        if self.phase == "compile" and (self.cache_safe is None or not self.cache_reason):
            raise ValueError(f"{self.name}: a compile flag states cache_safe and cache_reason")
        if self.value_regex is not None:
            try:
                re.compile(self.value_regex)
            except re.error as exc:
                raise ValueError(f"{self.name}: bad value_regex: {exc}") from exc
        if self.values is None and self.value_regex is None and self.name not in (*DIR_FLAGS, *EXEC_FLAGS):
            raise ValueError(f"{self.name}: give values or value_regex")
        return self


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid")
    flags: dict[str, str] = Field(default_factory=dict)
    why: str


class FlagTable(BaseModel):
    """The front matter's flags and presets."""

    model_config = ConfigDict(extra="ignore")
    flags: list[FlagSpec]
    presets: dict[str, Preset]

    @model_validator(mode="after")
    def _presets_use_known_flags(self) -> FlagTable:
        names = {f.name for f in self.flags}
        for pname, p in self.presets.items():
            unknown = set(p.flags) - names
            if unknown:
                raise ValueError(f"preset {pname} uses flags not in the table: {sorted(unknown)}")
            for k, v in p.flags.items():
                spec = self.by_name[k]
                if k not in DIR_FLAGS and k not in EXEC_FLAGS and not value_ok(spec, v):
                    raise ValueError(f"preset {pname}: {k}={v!r} is not an allowed value")
        return self

    @property
    def by_name(self) -> dict[str, FlagSpec]:
        return {f.name: f for f in self.flags}


def value_ok(spec: FlagSpec, value: str) -> bool:
    if spec.values is not None:
        return value in spec.values
    return spec.value_regex is None or re.fullmatch(spec.value_regex, value) is not None


@cache
def flag_table(path: Path | None = None) -> FlagTable:
    """Load and validate the table from guides/debug-flags.md."""
    guide = parse_guide(path or guides_dir() / f"{GUIDE}.md")
    return validated(FlagTable, guide.meta, f"{guide.path}: invalid flag table\n")


class FlagUse(BaseModel):
    """A flag set for a run, where it came from, and whether it could act."""

    name: str
    value: str
    phase: Phase
    source: str = Field(description="'default', 'preset:<name>' or 'flag'")
    effect: str = ""
    applied: bool | None = Field(
        None, description="False: a compile-time flag on a run that built nothing, so it had no effect; None: unknown"
    )


def _check_value(spec: FlagSpec, value: str, roots: list[Path], cwd: Path) -> str:
    if not isinstance(value, str) or any(c in value for c in "\0\n\r") or len(value) > MAX_VALUE:
        raise BadInput(f"{spec.name}: the value must be one line of at most {MAX_VALUE} characters")
    if value.startswith("-"):
        raise BadInput(f"{spec.name}={value!r}: values starting with '-' are refused")
    if spec.name in EXEC_FLAGS:  # a compiler the build runs: judged by what it is and where it lies
        try:
            return programs.check_compiler(value, roots, cwd)
        except BadInput as exc:
            raise BadInput(f"{spec.name}={value!r}: {exc}") from None
    if spec.name in DIR_FLAGS:
        return str(check_path(value, roots, what=spec.name, base=cwd))
    if not value_ok(spec, value):
        allowed = spec.values if spec.values is not None else f"values matching {spec.value_regex}"
        raise BadInput(f"{spec.name}={value!r} is not allowed; allowed: {allowed}")
    return value


def resolve(
    presets: list[str], flags: dict[str, str], *, roots: list[Path], cwd: Path, run_dir: Path,
    fresh_cache: bool = True, shared_cache: Path | None = None, table: FlagTable | None = None,
) -> list[FlagUse]:
    """Defaults, then presets in order, then explicit flags (later wins); BadInput for anything refused.

    fresh_cache gives the run its own TORCHINDUCTOR_CACHE_DIR; with shared_cache (a triage's one cache) that
    directory instead, unless a flag the run sets is not cache_safe."""
    table = table or flag_table()
    specs = table.by_name
    out: dict[str, FlagUse] = {}

    def put(name: str, value: str, source: str) -> None:
        spec = specs[name]
        out[name] = FlagUse(name=name, value=value, phase=spec.phase, source=source, effect=spec.effect)

    # faulthandler turns a silent segfault into the Python frame that crashed; every run gets it.
    if "PYTHONFAULTHANDLER" in specs:
        put("PYTHONFAULTHANDLER", "1", "default")
    if fresh_cache and "TORCHINDUCTOR_CACHE_DIR" in specs:
        put("TORCHINDUCTOR_CACHE_DIR", str(run_dir / DIR_FLAGS["TORCHINDUCTOR_CACHE_DIR"]), "default")
    for pname in presets:
        if pname not in table.presets:
            raise BadInput(f"unknown preset {pname!r}; known: {', '.join(sorted(table.presets))}")
        for name, value in table.presets[pname].flags.items():
            if name in DIR_FLAGS:  # a preset's directory always lives in the run directory
                value = str(run_dir / DIR_FLAGS[name])
            elif name in EXEC_FLAGS:
                value = _check_value(specs[name], value, roots, cwd)
            put(name, value, f"preset:{pname}")
    for name, value in flags.items():
        if name not in specs:
            raise BadInput(
                f"environment variable {name!r} is not an allowed debug flag (only the allow-list in "
                f"guides/debug-flags.md may be set: {', '.join(sorted(specs))})"
            )
        put(name, _check_value(specs[name], value, roots, cwd), "flag")
    cache = out.get("TORCHINDUCTOR_CACHE_DIR")
    if shared_cache is not None and cache is not None and cache.source == "default" \
            and not cache_unsafe(out.values(), specs):
        cache.value = str(shared_cache)
    return list(out.values())


def cache_unsafe(uses, specs: dict[str, FlagSpec] | None = None) -> list[str]:
    """The flags set (not defaults) whose effect inductor's cache keys do not cover: they need a fresh cache."""
    specs = specs or flag_table().by_name
    return [u.name for u in uses if u.source != "default" and specs[u.name].phase == "compile"
            and not specs[u.name].cache_safe]


def env_overrides(uses: list[FlagUse]) -> dict[str, str | None]:
    return {u.name: u.value for u in uses}
