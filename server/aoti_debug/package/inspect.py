"""Read an AOTI .pt2 statically (never extracted, never dlopen'ed): per-model facts and InputContract."""

from __future__ import annotations

import json
import os
from pathlib import Path

from aoti_debug.common.errors import BadInput
from aoti_debug.package import elfscan, wrapper_cpp
from aoti_debug.package.contract import LibraryFacts, ModelFacts, PackageFacts
from aoti_debug.package.pt2zip import MemberError, ModelFiles, Pt2Archive, open_pt2

KNOWN_KEYS = ("AOTI_DEVICE_KEY", "AOTI_PLATFORM", "AOTI_MACHINE", "AOTI_CPU_ISA", "AOTI_COMPUTE_CAPABILITY")
KERNEL_BINARIES = (".cubin", ".hsaco", ".fatbin", ".spv", ".zebin")
WEIGHT_SUFFIXES = (".blob", ".bin", "weights_config.json")
# A metadata JSON is a few hundred bytes; user metadata can add some.
MAX_METADATA_BYTES = 1 << 20


def _wrapper_member(files: ModelFiles, arc: Pt2Archive, notes: list[str]) -> str | None:
    """<hash>.wrapper.cpp (split sources), else the one .cpp holding the model class (older single file)."""
    wrappers = files.ending(".wrapper.cpp")
    if wrappers:
        return wrappers[0]
    for member in files.ending(".cpp"):
        if member.endswith(".kernel.cpp"):
            continue
        try:
            head = arc.read_text(member)
        except MemberError as exc:
            notes.append(str(exc))
            continue
        if "AOTInductorModel" in head or "inputs_info_" in head:
            return member
    return None


def _metadata(files: ModelFiles, arc: Pt2Archive, wrapper: str | None, mf: ModelFacts) -> None:
    """<stem>_metadata.json next to the wrapper (what the loader reads), else any non-kernel metadata JSON."""
    candidates = files.ending("_metadata.json")
    if wrapper:
        own = wrapper[: -len(".cpp")] + "_metadata.json"
        candidates = [own] if own in candidates else candidates
    candidates = [c for c in candidates if not c.endswith("kernel_metadata.json")] or candidates
    if not candidates:
        mf.notes.append("no *_metadata.json: the compile device (AOTI_DEVICE_KEY) is unknown")
        return
    try:
        raw = json.loads(arc.read(candidates[0], MAX_METADATA_BYTES).decode("utf-8", errors="replace"))
    except (MemberError, json.JSONDecodeError) as exc:
        mf.notes.append(f"unreadable metadata {candidates[0]}: {exc}")
        return
    if not isinstance(raw, dict):
        mf.notes.append(f"metadata {candidates[0]} is not a JSON object")
        return
    mf.metadata = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}
    mf.metadata_extra = {k: v for k, v in mf.metadata.items() if k not in KNOWN_KEYS}
    mf.device_key = mf.metadata.get("AOTI_DEVICE_KEY") or None
    mf.platform = mf.metadata.get("AOTI_PLATFORM")
    mf.machine = mf.metadata.get("AOTI_MACHINE")
    mf.cpu_isa = mf.metadata.get("AOTI_CPU_ISA")
    mf.compute_capability = mf.metadata.get("AOTI_COMPUTE_CAPABILITY")
    if not mf.device_key:
        mf.notes.append(f"metadata {candidates[0]} has no AOTI_DEVICE_KEY")


def _extern_ops(arc: Pt2Archive, members: list[str], notes: list[str]) -> list[str]:
    """Targets named in the serialized extern-kernel nodes (<hash>.json beside the wrapper): the custom ops."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "target" and isinstance(v, str):
                    found.add(v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for member in members:
        try:
            walk(json.loads(arc.read_text(member)))
        except (MemberError, json.JSONDecodeError) as exc:
            notes.append(f"unreadable extern-op list {member}: {exc}")
    return sorted(found)


def _library(arc: Pt2Archive, member: str) -> LibraryFacts:
    size = arc.size(member)

    def read(offset: int, length: int) -> bytes:
        try:
            return arc.read_range(member, offset, length)
        except MemberError as exc:
            raise ValueError(str(exc)) from exc

    return LibraryFacts(member=member, size_bytes=size, elf=elfscan.scan(read, size))


def inspect_model(arc: Pt2Archive, files: ModelFiles) -> ModelFacts:
    """Facts of one data/aotinductor/<model>/ folder; unreadable parts become notes."""
    mf = ModelFacts(name=files.name, folder=files.folder)
    wrapper = _wrapper_member(files, arc, mf.notes)
    mf.wrapper = wrapper
    _metadata(files, arc, wrapper, mf)
    mf.libraries = [_library(arc, m) for m in files.ending(".so")]
    mf.cubins = files.ending(*KERNEL_BINARIES)
    mf.weights = [m for m in files.members if m.endswith(WEIGHT_SUFFIXES) or "/weights/" in m]
    known = {wrapper, *(lib.member for lib in mf.libraries), *mf.cubins, *mf.weights}
    mf.other_files = sorted(m for m in files.members if m not in known)
    op_lists = [m for m in mf.other_files if m.endswith(".json") and not m.endswith(("_metadata.json", "_flags.json"))]
    mf.extern_ops = _extern_ops(arc, op_lists, mf.notes)
    if wrapper is None:
        mf.notes.append("no wrapper C++ source: input contract and compiler unknown")
        return mf
    try:
        text = arc.read_text(wrapper)
    except MemberError as exc:
        mf.notes.append(str(exc))
        return mf
    contract, notes = wrapper_cpp.parse_contract(text, files.name, mf.device_key)
    mf.contract = contract
    mf.notes += notes
    mf.toolchain = wrapper_cpp.parse_toolchain(text)
    if mf.toolchain is None:
        mf.notes.append("no '// Compile cmd' trailer in the wrapper: compiler unknown")
    mf.kernels_loaded = wrapper_cpp.kernels_loaded(text)
    mf.torch_hint = wrapper_cpp.torch_hint(text)
    return mf


def inspect_package(path: str | Path, within: list[Path] | None = None) -> PackageFacts:
    """Every model of a .pt2 with its contract; BadInput if it is not a zip or holds no AOTI model.
    within: the folders the opened package must lie in (the server's roots)."""
    with open_pt2(path, within) as arc:
        facts = PackageFacts(path=str(arc.path), size_bytes=os.fstat(arc.fileno()).st_size, entries=len(arc.infos),
                             root=arc.root(), unsafe_members=arc.unsafe)
        models = arc.models()
        if not models:
            names = ", ".join(sorted(arc.infos)[:8]) or "none"
            raise BadInput(f"{arc.path} holds no AOTI model (no data/aotinductor/<model>/ folder); entries: {names}")
        facts.models = [inspect_model(arc, files) for files in models.values()]
        if facts.root is None:
            facts.notes.append("data/aotinductor/ is not under one root folder (torch's archive writer adds one)")
        if len(facts.models) > 1:
            facts.notes.append(f"{len(facts.models)} models: {', '.join(m.name for m in facts.models)}; "
                               "aoti_load_package loads 'model' unless told otherwise")
        facts.notes += arc.notes
    return facts
