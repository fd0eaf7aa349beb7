"""check_parity's contract: the report a comparison of a package with a runtime and inputs returns."""

from __future__ import annotations

from pydantic import BaseModel, Field

from aoti_debug.package.contract import Checks, PackageFacts
from aoti_debug.parity.inputs import InputComparison
from aoti_debug.parity.rules import Mismatch
from aoti_debug.runs.probe import RuntimeFacts


class ParityReport(BaseModel):
    """Does this package fit this runtime and these inputs? Mismatches first, then the facts behind them."""

    ok: bool = Field(description="True only if every comparison ran and none found an error")
    summary: str = Field(description="One line: counts and the first mismatches")
    mismatches: list[Mismatch] = Field(default_factory=list, description="Errors first, then warnings, then info")
    predicted_check_error: str | None = Field(
        None, description="The error a run with AOTI_RUNTIME_CHECK_INPUTS=1 will raise for these inputs")
    checks: Checks | None = Field(None, description="How the package's input checks are compiled in")
    inputs: list[InputComparison] = Field(default_factory=list, description="Per input position: expected vs got")
    inputs_source: str | None = Field(None, description="The inputs file or 'json'")
    model: str | None = Field(None, description="The model compared (a folder under data/aotinductor/)")
    load_device: str | None = None
    runtime: RuntimeFacts | None = Field(None, description="The target Python, as the probe saw it")
    package: PackageFacts
    unchecked: list[str] = Field(default_factory=list, description="What could not be compared, and why")
