"""Direct launches as an effects producer: a ``<<<>>>`` launch's arguments traced back to the op's tensors and
forward into the device kernel's copies to global memory, as ``opkit lint`` loads the files."""

from __future__ import annotations

import pytest

from opkit.effects import device
from opkit.effects.model import Knowledge
from opkit.lint.engine import load_project

# A device kernel of our own: Init binds the GM_ADDRs, CopyOut copies into `cache` only.
KERNEL = """
#include "kernel_operator.h"
class KernelFill {
public:
    __aicore__ inline void Init(GM_ADDR src, GM_ADDR cache, uint32_t n)
    {
        srcGm.SetGlobalBuffer((__gm__ half *)src, n);
        cacheGm.SetGlobalBuffer((__gm__ half *)cache, n);
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<half> local = queue.AllocTensor<half>();
        AscendC::DataCopy(local, srcGm[0], 16);
        AscendC::DataCopy(cacheGm[0], local, 16);
    }
    AscendC::GlobalTensor<half> srcGm, cacheGm;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> queue;
};
__global__ __aicore__ void fill_kernel(GM_ADDR src, GM_ADDR cache, uint32_t n)
{
    KernelFill op;
    op.Init(src, cache, n);
    op.Process();
}
"""

HOST = """
#include <torch/library.h>
#include "torch_npu/csrc/core/npu/NPUStream.h"
namespace demo {
void fill_cache(const at::Tensor &x, const at::Tensor &cache)
{
    auto stream = c10_npu::getCurrentNPUStream();
    auto src = (uint8_t *)(x.mutable_data_ptr());
    fill_kernel<<<8, nullptr, stream>>>(src, (GM_ADDR)cache.data_ptr(), static_cast<uint32_t>(x.numel()));
}
}
TORCH_LIBRARY(demo, m) { m.def("SCHEMA"); }
TORCH_LIBRARY_IMPL(demo, PrivateUse1, m) { m.impl("fill_cache", TORCH_FN(demo::fill_cache)); }
"""


def effects_of(tmp_path, files: dict[str, str]) -> dict:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    project = load_project([str(tmp_path)])
    return {e.op: e for e in device.produce(project)}


@pytest.mark.parametrize("schema", ["fill_cache(Tensor x, Tensor cache) -> ()", "fill_cache(Tensor x, Tensor(a!) cache) -> ()"])
def test_a_launch_in_one_asc_file_writes_what_its_kernel_copies_into(tmp_path, schema):
    found = effects_of(tmp_path, {"fill.asc": KERNEL + HOST.replace("SCHEMA", schema)})
    effects = found["demo::fill_cache"]
    assert effects.written == ("cache",)  # what the kernel does, whatever the schema promises
    assert effects.argument("x").written is Knowledge.NO
    [evidence] = effects.argument("cache").evidence
    assert (evidence.path.endswith("fill.asc"), evidence.line) == (True, KERNEL.splitlines().index("        AscendC::DataCopy(cacheGm[0], local, 16);") + 1)
    assert "fill_kernel<<<>>>" in evidence.why and "passes it as cache" in evidence.why
    assert [k.function for k in effects.kernels] == ["fill_kernel"] and effects.kernels[0].language == "device"


def test_a_launcher_function_in_the_kernel_file_called_with_data_pointers(tmp_path):
    """The vllm-ascend shape: the op's host function (in a header the registering file includes) captures data
    pointers in a lambda and calls a launcher defined beside the device kernel, which launches with its raw pointers."""
    launcher = KERNEL + """
namespace demo {
void fill_launch(void *stream, void *src, void *dst, uint32_t n)
{
    fill_kernel<<<8, nullptr, stream>>>(src, dst, n);
}
}
"""
    header = """
#pragma once
namespace demo {
void fill_launch(void *stream, void *src, void *dst, uint32_t n);
void fill_cache(const at::Tensor &x, at::Tensor &cache)
{
    at::Tensor target = cache;
    void *src_ptr = x.data_ptr();
    void *dst_ptr = target.data_ptr();
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    at_npu::native::OpCommand::RunOpApiV2("fill_cache", [=]() -> int {
        fill_launch(stream, src_ptr, dst_ptr, 16);
        return 0;
    });
}
}
"""
    binding = """
#include <torch/library.h>
#include "ops/fill_cache.h"
TORCH_LIBRARY(demo, m) { m.def("fill_cache(Tensor x, Tensor cache) -> ()"); }
TORCH_LIBRARY_IMPL(demo, PrivateUse1, m) { m.impl("fill_cache", TORCH_FN(demo::fill_cache)); }
"""
    found = effects_of(tmp_path, {"kernels/fill.cpp": launcher, "ops/fill_cache.h": header, "binding.cpp": binding})
    effects = found["demo::fill_cache"]
    assert effects.written == ("cache",) and effects.argument("x").written is Knowledge.NO
    assert effects.unknowns == ()


