"""Facts that need torch, learned by running the probe scripts in the target Python (never imported here)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aoti_debug.common.errors import BadInput, from_validation

if TYPE_CHECKING:
    from aoti_debug.runs import proc

PROBES = Path(__file__).resolve().parent.parent / "probes"
# A model call's inputs described as JSON; more is not a call (and would cost seconds to compare and report).
MAX_INPUTS = 2048
# Importing torch takes 2-20 s (cold disk); CUDA init on a broken driver can hang: stop it then.
RUNTIME_TIMEOUT_S = 120.0
# torch.load of a large inputs file (mmap-free) plus the import.
INPUTS_TIMEOUT_S = 180.0


class GpuFacts(BaseModel):
    index: int
    name: str
    capability: str = Field(description="major*10+minor as AOTI_COMPUTE_CAPABILITY spells it ('90'), or gfx arch")
    total_memory: int | None = None


class RuntimeFacts(BaseModel):
    """The loading process as the probe saw it: Python, torch, GPUs, CPU, C++ runtime and compiler."""

    python: str
    python_version: str | None = None
    platform: str | None = None
    machine: str | None = None
    libc: str | None = None
    torch_version: str | None = None
    torch_git: str | None = None
    torch_cuda: str | None = Field(None, description="CUDA version torch was built with; null for a +cpu build")
    torch_hip: str | None = None
    torch_error: str | None = Field(None, description="Why 'import torch' failed in the target Python")
    cuda_available: bool | None = None
    cuda_error: str | None = None
    device_count: int | None = None
    devices: list[GpuFacts] = Field(default_factory=list)
    cpu_capability: str | None = Field(None, description="torch.backends.cpu.get_cpu_capability()")
    cpu_flags: list[str] = Field(default_factory=list, description="/proc/cpuinfo flags")
    libstdcxx: str | None = Field(None, description="libstdc++ mapped into the process after importing torch")
    libstdcxx_versions: list[str] = Field(default_factory=list, description="GLIBCXX_/CXXABI_ versions it provides")
    compiler: str | None = Field(None, description="The C++ compiler inductor would use (config.cpp.cxx)")
    compiler_path: str | None = None
    compiler_version: str | None = None
    compiler_libstdcxx: str | None = None
    compiler_libstdcxx_versions: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ActualInput(BaseModel):
    """One tensor as it will be passed (from a torch.save file or given as JSON)."""

    model_config = ConfigDict(extra="forbid")
    dtype: str = Field(description="torch dtype name: float32, int64, bfloat16 (torch. prefix allowed)")
    shape: list[int] = Field(description="Sizes")
    stride: list[int] | None = Field(None, description="Strides; default: contiguous")
    device: str = Field("cpu", description="cpu, cuda, cuda:1, meta ...")
    path: str | None = Field(None, description="Where it sits in the saved object ([0], ['ids'])")
    storage_offset: int | None = None

    def contiguous_stride(self) -> list[int]:
        out, step = [], 1
        for size in reversed(self.shape):
            out.append(step)
            step *= max(size, 1)
        return out[::-1]

    def strides(self) -> list[int]:
        return self.stride if self.stride is not None else self.contiguous_stride()

    def describe(self) -> str:
        return f"{self.dtype}{self.shape} stride {self.strides()} {self.device}"


class ProbeOutcome(BaseModel):
    """What a probe produced: data, or why not."""

    data: dict | None = None
    error: str | None = None


def probe_spec(python: str, workdir: Path, inputs: Path | None) -> tuple[proc.ProcSpec, Path, Path | None]:
    """One run of runtime_probe.py (and, with inputs, the inputs description in the same process)."""
    from aoti_debug.runs import (
        proc,  # here, so the comparison modules import without anyio (tests/gpu/verify_parity.py)
    )

    out = workdir / "runtime.json"
    inputs_out = workdir / "inputs.json" if inputs is not None else None
    extra = [str(inputs), str(inputs_out)] if inputs is not None else []
    timeout = INPUTS_TIMEOUT_S if inputs is not None else RUNTIME_TIMEOUT_S
    spec = proc.ProcSpec(argv=[python, str(PROBES / "runtime_probe.py"), str(out), *extra], timeout_s=timeout,
                         stdout_tty=False, env_overrides={"PYTHONWARNINGS": "ignore"})
    return spec, out, inputs_out


def _finish(result: proc.ProcResult, out: Path, what: str) -> ProbeOutcome:
    if out.exists():
        try:
            return ProbeOutcome(data=json.loads(out.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            return ProbeOutcome(error=f"{what} wrote unreadable output: {exc}")
    why = "timed out" if result.timed_out else result.spawn_error or f"exit {result.returncode}"
    tail = result.stderr_tail.strip().splitlines()[-1:] if result.stderr_tail.strip() else []
    return ProbeOutcome(error=f"{what} in {result.argv[0]} failed ({why}){': ' + tail[0] if tail else ''}")


def check_python(python: str | None, roots: list[Path] | None = None) -> str:
    """The target interpreter: given path or name, else this one; BadInput if it is not a Python interpreter.

    roots (the MCP server's): it must also lie in the roots or a folder the server's user trusts (common/programs.py);
    None (the CLI, whose user names their own interpreter): any Python interpreter.
    """
    from aoti_debug.common import programs

    if not python:
        return sys.executable
    if roots is not None:
        return programs.check_python(python, roots)
    path, on_path = programs.locate(python)
    # The CLI's user names their own interpreter: a python* wrapper script is theirs to run.
    if not (programs.is_python(path, on_path) or programs.PYTHON_NAME.fullmatch(path.name)):
        raise BadInput(f"target Python {python!r} must be a Python interpreter (python, python3, python3.12 ...)")
    return str(path)


def runtime_facts(outcome: ProbeOutcome) -> tuple[RuntimeFacts | None, str | None]:
    if outcome.data is None:
        return None, outcome.error
    try:
        facts = RuntimeFacts.model_validate(outcome.data)
    except ValidationError as exc:
        return None, f"runtime probe output did not validate: {exc.errors()[0]['msg']}"
    return facts, facts.torch_error and f"the target Python has no usable torch: {facts.torch_error}"


def actual_inputs(outcome: ProbeOutcome, source: str) -> tuple[list[ActualInput] | None, str | None]:
    """Tensors from the inputs probe; BadInput when the file is readable but holds no tensors."""
    data = outcome.data
    if data is None:
        return None, outcome.error
    if data.get("status") == "bad_inputs":
        raise BadInput(f"inputs file {source} is not a torch.save of tensors: {data.get('reason')}")
    if data.get("status") != "ok":
        return None, f"inputs probe: {data.get('reason') or data.get('status')}"
    fields = set(ActualInput.model_fields)
    try:
        return [ActualInput.model_validate({k: v for k, v in item.items() if k in fields})
                for item in data.get("inputs", [])], None
    except (ValidationError, AttributeError) as exc:
        return None, f"inputs probe output did not validate: {exc}"


def parse_inputs_json(text: str) -> list[ActualInput]:
    """[{"dtype": .., "shape": .., "stride": .., "device": ..}, ...] -> ActualInput list; BadInput otherwise."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"inputs JSON does not parse: {exc}") from exc
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise BadInput('inputs JSON must be a list of objects like {"dtype": "float32", "shape": [4, 8]}')
    if len(raw) > MAX_INPUTS:
        raise BadInput(f"inputs JSON lists {len(raw)} inputs; at most {MAX_INPUTS} (a model call's inputs, not its "
                       "weights)")
    try:
        return [ActualInput.model_validate(x) for x in raw]
    except ValidationError as exc:
        raise from_validation(exc, "inputs JSON item") from exc


def _outcomes(result: proc.ProcResult, out: Path, inputs_out: Path | None) -> tuple[ProbeOutcome, ProbeOutcome | None]:
    runtime = _finish(result, out, "runtime probe")
    if inputs_out is None:
        return runtime, None
    return runtime, _finish(result, inputs_out, "inputs probe")


def run_probes(python: str, inputs_file: Path | None) -> tuple[ProbeOutcome, ProbeOutcome | None]:
    """Run the probe synchronously in a private temp dir."""
    from aoti_debug.runs import proc

    with tempfile.TemporaryDirectory(prefix="aoti-parity-") as tmp:
        spec, out, inputs_out = probe_spec(python, Path(tmp), inputs_file)
        return _outcomes(proc.run(spec), out, inputs_out)


async def run_probes_async(python: str, inputs_file: Path | None) -> tuple[ProbeOutcome, ProbeOutcome | None]:
    """run_probes for the MCP server: cancelling the call kills the probe."""
    from aoti_debug.runs import proc

    with tempfile.TemporaryDirectory(prefix="aoti-parity-") as tmp:
        spec, out, inputs_out = probe_spec(python, Path(tmp), inputs_file)
        return _outcomes(await proc.run_async(spec), out, inputs_out)
