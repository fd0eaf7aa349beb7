"""A captured call compared with eager (the repro's `aoti_debug_eager` hook): the outputs' mismatch summary."""

from __future__ import annotations

from pydantic import BaseModel, Field

HOOK = "aoti_debug_eager"
HOOK_HELP = (f"define a module-level `{HOOK}` in the repro script (the eager nn.Module, bound before the package "
             "is called) and rerun the triage: the capture runner then compares each call with eager on the same "
             "inputs, and the printer pass finds the first kernel whose output diverges (guides/wrong_output.md)")


class OutputDiff(BaseModel):
    """One output of the package against the eager model's, under assert_close's default tolerance."""

    shape: list[int] | None = None
    eager_shape: list[int] | None = None
    dtype: str | None = None
    numel: int | None = None
    mismatched: int = Field(0, description="Elements out of tolerance (all of them when the shapes differ)")
    nan_only_in_package: int | None = Field(None, description="NaN in the package's output where eager is not NaN")
    max_abs: float | None = None
    max_abs_at: list[int] | None = None
    max_rel: float | None = None
    first_at: list[int] | None = Field(None, description="The first mismatched element (row-major)")
    rtol: float | None = None
    atol: float | None = None
    package_sample: list | None = None
    eager_sample: list | None = None


class EagerCompare(BaseModel):
    """The call rerun eagerly on a copy of its inputs by the capture runner."""

    outputs: list[OutputDiff] = Field(default_factory=list)
    nodes_file: str | None = Field(None, description="Statistics of every node of the eager graph (JSON), written "
                                   "when the outputs differ and the hook is an nn.Module")
    nodes_error: str | None = Field(None, description="Why the eager graph could not be exported and run node by node")
    error: str | None = None

    def mismatched(self) -> bool:
        return any(o.mismatched for o in self.outputs)


def summary(call_index: int, cmp: EagerCompare) -> list[str]:
    """One line per output that differs from eager: count, largest differences, first index."""
    out = []
    for j, o in enumerate(cmp.outputs):
        if not o.mismatched:
            continue
        if o.shape != o.eager_shape:
            out.append(f"call {call_index} output {j}: shape {o.shape}, eager {o.eager_shape}")
            continue
        nan = f", {o.nan_only_in_package} NaN where eager is finite" if o.nan_only_in_package else ""
        big = (f", max abs diff {o.max_abs:.4g} at {o.max_abs_at}, max rel diff {o.max_rel:.4g}"
               if o.max_abs is not None else "")
        out.append(f"call {call_index} output {j}: {o.mismatched} / {o.numel} elements differ from eager "
                   f"(rtol {o.rtol}, atol {o.atol}){big}, first at {o.first_at}{nan}")
    return out