def test_a_launch_two_launchers_deep_from_a_lambda_variable_and_an_output_a_helper_allocates(tmp_path):
    """ops-nn's extension shape: the op allocates its output through a helper of the file (its Meta), keeps the
    launch in a lambda variable given to RunOpApi, and reaches the launch through two launcher functions."""
    host = KERNEL + """
namespace demo {
at::Tensor fill_meta(const at::Tensor &x)
{
    auto out = at::empty_like(x);
    return out;
}
void fill_kernel_launch(void *stream, uint8_t *src, uint8_t *dst, uint32_t n) { fill_kernel<<<8, nullptr, stream>>>(src, dst, n); }
int fill_launch(void *stream, uint8_t *src, uint8_t *dst, uint32_t n)
{
    fill_kernel_launch(stream, src, dst, n);
    return 0;
}
at::Tensor fill_copy(const at::Tensor &x)
{
    auto out = fill_meta(x);
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    auto call = [=]() -> int { return fill_launch(stream, (uint8_t *)x.data_ptr(), (uint8_t *)out.data_ptr(), 16); };
    at_npu::native::OpCommand::RunOpApi("fill_copy", call);
    return out;
}
}
TORCH_LIBRARY(demo, m) { m.def("fill_copy(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(demo, PrivateUse1, m) { m.impl("fill_copy", TORCH_FN(demo::fill_copy)); }
"""
    (tmp_path / "fill.asc").write_text(host)
    from opkit.effects.build import compute

    effects = compute(load_project([str(tmp_path)]))["demo::fill_copy"]
    # what the kernel writes is the helper's fresh tensor: x is read, and nothing is left unknown
    assert effects.argument("x").written is Knowledge.NO and effects.unknowns == ()


def test_a_kernel_whose_device_code_is_not_read_leaves_its_arguments_unknown(tmp_path):
    host = HOST.replace("SCHEMA", "fill_cache(Tensor x, Tensor cache) -> ()")
    found = effects_of(tmp_path, {"host.cpp": host})  # no device kernel among the files
    effects = found["demo::fill_cache"]
    assert {a.name: a.written for a in effects.arguments} == {"x": Knowledge.UNKNOWN, "cache": Knowledge.UNKNOWN}
    assert "fill_kernel<<<>>>" in effects.unknowns[0] and not effects.complete


def test_a_written_parameter_not_traced_to_an_argument_is_an_op_wide_unknown(tmp_path):
    host = HOST.replace("SCHEMA", "fill_cache(Tensor x, Tensor cache) -> ()").replace("(GM_ADDR)cache.data_ptr()", "workspace_of(cache)")
    effects = effects_of(tmp_path, {"fill.asc": KERNEL + host})["demo::fill_cache"]
    assert effects.written == ()
    assert effects.argument("cache").written is Knowledge.UNKNOWN and "workspace_of(cache)" in effects.argument("cache").unknown_because
    # the kernel writes memory whose owner is not traced: no argument can be said unwritten
    assert effects.argument("x").written is Knowledge.UNKNOWN and "does not trace it" in effects.argument("x").unknown_because

    assert any("writes its parameter cache" in u and "not traced" in u for u in effects.unknowns)


def test_a_pointer_with_an_offset_still_points_into_its_tensor(tmp_path):
    host = HOST.replace("SCHEMA", "fill_cache(Tensor x, Tensor cache) -> ()").replace("(GM_ADDR)cache.data_ptr()", "(GM_ADDR)cache.data_ptr() + 64")
    assert effects_of(tmp_path, {"fill.asc": KERNEL + host})["demo::fill_cache"].written == ("cache",)


def test_a_fresh_output_the_kernel_writes_is_no_argument(tmp_path):
    host = """
namespace demo {
at::Tensor fill_copy(const at::Tensor &x)
{
    at::Tensor out = at::empty_like(x);
    fill_kernel<<<8, nullptr, c10_npu::getCurrentNPUStream()>>>(x.data_ptr(), out.data_ptr(), 16);
    return out;
}
}
TORCH_LIBRARY(demo, m) { m.def("fill_copy(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(demo, PrivateUse1, m) { m.impl("fill_copy", TORCH_FN(demo::fill_copy)); }
"""
    effects = effects_of(tmp_path, {"copy.asc": KERNEL + host})["demo::fill_copy"]
    assert effects.written == () and effects.argument("x").written is Knowledge.NO and effects.unknowns == ()


def test_no_launch_no_effects(tmp_path):
    binding = 'TORCH_LIBRARY(demo, m) { m.def("f(Tensor x) -> Tensor"); }\n'
    assert effects_of(tmp_path, {"b.cpp": binding}) == {}


