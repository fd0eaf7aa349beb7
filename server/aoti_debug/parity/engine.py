"""check_parity: the package's contract vs the target runtime and the actual inputs, as one report."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from aoti_debug.common.errors import BadInput
from aoti_debug.common.roots import confine, open_regular
from aoti_debug.package.contract import ModelFacts, PackageFacts
from aoti_debug.package.inspect import inspect_package
from aoti_debug.parity.env import package_mismatches, runtime_mismatches
from aoti_debug.parity.inputs import InputComparison, compare_inputs
from aoti_debug.parity.model import ParityReport
from aoti_debug.parity.rules import Mismatch, make, ordered
from aoti_debug.runs import probe
from aoti_debug.runs.probe import ActualInput, ProbeOutcome, RuntimeFacts

# A call's inputs described as JSON are a few hundred entries at most.
MAX_INPUTS_JSON = 4 * 2**20


def _summary(mismatches: list[Mismatch], unchecked: list[str]) -> str:
    counts = {s: sum(m.severity == s for m in mismatches) for s in ("error", "warning", "info")}
    head = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n) or "no mismatches"
    first = "; ".join(m.message for m in mismatches if m.severity == "error")[:400]
    tail = f" ({len(unchecked)} comparison(s) skipped)" if unchecked else ""
    return f"{head}{tail}" + (f": {first}" if first else "")


def build_report(facts: PackageFacts, model: ModelFacts | None, runtime: ProbeOutcome | None,
                 inputs: list[ActualInput] | None, inputs_source: str | None = None,
                 inputs_error: str | None = None, load_device: str | None = None) -> ParityReport:
    """Compare; every part that could not be read becomes an 'unchecked' line, never an exception."""
    mismatches: list[Mismatch] = []
    unchecked: list[str] = []
    if model is not None and len(facts.models) > 1:
        others = ", ".join(m.name for m in facts.models if m is not model)
        unchecked.append(f"compared model '{model.name}' only; the package also holds {others}")
    for name, why in facts.unsafe_members.items():
        mismatches.append(make("unsafe_member", f"member {name!r} {why}", expected="a relative path", got=name))
    rt: RuntimeFacts | None = None
    rows: list[InputComparison] = []
    if model is not None:
        unchecked += [f"{model.name}: {n}" for n in model.notes]
        mismatches += package_mismatches(model, load_device)
        if runtime is None:
            unchecked.append("runtime not probed: no comparison with the target machine")
        else:
            rt, err = probe.runtime_facts(runtime)
            if err:
                unchecked.append(err)
            if rt is not None:
                mismatches += runtime_mismatches(model, rt, load_device)
        if inputs_error:
            unchecked.append(inputs_error)
        if inputs is not None:
            if model.contract is None:
                unchecked.append("inputs not compared: the package's input contract could not be read")
            else:
                rows, found = compare_inputs(model.contract, inputs)
                mismatches += found
                if model.contract.checks == "absent":
                    mismatches.append(make("checks_absent", "the package has no input check code"))
    mismatches = ordered(mismatches)
    first = next((m for m in mismatches if m.first_check_failure), None)
    ok = not unchecked_blocking(model, rt, inputs, inputs_error) and not any(m.severity == "error" for m in mismatches)
    return ParityReport(
        ok=ok, summary=_summary(mismatches, unchecked), mismatches=mismatches,
        predicted_check_error=first.with_check if first else None,
        checks=model.contract.checks if model and model.contract else None, inputs=rows,
        inputs_source=inputs_source, model=model.name if model else None, load_device=load_device, runtime=rt,
        package=facts, unchecked=unchecked,
    )


def unchecked_blocking(model: ModelFacts | None, rt: RuntimeFacts | None, inputs: list[ActualInput] | None,
                       inputs_error: str | None) -> bool:
    """Parts whose absence makes 'ok' unprovable: no model, no runtime facts, inputs asked for but unread."""
    return model is None or rt is None or rt.torch_error is not None or inputs_error is not None or (
        inputs is not None and model.contract is None)


class _Prepared(BaseModel):
    facts: PackageFacts
    model: ModelFacts
    python: str
    probe_file: Path | None = None
    inputs: list[ActualInput] | None = None
    inputs_source: str | None = None


def captured_inputs(run_id: str) -> tuple[list[ActualInput], str]:
    """The tensors of a rerun's captured call (the one it died in, else its first) and where they came from."""
    from aoti_debug.runs import calls
    from aoti_debug.runs import store as runs

    report = calls.read(runs.run_path(run_id) / calls.CALLS_DIR)
    chosen = report.died_in if report.died_in and report.died_in.kind == "call" else next(
        (r for r in report.records if r.kind == "call"), None)
    found = report.inputs_of(chosen) if chosen else None
    if not found:
        raise BadInput(f"run {run_id} captured no package call with tensors: rerun the repro with the calls preset")
    return found, f"run {run_id} call {chosen.index}"


