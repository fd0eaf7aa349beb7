"""The MCP adapter: registers the tools, guide resources and the triage prompt (with serve.py, the only MCP importers).

The engines are imported by the tool that runs them, on its first call: a server start imports only what the
tools' parameters are declared with, and publishes output schemas and guide resources from startcache
(benchmarks/server_start.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FileResource
from mcp.types import Annotations, ToolAnnotations
from pydantic import Field, ValidationError

from aoti_debug.common.errors import AotiDebugError, BadInput, from_validation
from aoti_debug.common.limits import (
    DEFAULT_BUDGET_S,
    DEFAULT_PASS_TIMEOUT_S,
    DEFAULT_RUN_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    MAX_BUDGET_S,
    MAX_TIMEOUT_S,
)
from aoti_debug.common.paths import guides_dir, skill_file
from aoti_debug.common.roots import check_path, configured_roots, confine
from aoti_debug.mcp import startcache
from aoti_debug.mcp.startcache import cached_tool as _tool
from aoti_debug.runs.probe import ActualInput
from aoti_debug.version import package_version

if TYPE_CHECKING:  # the return models: resolved by startcache from each tool's output= on its first call
    from aoti_debug.classify.engine import Classification
    from aoti_debug.kernels.index_oob_model import OobExplanation
    from aoti_debug.kernels.model import DumpResult
    from aoti_debug.parity.model import ParityReport
    from aoti_debug.runs.model import RunResult
    from aoti_debug.triage.model import TriageReport
    from aoti_debug.triage.record import RunRecord

log = logging.getLogger("aoti_debug")

INSTRUCTIONS = """\
aoti-debug triages AOTInductor (AOTI, torch._inductor.aoti_compile_and_package / aoti_load_package) failures.
Flow: (1) classify_error on the full failing output (stdout+stderr) -> a pattern id, evidence lines, fields
and next_steps; (2) for load/device/shape patterns, check_parity on the .pt2 before anything deeper
(compile device = load device; input dtypes, shapes, strides, devices vs the package's contract);
(3) follow the pattern's guide (resource aoti-guide://<pattern>) and its next_steps: rerun_with_flags
presets (sanity, deterministic, kernel_names, backtrace, memcheck...), dump_kernel_inputs,
explain_index_oob. triage runs the whole chain in one call. Long runs: pass wait=false and poll get_run.
Paths must lie inside the server's allowed roots. Printer and NaN-assert flags act at compile time only.
"""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
RERUN = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


@contextmanager
def tool_errors() -> Iterator[None]:
    """Our deliberate errors, and a request model that refuses the arguments, become ToolError for the model."""
    try:
        yield
    except AotiDebugError as exc:
        raise ToolError(str(exc)) from exc
    except ValidationError as exc:
        raise ToolError(str(from_validation(exc))) from exc


def _progress_to(ctx: Context) -> Callable[[float, int, str], Awaitable[None]]:
    """A run's progress (elapsed seconds, bytes of output, step) as the client's progress notifications."""
    async def progress(elapsed: float, nbytes: int, step: str) -> None:
        await ctx.report_progress(elapsed, None, f"{step}: {elapsed:.0f} s, {nbytes} bytes of output")
    return progress


def _log_chunks(roots: list[Path], log_text: str | None, log_path: str | None) -> Iterable[bytes]:
    """The log a tool was given, as byte chunks: exactly one of the text or a file inside the roots."""
    if (log_text is None) == (log_path is None):
        raise BadInput("pass exactly one of log_text or log_path")
    if log_path is None:
        return [(log_text or "").encode("utf-8", "replace")]
    path = check_path(log_path, roots, what="log_path")
    if not path.exists():
        raise BadInput(f"no such log file: {log_path}")
    from aoti_debug.common.logread import file_chunks

    return file_chunks(path, within=confine(roots))  # the opened file is checked: no FIFO, no swapped-in link


def _register_classify(mcp: MCPServer, roots: list[Path], cached: dict | None) -> None:
    @_tool(mcp, cached, "aoti_debug.classify.engine:Classification", annotations=READ_ONLY,
           title="Classify an AOTI error log")
    def classify_error(
        log_text: Annotated[str | None, Field(description="The failing run's output (stdout and stderr)")] = None,
        log_path: Annotated[str | None, Field(description="Or a log file inside the allowed roots")] = None,
        exit_status: Annotated[
            int | None, Field(description="The run's exit status if known: -11 or 139 mean SIGSEGV")
        ] = None,
    ) -> Classification:
        """Route an AOTI failure log to its pattern and phase (export/compile/load/run), evidence and next steps."""
        from aoti_debug.classify.engine import classify_chunks

        with tool_errors():
            return classify_chunks(_log_chunks(roots, log_text, log_path), exit_status)


def _register_rerun(mcp: MCPServer, roots: list[Path], cached: dict | None) -> None:
    @_tool(mcp, cached, "aoti_debug.runs.model:RunResult", annotations=RERUN, title="Rerun a repro with debug flags")
    async def rerun_with_flags(
        ctx: Context,
        argv: Annotated[list[str], Field(description="The repro as an argv list (no shell): ['python', 'repro.py', "
                                         "'--load-only']; the script must lie inside the allowed roots")],
        presets: Annotated[list[str] | None, Field(description="sanity, deterministic, kernel_names, "
                           "cpp_stacktraces, logs, trace, faulthandler, minifier, backtrace, memcheck, calls, "
                           "load_only")] = None,
        flags: Annotated[dict[str, str] | None, Field(description="More allow-listed flags, NAME: value")] = None,
        cwd: Annotated[str | None, Field(description="Working directory inside the roots")] = None,
        baseline: Annotated[bool, Field(description="First run without the flags, then compare")] = False,
        timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S, description="Per run")] = DEFAULT_TIMEOUT_S,
        fresh_cache: Annotated[bool, Field(description="Fresh TORCHINDUCTOR_CACHE_DIR (compile flags act)")] = True,
        forensics: Annotated[bool, Field(description="gdb/compute-sanitizer rerun after a silent crash")] = True,
        wait: Annotated[bool, Field(description="false: return the run id at once; poll get_run")] = True,
    ) -> RunResult:
        """Rerun a repro with allow-listed debug flags (presets), bounded and killed on timeout.

        Returns the exit, signal, output tails, the classification of the output, whether compile-time flags
        acted (they need a rebuild), forensics after a crash, and optionally a comparison with a baseline run.
        """
        from aoti_debug.runs import proc, rerun
        from aoti_debug.runs.model import RerunRequest

        with tool_errors():
            req = RerunRequest(argv=argv, presets=presets or [], flags=flags or {}, cwd=cwd, baseline=baseline,
                               timeout_s=timeout_s, fresh_cache=fresh_cache, forensics=forensics)
            # Validation and run-directory pruning touch the disk: off the event loop, like the run itself.
            if not wait:
                return await anyio.to_thread.run_sync(rerun.start, req, roots)
            plan = await anyio.to_thread.run_sync(lambda: rerun.plan(req, roots, hold=True))


            return await proc.in_thread(lambda cancel, note: rerun.execute_held(plan, cancel=cancel, note=note),
                                        on_progress=_progress_to(ctx))

    @_tool(mcp, cached, "aoti_debug.triage.record:RunRecord", annotations=READ_ONLY, title="Poll a rerun or a triage")
    def get_run(
        run_id: Annotated[str, Field(description="The run id rerun_with_flags or triage returned")],
    ) -> RunRecord:
        """A rerun's result, or its progress and output tails while it is still going; a triage's in 'triage'."""
        from aoti_debug.triage import record

        with tool_errors():
            return record.get_run(run_id)

    @mcp.resource("aoti-run://{run_id}/{name}", title="A rerun's log or result", mime_type="text/plain",
                  annotations=Annotations(audience=["assistant"], priority=0.5))
    def run_file(run_id: str, name: str) -> str:
        """A rerun's files: log (both streams), stdout, stderr, result, baseline, forensics, memcheck; the last MiB."""
        from aoti_debug.runs import store as runs

        with tool_errors():
            return runs.read_file(run_id, name)


def _register_parity(mcp: MCPServer, roots: list[Path], cached: dict | None) -> None:
    @_tool(mcp, cached, "aoti_debug.parity.model:ParityReport", annotations=READ_ONLY,
           title="Check an AOTI package against the runtime and the inputs")
    async def check_parity(
        package_path: Annotated[str, Field(description="The .pt2 package, inside the allowed roots")],
        inputs_path: Annotated[str | None, Field(
            description="torch.save file of the call's inputs (tuple/list/dict of tensors) or a .json list")] = None,
        inputs: Annotated[list[ActualInput] | None, Field(
            description="Or the inputs described inline: dtype, shape, stride, device per tensor")] = None,
        load_device: Annotated[str | None, Field(description="Device it will be loaded on: cpu, cuda, cuda:1")] = None,
        python: Annotated[str | None, Field(
            description="The Python that will load it (must have torch); default: the server's interpreter")] = None,
        model: Annotated[str | None, Field(description="Model folder under data/aotinductor/ (default: model)")] = None,
        inputs_run: Annotated[str | None, Field(
            description="Or a run id of rerun_with_flags with the calls preset: the tensors of the call it died "
                        "in (else its first call), as the capture runner recorded them")] = None,
    ) -> ParityReport:
        """Compare a .pt2 package (read statically) with the target Python and the actual inputs.

        Checks compile device vs load device, GPU compute capability, CPU ISA, platform, libstdc++ and
        compiler, and per input dtype, shape, stride and device; each mismatch says what it does at run
        time and the exact error AOTI_RUNTIME_CHECK_INPUTS=1 would raise.
        """
        from aoti_debug.parity.engine import check_parity_async

        with tool_errors():
            pkg = check_path(package_path, roots, what="package_path")
            inputs_file = check_path(inputs_path, roots, what="inputs_path") if inputs_path else None
            return await check_parity_async(pkg, inputs_file=inputs_file, inputs=inputs, load_device=load_device,
                                            python=python, model=model, roots=roots,
                                            inputs_run=inputs_run)


def _register_kernels(mcp: MCPServer, roots: list[Path], cached: dict | None) -> None:
    @_tool(mcp, cached, "aoti_debug.kernels.model:DumpResult", annotations=RERUN,
           title="Find the failing kernel and print what went into it")
    async def dump_kernel_inputs(
        ctx: Context,
        argv: Annotated[list[str], Field(description="The repro as an argv list (no shell); it must export and "
                                         "compile (the printer is generated code): ['python', 'repro.py']")],
        kernels: Annotated[list[str] | None, Field(description="Print these kernels (skips the level-3 pass)")] = None,
        level: Annotated[int, Field(ge=1, le=3, description="3: name the failing kernel only; 2: also its inputs' "
                                    "stats and suspects; 1: also save every tensor to .pt files")] = 2,
        cwd: Annotated[str | None, Field(description="Working directory inside the roots")] = None,
        timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S, description="Per pass (each recompiles)")] = (
            DEFAULT_PASS_TIMEOUT_S),
    ) -> DumpResult:
        """Rebuild and run the repro with the intermediate value printer: level 3 finds the kernel launched last
        without finishing, level 2 prints that kernel's and its producers' inputs (stats, no tensor bodies).

        Returns the failing kernel, the model inputs, each argument before and after, suspects (first NaN/Inf
        producer, an index at or above the assert's bound, negative indices, empty dimensions traced to the model
        input) and, for an index assert, explain_index_oob on the rebuilt sources. Two compiles: minutes.
        """
        from aoti_debug.kernels.dump import dump_kernel_inputs as dump_kernel_inputs_
        from aoti_debug.kernels.model import DumpRequest
        from aoti_debug.runs import proc

        with tool_errors():
            req = DumpRequest(argv=argv, kernels=kernels or [], level=level, cwd=cwd, timeout_s=timeout_s)


            return await proc.in_thread(lambda cancel, note: dump_kernel_inputs_(req, roots, cancel=cancel, note=note),
                                        on_progress=_progress_to(ctx))

    @_tool(mcp, cached, "aoti_debug.kernels.index_oob_model:OobExplanation", annotations=READ_ONLY,
           title="Explain an index-out-of-bounds assertion from the package's sources")
    def explain_index_oob(
        package_path: Annotated[str, Field(description="The .pt2, the folder it was extracted to, or the inductor "
                                           "cache folder (TORCHINDUCTOR_CACHE_DIR) of the build; inside the roots")],
        log_text: Annotated[str | None, Field(description="The failing run's output (stderr included)")] = None,
        log_path: Annotated[str | None, Field(description="Or a log file inside the allowed roots")] = None,
        kernel: Annotated[str | None, Field(description="The failing kernel, when several hold the assertion")] = None,
        model: Annotated[str | None, Field(description="Model folder under data/aotinductor/ (default: model)")] = None,
    ) -> OobExplanation:
        """Map 'index out of bounds: 0 <= tmpN < X' to the kernel holding it, the assertion line, the call site and
        its arguments, the size symbol and model input dimension behind ksM, that dimension's guards, the index's
        source input, and the Source Nodes / ATen ops; with the likely root cause and fix options (markdown too).
        Works for Triton and CPU C++ kernels."""
        from aoti_debug.kernels.index_oob import explain_index_oob as explain_index_oob_

        with tool_errors():
            chunks = _log_chunks(roots, log_text, log_path)
            pkg = check_path(package_path, roots, what="package_path")
            return explain_index_oob_(pkg, chunks, kernel=kernel, model=model, within=confine(roots))