@pytest.mark.parametrize("schema, fires", [("fill_cache(Tensor x, Tensor cache) -> ()", True), ("fill_cache(Tensor x, Tensor(a!) cache) -> ()", False)])
def test_lint_reports_the_launched_kernels_undeclared_write_at_the_schema(tmp_path, schema, fires):
    from opkit.lint import Selection, lint

    text = KERNEL + HOST.replace("SCHEMA", schema)
    (tmp_path / "fill.asc").write_text(text)
    findings = lint([str(tmp_path)], selection=Selection(("K2",)), use_cache=False).findings
    assert [f.code for f in findings] == (["K201"] if fires else [])
    if fires:
        [finding] = findings
        schema_line = text.splitlines().index('TORCH_LIBRARY(demo, m) { m.def("' + schema + '"); }') + 1
        assert finding.line == schema_line and "'cache'" in finding.message and "DataCopy(cacheGm[0], ...)" in finding.message


@pytest.mark.parametrize(
    "name, schema",
    [("ext_scale", "ext_scale(Tensor(a!) x, Tensor y, float alpha=1.0) -> ()"), ("ext_norm", "ext_norm(Tensor x, Tensor? w, Tensor(a!) stats) -> (Tensor y, Tensor rstd)")],
)
def test_the_extension_style_is_read_back_as_its_schema_says(tmp_path, name, schema):
    """`opkit new --style extension`: every launch operand of the generated launcher is traced to its schema
    argument; the skeleton's empty kernel is "unknown" (nothing to hold against the schema yet, so a fresh
    project lints clean), and once the kernel copies into what the schema writes, the model says so."""
    from opkit.generate.project import generate_project
    from opkit.generate.spec import make_spec

    generate_project(make_spec(name, schema=schema, style="extension"), tmp_path / name)
    asc = tmp_path / name / "csrc" / f"{name}.asc"
    project = load_project([str(tmp_path / name)])
    [effects] = [e for e in device.produce(project) if e.op.endswith(f"::{name}")]
    sig = next(s.signature for f in project.cpp_files for s in f.schema_sites())
    tensors = [a.name for a in sig.arguments if a.is_tensor]
    assert [a.name for a in effects.arguments] == tensors
    assert all(a.written is Knowledge.UNKNOWN and "empty" in a.unknown_because for a in effects.arguments)
    assert effects.unknowns == ()  # every operand traced: tensors to their arguments, outputs to the launcher's locals

    # the user's kernel: copy x into every written operand (the schema's (a!) arguments and the outputs)
    text = asc.read_text()
    kernel_start = text.index("__global__")
    body_start, body_end = text.index("{", kernel_start), text.index("}", kernel_start)
    params = [p.split()[-1] for p in text[text.index("(", kernel_start) + 1 : text.index(")", kernel_start)].split(",") if "GM_ADDR" in p]
    written = [a.name for a in sig.arguments if a.is_mutated] + [p for p in params if p not in tensors]
    body = ["    AscendC::LocalTensor<half> local;"]
    for p in params:
        body.append(f"    AscendC::GlobalTensor<half> {p}Gm;")
        body.append(f"    {p}Gm.SetGlobalBuffer((__gm__ half *){p}, total_length);")
    body += [f"    AscendC::DataCopy(local, {params[0]}Gm, total_length);"] + [f"    AscendC::DataCopy({p}Gm, local, total_length);" for p in written]
    asc.write_text(text[: body_start + 1] + "\n" + "\n".join(body) + "\n" + text[body_end:])
    project = load_project([str(tmp_path / name)])
    [effects] = [e for e in device.produce(project) if e.op.endswith(f"::{name}")]
    assert set(effects.written) == {a.name for a in sig.arguments if a.is_mutated}
    assert all(a.written is Knowledge.NO for a in effects.arguments if not a.written)


def test_a_copy_defined_in_an_inc_fragment_the_kernel_includes_is_read(tmp_path):
    # the kernel's copy out lives in a `.inc` file (never compiled alone, so only read through the #include)
    fragment = "__aicore__ inline void StoreOut(AscendC::GlobalTensor<half> dst, AscendC::LocalTensor<half> src) { AscendC::DataCopy(dst, src, 16); }\n"
    kernel = '#include "copies.inc"\n' + KERNEL.replace("AscendC::DataCopy(cacheGm[0], local, 16);", "StoreOut(cacheGm, local);")
    effects = effects_of(tmp_path, {"kernel/copies.inc": fragment, "kernel/fill.asc": kernel + HOST.replace("SCHEMA", "fill_cache(Tensor x, Tensor cache) -> ()")})
    cache = next(a for a in effects["demo::fill_cache"].arguments if a.name == "cache")
    assert cache.written is Knowledge.YES and cache.evidence[0].path.endswith("copies.inc")
