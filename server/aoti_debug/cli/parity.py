"""aoti-debug parity PACKAGE [--inputs FILE|JSON | --inputs-run ID] [--load-device DEV] [--python PY] [--json]"""

from __future__ import annotations

import argparse

from aoti_debug.cli._out import emit
from aoti_debug.parity.engine import check_parity
from aoti_debug.parity.model import ParityReport
from aoti_debug.runs.probe import parse_inputs_json

EXIT_MISMATCH = 1


def register(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name, help="Check a .pt2 against the target runtime and the actual inputs (compile device = load device...)",
        description="Read the package statically, probe the target Python, compare. Exit 0 if everything was "
                    "compared and nothing will fail, 1 otherwise, 2 on bad input.")
    p.add_argument("package", help="The .pt2 file")
    p.add_argument("--inputs", metavar="FILE|JSON",
                   help='torch.save file of the inputs (tuple/list/dict of tensors), a .json file, or JSON text: '
                        '[{"dtype": "float32", "shape": [4, 8], "stride": [8, 1], "device": "cpu"}]')
    p.add_argument("--inputs-run", metavar="ID",
                   help="A rerun made with --preset calls: compare the tensors of the call it died in (else its "
                        "first call)")
    p.add_argument("--load-device", metavar="DEV", help="Device the package will be loaded on (cuda, cuda:1, cpu)")
    p.add_argument("--python", metavar="PY", help="The Python that will load it (default: this one)")
    p.add_argument("--model", metavar="NAME", help="Model folder under data/aotinductor/ (default: model)")
    p.add_argument("--no-probe", action="store_true", help="Do not run the target Python: package and inputs only")
    p.add_argument("--json", action="store_true", help="Print the ParityReport model as JSON")
    return p


def _runtime_line(r: ParityReport) -> str:
    rt = r.runtime
    if rt is None:
        return "runtime:  not probed"
    if rt.torch_error:
        return f"runtime:  {rt.python}: no torch ({rt.torch_error})"
    gpus = ", ".join(f"{d.name} (cc {d.capability})" for d in rt.devices) or (
        "CUDA build, no GPU" if rt.torch_cuda else "no CUDA")
    glibcxx = max((v for v in rt.libstdcxx_versions if v.startswith("GLIBCXX_")),
                  key=lambda v: [int(x) for x in v.split("_")[1].split(".")], default="?")
    return (f"runtime:  {rt.python} torch {rt.torch_version}, {gpus}, CPU {rt.cpu_capability or '?'}, "
            f"libstdc++ {glibcxx}, compiler {rt.compiler_version or rt.compiler or '?'}")


def human(r: ParityReport) -> str:  # type: ignore[override]
    lines = [f"parity:   {'OK' if r.ok else 'FAIL'}  {r.summary}"]
    m = r.package.model(r.model) if r.model else None
    if m is not None:
        lines.append(f"package:  {r.package.path} (model '{m.name}', {m.device_key or '?'}"
                     f"{', cc ' + m.compute_capability if m.compute_capability else ''}, {m.cpu_isa or '?'}, "
                     f"{m.torch_hint.describe()}, input checks: {r.checks or '?'})")
    lines.append(_runtime_line(r))
    if r.predicted_check_error:
        lines.append(f"with AOTI_RUNTIME_CHECK_INPUTS=1 expect: {r.predicted_check_error}")
    if r.mismatches:
        lines.append("mismatches:")
    for mm in r.mismatches:
        lines.append(f"  {mm.severity.upper():7} {mm.kind}: {mm.message}")
        if mm.with_check:
            lines.append(f"          check says: {mm.with_check}")
        if mm.at_runtime:
            lines.append("          at run time: " + "; ".join(f"{o.outcome} ({o.when})" for o in mm.at_runtime))
        lines.append(f"          fix: {mm.fix}")
    if r.inputs:
        lines.append("inputs:")
        for i in r.inputs:
            lines.append(f"  [{i.index}] {i.name or '?'}: {i.status}  expected {i.expected or '-'}  got {i.got or '-'}")
    for u in r.unchecked:
        lines.append(f"unchecked: {u}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    inputs_file, inputs = None, None
    if args.inputs is not None:
        if args.inputs.lstrip().startswith("["):
            inputs = parse_inputs_json(args.inputs)
        else:
            inputs_file = args.inputs
    report = check_parity(args.package, inputs_file=inputs_file, inputs=inputs, load_device=args.load_device,
                          python=args.python, model=args.model, probe_runtime=not args.no_probe,
                          inputs_run=args.inputs_run)
    emit(report, args.json, human)
    return 0 if report.ok else EXIT_MISMATCH