def _register_triage(mcp: MCPServer, roots: list[Path], cached: dict | None) -> None:
    @_tool(mcp, cached, "aoti_debug.triage.model:TriageReport", annotations=RERUN,
           title="Triage an AOTI crash end to end")
    async def triage(
        ctx: Context,
        argv: Annotated[list[str] | None, Field(description="The repro as an argv list (no shell); omit it to "
                                                "triage log_path offline (classify, parity, explain)")] = None,
        log_path: Annotated[str | None, Field(description="An existing log of the failure, inside the roots; with "
                                              "argv it replaces the baseline run")] = None,
        package_path: Annotated[str | None, Field(description="The .pt2 (default: found in the output)")] = None,
        exit_status: Annotated[int | None, Field(description="The logged run's exit status (139: SIGSEGV)")] = None,
        load_argv: Annotated[list[str] | None, Field(description="A faster command that only loads the built "
                                                     "package (the script with --load-only), for run-time-only "
                                                     "reruns")] = None,
        evidence_logs: Annotated[dict[str, str] | None, Field(description="Logs you already have, by step: "
                                                              "backtrace, memcheck, sanity, deterministic, "
                                                              "dump_kernel_inputs")] = None,
        cwd: Annotated[str | None, Field(description="Working directory inside the roots")] = None,
        budget_s: Annotated[float, Field(gt=0, le=MAX_BUDGET_S, description="Total seconds for every step")] = (
            DEFAULT_BUDGET_S),
        timeout_s: Annotated[float, Field(gt=0, le=MAX_BUDGET_S, description="Per run")] = DEFAULT_RUN_TIMEOUT_S,
        probe_runtime: Annotated[bool, Field(description="Compare the package with this machine's torch; false "
                                             "when the log came from another machine")] = True,
        capture_calls: Annotated[bool, Field(description="Record the baseline's package loads and calls with "
                                             "their tensors (python scripts); false runs it exactly as given")] = True,
        wait: Annotated[bool, Field(description="false: return the run id at once and poll get_run (a triage that "
                                    "compiles takes minutes; clients time out after 60 s)")] = True,
    ) -> TriageReport:
        """Run the whole triage: the baseline (or the given log), classify_error, then the matched guide's
        next steps (check_parity, sanity/deterministic/backtrace/memcheck reruns, explain_index_oob,
        dump_kernel_inputs) until the evidence names a root cause, the steps run out, or the budget does.

        Returns each step (what ran, run id, what it found, cost in seconds), the root cause with its values
        and evidence lines, why it stopped, and a short markdown crash explanation with the fix.
        """
        from aoti_debug.runs import proc
        from aoti_debug.triage import engine as triage_
        from aoti_debug.triage.model import TriageRequest

        with tool_errors():
            req = TriageRequest(argv=argv, log_path=log_path, package_path=package_path, exit_status=exit_status,
                                load_argv=load_argv, evidence_logs=evidence_logs or {}, cwd=cwd,
                                budget_s=budget_s, timeout_s=timeout_s, probe_runtime=probe_runtime,
                                capture_calls=capture_calls)
            if not wait:
                return await anyio.to_thread.run_sync(triage_.start, req, roots)
            plan = await anyio.to_thread.run_sync(triage_.plan, req, roots)
            # Every message reaches the client, also for steps shorter than in_thread's polling interval.
            pending: list[str] = []
            sent = [0]

            def work(cancel: threading.Event, note: proc.Note) -> TriageReport:
                def tee(elapsed: float, nbytes: int, message: str) -> None:
                    note(elapsed, nbytes, message)
                    pending.append(message)  # list.append is atomic under the GIL

                return triage_.execute_held(plan, cancel=cancel, note=tee)

            async def flush(*_: object) -> None:
                while pending:
                    sent[0] += 1
                    await ctx.report_progress(sent[0], None, pending.pop(0))

            report = await proc.in_thread(work, on_progress=flush)
            await flush()
            return report