def _prepare(package: str | Path, inputs_file: str | Path | None, inputs: list[ActualInput] | None,
             model: str | None, python: str | None, roots: list[Path] | None = None,
             inputs_run: str | None = None) -> _Prepared:
    if sum(x is not None for x in (inputs_file, inputs, inputs_run)) > 1:
        raise BadInput("pass the inputs as a file, as JSON or as a run's captured call, not two of them")
    source = "json" if inputs is not None else None
    if inputs_run is not None:
        inputs, source = captured_inputs(inputs_run)
    facts = inspect_package(package, confine(roots))
    chosen = facts.model(model)
    if chosen is None:
        raise BadInput(f"no model {model!r} in {package}; models: {', '.join(m.name for m in facts.models)}")
    prepared = _Prepared(facts=facts, model=chosen, python=probe.check_python(python, roots), inputs=inputs,
                         inputs_source=source)
    if inputs_file is not None:
        p = Path(inputs_file).expanduser()
        if not p.is_file():
            raise BadInput(f"no such inputs file: {p}")
        prepared.inputs_source = str(p)
        if p.suffix == ".json":
            with open_regular(p, confine(roots), what="inputs file") as f:  # a FIFO is refused, never waited on
                raw = f.read(MAX_INPUTS_JSON + 1)
            if len(raw) > MAX_INPUTS_JSON:
                raise BadInput(f"inputs JSON {p} is over {MAX_INPUTS_JSON} bytes: describe the call's inputs only")
            prepared.inputs = probe.parse_inputs_json(raw.decode("utf-8", errors="replace"))
        else:
            prepared.probe_file = p
    return prepared


def _finish(p: _Prepared, runtime: ProbeOutcome | None, probed: ProbeOutcome | None,
            load_device: str | None) -> ParityReport:
    inputs, error = p.inputs, None
    if probed is not None:
        inputs, error = probe.actual_inputs(probed, p.inputs_source or "")
    return build_report(p.facts, p.model, runtime, inputs, p.inputs_source, error, load_device)


def check_parity(package: str | Path, *, inputs_file: str | Path | None = None,
                 inputs: list[ActualInput] | None = None, load_device: str | None = None,
                 python: str | None = None, model: str | None = None, probe_runtime: bool = True,
                 roots: list[Path] | None = None, inputs_run: str | None = None,
                 runtime: ProbeOutcome | None = None) -> ParityReport:
    """Check a .pt2 against the target Python (probed in a subprocess) and, if given, the actual inputs.
    roots (the server's): the package, inputs and Python must lie in them (or, the Python, a trusted folder).
    runtime: that Python's runtime probe, already taken (triage probes it while its baseline runs)."""
    p = _prepare(package, inputs_file, inputs, model, python, roots, inputs_run)
    if runtime is not None and p.probe_file is None:
        return _finish(p, runtime if probe_runtime else None, None, load_device)
    runtime, probed = probe.run_probes(p.python, p.probe_file) if (probe_runtime or p.probe_file) else (None, None)
    return _finish(p, runtime if probe_runtime else None, probed, load_device)


async def check_parity_async(package: str | Path, *, inputs_file: str | Path | None = None,
                             inputs: list[ActualInput] | None = None, load_device: str | None = None,
                             python: str | None = None, model: str | None = None,
                             roots: list[Path] | None = None, inputs_run: str | None = None) -> ParityReport:
    """check_parity for the MCP server: the package is read and the inputs validated on a worker thread (the
    event loop keeps answering other calls), the probe runs off the event loop and dies with a cancelled call."""
    import anyio

    p = await anyio.to_thread.run_sync(lambda: _prepare(package, inputs_file, inputs, model, python, roots,
                                                        inputs_run))
    runtime, probed = await probe.run_probes_async(p.python, p.probe_file)
    return await anyio.to_thread.run_sync(lambda: _finish(p, runtime, probed, load_device))
