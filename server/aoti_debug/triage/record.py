"""What get_run answers: a run's result by its id, a rerun's or a triage's, while it goes on or once it ended."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from aoti_debug.common.errors import BadInput
from aoti_debug.runs import store
from aoti_debug.runs.model import RunResult
from aoti_debug.triage.model import TriageReport


class RunRecord(RunResult):
    """The outcome of a rerun (exit, signal, output tails, classification, flags and whether they acted), or of a
    triage, whose evidence chain and crash explanation are in `triage`."""

    # Published under the rerun result's name: the same fields, with the triage's report added.
    model_config = ConfigDict(title="RunResult")
    triage: TriageReport | None = Field(None, description="A triage run's evidence chain and crash explanation "
                                        "(the steps so far while it runs)")


def get_run(run_id: str) -> RunRecord:
    """A running run's snapshot (its plan answers), or a finished run's stored result (also after a restart)."""
    entry = store.active(run_id)
    if entry is not None and entry.payload is not None:
        found = entry.payload.snapshot(entry)
        return found if isinstance(found, RunRecord) else RunRecord.model_validate(found.model_dump())
    text = store.load(run_id)
    if text is None:
        if store.run_path(run_id).is_dir():
            raise BadInput(f"run {run_id} has no result: it was interrupted before it finished")
        raise BadInput(f"no run {run_id!r} (finished runs are kept until {store.MAX_KEPT_RUNS} newer ones exist)")
    return RunRecord.model_validate_json(text)