def _register_guides(mcp: MCPServer, cache: dict | None) -> None:
    folder = guides_dir()
    for g in startcache.published_guides(cache):
        mcp.add_resource(FileResource(
            uri=g["uri"], name=g["name"], title=g["title"], description=g["description"], path=folder / g["file"],
            mime_type="text/markdown", annotations=Annotations(audience=["assistant"], priority=g["priority"]),
        ))
    mcp.add_resource(FileResource(
        uri="aoti-skill://SKILL.md", name="skill", title="aoti-debug skill",
        description="The agent skill: the pattern-routed triage workflow and the tools",
        path=skill_file(), mime_type="text/markdown", annotations=Annotations(audience=["assistant"], priority=1.0),
    ))


def _register_prompts(mcp: MCPServer) -> None:
    @mcp.prompt(title="Triage an AOTInductor crash")
    def triage_crash(
        error_log: Annotated[str, Field(description="The failing output, or a short description")] = "",
        repro_command: Annotated[str, Field(description="The command that reproduces it, if any")] = "",
    ) -> str:
        """Start a pattern-routed triage of an AOTInductor failure."""
        parts = ["Triage this AOTInductor failure with the aoti-debug tools, step by step:",
                 "1. classify_error on the full output (stdout and stderr); read the guide it names.",
                 "2. If a .pt2 package is involved, check_parity on it before anything deeper.",
                 "3. Follow the guide's next steps (rerun_with_flags presets, dump_kernel_inputs, explain_index_oob),"
                 " or call triage with the repro command to run the chain in one call.",
                 "4. Answer with: what failed, the root cause, the evidence lines, and the fix."]
        if repro_command:
            parts.append(f"\nRepro command: {repro_command}")
        if error_log:
            parts.append(f"\nError output:\n```\n{error_log}\n```")
        return "\n".join(parts)


def build_server(roots: list[Path] | None = None, cached: bool = True) -> MCPServer:
    """The aoti-debug MCP server; roots bound every path a client can name. cached=False: the SDK generates the
    output schemas and the guides are parsed (what the start cache is checked against)."""
    roots = roots or configured_roots()
    cache = startcache.load() if cached else None
    schemas = cache["output_schemas"] if cache else None
    mcp = MCPServer("aoti-debug", title="aoti-debug", instructions=INSTRUCTIONS, version=package_version())
    _register_classify(mcp, roots, schemas)
    _register_parity(mcp, roots, schemas)
    _register_rerun(mcp, roots, schemas)
    _register_kernels(mcp, roots, schemas)
    _register_triage(mcp, roots, schemas)
    _register_guides(mcp, cache)
    _register_prompts(mcp)
    return mcp
