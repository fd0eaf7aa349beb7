"""The small user scripts of tests/make_fixture_logs.py: bugs the examples of examples/ do not plant.

Each is written to a fresh folder and run there as `python <folder>/<name> MODE [ARGS]`.
"""

SCRIPTS = {
    "wrong_call.py": '''\
"""Load a CPU package and call it (or load its constants) the wrong way: argv = PACKAGE MODE."""
import sys

import torch

package, mode = sys.argv[1], sys.argv[2]
model = torch._inductor.aoti_load_package(package)
x = torch.randn(4, 8)  # examples/static_shape_mismatch.py exports x of shape [4, 8]
if mode == "stride":  # a transposed view: shape [4, 8], strides (1, 4) instead of (8, 1)
    x = torch.randn(8, 4).t()
elif mode == "rank":  # a stray trailing dimension
    x = torch.randn(4, 8, 1)
elif mode == "count":  # one input too many
    print(model(x, x))
elif mode == "constants_empty":  # a "full" constants update that provides none
    model.load_constants({}, check_full_update=True)
elif mode == "constants_state_dict":  # the eager model's state_dict: names the package does not keep
    eager = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    model.load_constants(eager.state_dict(), check_full_update=True)
elif mode == "nan_input":  # examples/nan.py's package: one NaN feature
    x = torch.rand(4, 8) + 0.1
    x[2, 5] = float("nan")
elif mode == "broadcast_view":  # examples/dynamic_above_max.py's package: a free [4, 2**48] view
    x = torch.zeros(1).expand(4, 2**48)
print(model(x).shape)
''',
    "custom_op.py": '''\
"""A model with a Python custom op (mylib::twice): argv = MODE [PATH]."""
import sys

import torch

mode = sys.argv[1]
if mode != "load_without_op":
    @torch.library.custom_op("mylib::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    if mode != "no_fake":
        @twice.register_fake
        def _(x):
            return torch.empty_like(x)


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.ops.mylib.twice(x.sin()) + 1


x = torch.randn(3, 4)
if mode in ("build", "no_fake", "no_fallbacks"):
    ep = torch.export.export(Model(), (x,))
    configs = {"implicit_fallbacks": False} if mode == "no_fallbacks" else None
    print(torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[2], inductor_configs=configs))
elif mode == "load_without_op":  # a serving process that never defined mylib::twice
    print(torch._inductor.aoti_load_package(sys.argv[2])(x))
elif mode == "so_without_json":  # the .so taken out of the .pt2 and loaded alone (its .json left behind)
    import zipfile
    with zipfile.ZipFile(sys.argv[2]) as z:
        member = next(n for n in z.namelist() if n.endswith(".wrapper.so"))
        so = z.extract(member, sys.argv[3])
    print(torch._export.aot_load(so, device="cpu")(x))
''',
    "c_shim.py": '''\
"""Declare a C shim for a custom op (aot_inductor.custom_ops_to_c_shims): argv = MODE PATH."""
import sys

import torch


@torch.library.custom_op("mylib::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.ops.mylib.twice(x.sin()) + 1


declaration = {  # "link": nobody provides the symbol; "compile": a typo in the declared type
    "link": "AOTITorchError aoti_torch_cpu_twice(AtenTensorHandle self, AtenTensorHandle* ret0);",
    "compile": "AOTITorchError aoti_torch_cpu_twice(AtenTensorHandle self, UndeclaredType* ret0);",
}[sys.argv[1]]
ep = torch.export.export(Model(), (torch.randn(3, 4),))
configs = {"aot_inductor.custom_ops_to_c_shims": {torch.ops.mylib.twice.default: [declaration]}}
path = torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[2], inductor_configs=configs)
print("built", path)
print(torch._inductor.aoti_load_package(path)(torch.randn(3, 4)))
''',
    "weights_outside.py": '''\
"""Build a package whose weights are not in the .so, then run it without loading them: argv = PATH."""
import sys

import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).eval()
ep = torch.export.export(model, (torch.randn(4, 8),))
path = torch._inductor.aoti_compile_and_package(
    ep, package_path=sys.argv[1], inductor_configs={"aot_inductor.package_constants_in_so": False})
compiled = torch._inductor.aoti_load_package(path)
print(compiled.get_constant_fqns())
print(compiled(torch.randn(4, 8)))  # the bug: load_constants(...) was never called
''',
    "export_fail.py": '''\
"""Models torch.export cannot trace as written: argv = MODE."""
import sys

import torch


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # Python control flow on a tensor value
            return x + 1
        return x - 1


class ShapeBranch(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 4:  # only valid for part of the declared dynamic range
            return x + 1
        return x - 1


mode = sys.argv[1]
x = torch.randn(8, 4)
if mode == "data_dependent":
    torch.export.export(DataDependent(), (x,))
elif mode == "constraints":
    torch.export.export(ShapeBranch(), (x,), dynamic_shapes={"x": {0: torch.export.Dim("b")}})
print("exported")
''',
}
