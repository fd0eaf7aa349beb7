"""The models inspect_pt2 returns: an InputContract per model and the package facts around it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from aoti_debug.package.elfscan import ElfFacts

Checks = Literal["runtime_env", "always", "absent", "unknown"]


class DimSpec(BaseModel):
    """One dimension of an input as the generated checks (and size asserts) state it."""

    dim: int
    value: int | None = Field(None, description="The static size, if the dimension is static")
    min: int | None = Field(None, description="Lower bound of a dynamic dimension (the 'too small' check)")
    max: int | None = Field(None, description="Upper bound of a dynamic dimension (the 'too large' check)")
    symbol: str | None = Field(None, description="Size symbol (s0, s27...) shared by every dimension bound to it")
    symbol_inferred: bool = Field(
        False, description="The code names no symbol here (older torch): the one bound symbol of this range is assumed")

    @property
    def dynamic(self) -> bool:
        return self.value is None

    def describe(self) -> str:
        if self.value is not None:
            return str(self.value)
        lo = "" if self.min is None else str(self.min)
        hi = "" if self.max is None else str(self.max)
        name = self.symbol or "dyn"
        return f"{name}[{lo}..{hi}]" if (lo or hi) else name


class InputSpec(BaseModel):
    """What the package expects of one input tensor."""

    index: int = Field(description="Position in the flat input list (input_handles[index])")
    name: str = Field(description="Graph input name from inputs_info_ (arg3_1, x...)")
    dtype: str | None = Field(None, description="torch dtype name without 'torch.' (float32, int64...)")
    sizes: list[DimSpec] = Field(default_factory=list)
    rank: int | None = Field(None, description="Number of dimensions, when the code states it")
    rank_exact: bool = Field(False, description="rank comes from a size assert (exact), not from the checks (a floor)")
    strides: list[int | str | None] = Field(
        default_factory=list, description="Static stride, symbolic expression (dynamic), or null if unknown")
    device_type: str | None = Field(None, description="cpu or cuda when a device check exists")
    checked: bool = Field(False, description="A runtime check block for this input exists in wrapper.cpp")

    def describe(self) -> str:
        shape = ", ".join(d.describe() for d in self.sizes) if self.sizes else "?"
        stride = ", ".join("?" if s is None else str(s) for s in self.strides)
        return f"{self.dtype or '?'}[{shape}] stride [{stride}] {self.device_type or '?'}"


class ConstantSpec(BaseModel):
    """One weight or buffer the model carries (constants_info_)."""

    index: int
    name: str
    original_fqn: str | None = None
    dtype: str | None = None
    shape: list[int] = Field(default_factory=list)
    stride: list[int] = Field(default_factory=list)
    device_type: str | None = None
    kind: str | None = Field(None, description="Parameter, Buffer, TensorConstant, FoldedConstant")
    data_size: int | None = None
    from_folded: bool | None = None


class InputContract(BaseModel):
    """Everything wrapper.cpp says about how the model must be called."""

    model: str
    inputs: list[InputSpec] = Field(default_factory=list)
    num_inputs: int | None = Field(None, description="From the AOTInductorModelBase(...) constructor call")
    num_outputs: int | None = None
    num_constants: int | None = None
    constants_in_so: bool | None = Field(
        None, description="Weights embedded in the .so (include_weights); false: on disk or from the caller")
    output_names: list[str] = Field(default_factory=list)
    constants: list[ConstantSpec] = Field(default_factory=list)
    in_spec: str | None = Field(None, description="Serialized pytree spec of (args, kwargs)")
    out_spec: str | None = None
    checks: Checks = Field(
        "unknown", description="runtime_env: checks run when AOTI_RUNTIME_CHECK_INPUTS is set at run time; "
        "always: compiled in unconditionally (old AOT_INDUCTOR_DEBUG_COMPILE builds); absent: none generated")
    size_asserts: bool = Field(False, description="run_impl also calls assert_size_stride on inputs under the same env")
    device_key: str | None = Field(None, description="AOTI_DEVICE_KEY of the model (the compile device type)")


class Toolchain(BaseModel):
    """The compile and link commands recorded at the end of wrapper.cpp."""

    compiler: str | None = Field(None, description="First word of the compile command: the C++ compiler used")
    march: str | None = Field(None, description="-march value; native ties the code to the build host's CPU")
    std: str | None = None
    opt_level: str | None = None
    defines: list[str] = Field(default_factory=list)
    isa_flags: list[str] = Field(default_factory=list, description="-mavx2, -mavx512f ...")
    libraries: list[str] = Field(default_factory=list, description="-l libraries of the link command")
    include_dirs: list[str] = Field(default_factory=list)
    compile_cmd: str | None = Field(None, description="The compile command (cut to 4000 characters)")
    link_cmd: str | None = None


class TorchHint(BaseModel):
    """Which torch produced the code, from version-specific forms in it."""

    min_version: str | None = Field(None, description="Oldest torch that generates every form seen")
    max_version: str | None = Field(None, description="Newest torch that still generates them")
    evidence: list[str] = Field(default_factory=list, description="The forms that decided it, with provenance")

    def describe(self) -> str:
        if self.min_version and self.max_version:
            return f"torch {self.min_version}..{self.max_version}"
        if self.min_version:
            return f"torch >= {self.min_version}"
        if self.max_version:
            return f"torch <= {self.max_version}"
        return "unknown torch"


class LibraryFacts(BaseModel):
    member: str = Field(description="Archive member of the model .so")
    size_bytes: int
    elf: ElfFacts


class ModelFacts(BaseModel):
    """One data/aotinductor/<model>/ folder."""

    name: str
    folder: str = Field(description="Archive path of the model folder")
    metadata: dict[str, str] = Field(default_factory=dict, description="wrapper_metadata.json as read")
    metadata_extra: dict[str, str] = Field(default_factory=dict, description="Keys beyond the known AOTI_* ones")
    device_key: str | None = Field(None, description="AOTI_DEVICE_KEY: the device type it was compiled for")
    platform: str | None = None
    machine: str | None = None
    cpu_isa: str | None = None
    compute_capability: str | None = None
    wrapper: str | None = Field(None, description="Archive member holding the wrapper C++ source")
    libraries: list[LibraryFacts] = Field(default_factory=list)
    cubins: list[str] = Field(default_factory=list, description="GPU kernel binaries (.cubin, .hsaco, .fatbin)")
    kernels_loaded: dict[str, str] = Field(
        default_factory=dict, description="Kernel name -> binary file named in loadKernel(...) calls")
    weights: list[str] = Field(default_factory=list, description="Weight members outside the .so")
    extern_ops: list[str] = Field(
        default_factory=list, description="Ops run through the proxy executor (custom ops), from <hash>.json")
    other_files: list[str] = Field(default_factory=list)
    contract: InputContract | None = None
    toolchain: Toolchain | None = None
    torch_hint: TorchHint = Field(default_factory=TorchHint)
    notes: list[str] = Field(default_factory=list, description="What could not be read, and why")


class PackageFacts(BaseModel):
    """A .pt2 package, read statically: never extracted, never loaded."""

    path: str
    size_bytes: int
    entries: int
    root: str | None = Field(None, description="The single top folder (named after the file it was saved as)")
    models: list[ModelFacts] = Field(default_factory=list)
    unsafe_members: dict[str, str] = Field(
        default_factory=dict, description="Member name -> why it could escape an extraction folder")
    notes: list[str] = Field(default_factory=list)

    def model(self, name: str | None = None) -> ModelFacts | None:
        """The named model, else 'model' (what aoti_load_package loads), else the first."""
        by_name = {m.name: m for m in self.models}
        if name is not None:
            return by_name.get(name)
        return by_name.get("model") or (self.models[0] if self.models else None)
