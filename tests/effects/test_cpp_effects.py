"""C++ host kernels read into OpEffects, one small kernel per pattern of kernel-effects.md, each with its
correct twin: what the kernel writes, returns and allocates, where it syncs or runs aclop, and what stays
unknown (with the reason) rather than guessed. The K2xx rules' findings on each pair close each test."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from opkit.effects.build import Sources, compute, merge
from opkit.effects.model import ArgumentEffect, Evidence, KernelSite, Knowledge, OpEffects, ReturnEffect
from opkit.lint import Selection, lint
from opkit.lint.engine import load_project

META_VOID = "void my_op_meta({params}) {{}}"


def project(tmp_path: Path, kernel: str, schema: str, *, params: str, extra: dict[str, str] | None = None, meta: str | None = None) -> Path:
    """``my_ops.cpp``: ``kernel`` (a function ``my_op``), its def ``schema`` and two impls; ``extra`` files beside it."""
    meta = meta or META_VOID.format(params=params)
    (tmp_path / "my_ops.cpp").write_text(
        "\n".join((
            kernel, meta,
            f'TORCH_LIBRARY(my_ops, m) {{ m.def("{schema}"); }}',
            'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_op", TORCH_FN(my_op)); }',
            'TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_op", &my_op_meta); }',
        )) + "\n"
    )  # fmt: skip
    for name, text in (extra or {}).items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def effects_of(root: Path) -> OpEffects:
    found = compute(load_project([str(root)]))
    return found["my_ops::my_op"]


def written(root: Path) -> dict[str, str]:
    return {a.name: a.written.value for a in effects_of(root).arguments}


def codes(root: Path) -> list[str]:
    return sorted(f.code for f in lint([str(root)], use_cache=False, selection=Selection(("K2",))).findings)


def kernel(body: str, params: str = "const at::Tensor &x, const at::Tensor &cache", returns: str = "void") -> str:
    lines = "\n".join(f"    {line}" for line in body.strip().splitlines())
    return f"{returns} my_op({params})\n{{\n{lines}\n}}"


PARAMS = "const at::Tensor &x, const at::Tensor &cache"
HEADER = (
    "aclnnStatus aclnnMyCacheUpdateGetWorkspaceSize(const aclTensor *x, aclTensor *cacheRef,\n"
    "                                               uint64_t *workspaceSize, aclOpExecutor **executor);\n"
)


# -- aclnn calls mapped to the header's outputs ------------------------------------------------------

@pytest.mark.parametrize("call", ["EXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache);", "EXEC_NPU_NO_FORMAT_CHECK_CMD(aclnnMyCacheUpdate, x, cache);"])
def test_an_aclnn_output_in_the_header_is_a_write(tmp_path, call):
    root = project(tmp_path, kernel(call), "my_op(Tensor x, Tensor cache) -> ()", params=PARAMS, extra={"op_api/aclnn_my_cache_update.h": HEADER})
    effects = effects_of(root)
    assert written(root) == {"x": "no", "cache": "yes"}
    evidence = effects.argument("cache").evidence[0]
    assert evidence.line == 3 and "cacheRef" in evidence.why and "aclnn_my_cache_update.h:1" in evidence.why
    findings = lint([str(root)], use_cache=False, selection=Selection(("K2",))).findings
    assert [(f.code, f.line, f.column) for f in findings] == [("K201", 6, 51)]
    assert "torch.compile removes the call" in findings[0].message and "Tensor(a!) cache" in findings[0].hint


def test_the_annotated_twin_gets_no_finding(tmp_path):
    root = project(tmp_path, kernel("EXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache);"), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS, extra={"op_api/aclnn_my_cache_update.h": HEADER})
    assert codes(root) == []


def test_a_direct_get_workspace_size_call_maps_its_operands(tmp_path):
    body = """
uint64_t workspace = 0;
aclOpExecutor *executor = nullptr;
aclnnMyCacheUpdateGetWorkspaceSize(x, cache, &workspace, &executor);
"""
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS, extra={"aclnn_my_cache_update.h": HEADER})
    assert written(root) == {"x": "no", "cache": "yes"} and codes(root) == []


def test_dfx_out_in_the_definition_decides_the_outputs(tmp_path):
    definition = (
        "aclnnStatus aclnnMyCacheUpdateGetWorkspaceSize(const aclTensor *x, const aclTensor *cacheRef, uint64_t *workspaceSize, aclOpExecutor **executor)\n"
        "{\n    L2_DFX_PHASE_1(aclnnMyCacheUpdate, DFX_IN(x, cacheRef), DFX_OUT(cacheRef));\n    return ACLNN_SUCCESS;\n}\n"
    )
    root = project(tmp_path, kernel("EXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache);"), "my_op(Tensor x, Tensor cache) -> ()", params=PARAMS, extra={"aclnn_my_cache_update.cpp": definition})
    assert written(root) == {"x": "no", "cache": "yes"}
    assert "DFX_OUT" in effects_of(root).argument("cache").evidence[0].why


WRAP = """
static aclTensor *Describe(const at::Tensor &t)
{
    std::vector<int64_t> dims(t.sizes().begin(), t.sizes().end());
    return aclCreateTensor(dims.data(), dims.size(), ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, dims.data(), dims.size(), t.data_ptr());
}
"""


@pytest.mark.parametrize(
    "body",
    [
        "auto xh = Describe(x);\nauto ch = Describe(cache);\naclnnMyCacheUpdateGetWorkspaceSize(xh, ch, &ws, &exec);",
        # a smart pointer around the handle, read through .get(); aclCreateTensor called in place
        "std::unique_ptr<aclTensor> xh(Describe(x));\nauto ch = aclCreateTensor(d, 2, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, d, 2, cache.data_ptr());\n"
        "aclnnMyCacheUpdateGetWorkspaceSize(xh.get(), ch, &ws, &exec);",
    ],
)
@pytest.mark.parametrize("schema, fires", [("my_op(Tensor x, Tensor cache) -> ()", ["K201"]), ("my_op(Tensor x, Tensor(a!) cache) -> ()", [])])
def test_an_acl_tensor_made_over_an_argument_is_that_argument_to_the_aclnn_call(tmp_path, body, schema, fires):
    body = "uint64_t ws = 0;\naclOpExecutor *exec = nullptr;\n" + body
    root = project(tmp_path, WRAP + kernel(body), schema, params=PARAMS, extra={"aclnn_my_cache_update.h": HEADER})
    assert written(root) == {"x": "no", "cache": "yes"}
    assert "cacheRef" in effects_of(root).argument("cache").evidence[0].why
    assert codes(root) == fires


def test_a_helper_returning_no_acl_tensor_over_its_parameter_is_not_a_handle(tmp_path):
    helper = "static aclTensor *Describe(const at::Tensor &t)\n{\n    return Lookup(t);\n}\n"
    body = "uint64_t ws = 0;\naclOpExecutor *exec = nullptr;\nauto xh = Describe(x);\nauto ch = Describe(cache);\naclnnMyCacheUpdateGetWorkspaceSize(xh, ch, &ws, &exec);"
    root = project(tmp_path, helper + kernel(body), "my_op(Tensor x, Tensor cache) -> ()", params=PARAMS, extra={"aclnn_my_cache_update.h": HEADER})
    assert written(root) == {"x": "unknown", "cache": "unknown"} and codes(root) == []


def test_a_header_whose_tensors_are_all_const_tells_nothing(tmp_path):
    header = HEADER.replace("aclTensor *cacheRef", "const aclTensor *cacheRef")
    root = project(tmp_path, kernel("EXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache);"), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS, extra={"aclnn.h": header})
    assert written(root) == {"x": "unknown", "cache": "unknown"}
    assert "every tensor const" in effects_of(root).argument("cache").unknown_because
    assert codes(root) == []  # K202 never fires on unknown


# -- aclnn calls mapped to the OpDef when no header is read ------------------------------------------

OPDEF = """#include "register/op_def_registry.h"
namespace ops {
class MyCacheUpdate : public OpDef {
public:
    explicit MyCacheUpdate(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("cache").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("cache").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Attr("scale").AttrType(OPTIONAL).Float(1.0);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(MyCacheUpdate);
}
"""

# The same op declaring no output: an op that writes some of its inputs, which the host code does not say.
OPDEF_WITHOUT_OUTPUTS = OPDEF.replace('        this->Output("cache").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});\n', "").replace(
    '        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});\n', "")


def test_an_opdef_output_named_like_an_input_is_written_in_place(tmp_path):
    body = "at::Tensor y = at::empty_like(x);\nEXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache, scale, y);\nreturn y;"
    params = "const at::Tensor &x, const at::Tensor &cache, double scale"
    meta = "at::Tensor my_op_meta(const at::Tensor &x, const at::Tensor &cache, double scale) { return at::empty_like(x); }"
    root = project(tmp_path, kernel(body, params, "at::Tensor"), "my_op(Tensor x, Tensor cache, float scale) -> Tensor", params=params, meta=meta, extra={"op_host/my_cache_update_def.cpp": OPDEF})
    effects = effects_of(root)
    assert written(root) == {"x": "no", "cache": "yes"}
    assert "OpDef MyCacheUpdate" in effects.argument("cache").evidence[0].why
    assert effects.returns[0].known and effects.returns[0].allocation.size == "like:x"
    assert codes(root) == ["K201"]
    (root / "my_ops.cpp").write_text((root / "my_ops.cpp").read_text().replace("Tensor cache, float", "Tensor(a!) cache, float"))
    assert codes(root) == []


def test_an_opdef_without_outputs_leaves_its_inputs_unknown(tmp_path):
    opdef = OPDEF_WITHOUT_OUTPUTS
    params = "const at::Tensor &x, const at::Tensor &cache, double scale"
    root = project(tmp_path, kernel("EXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache, scale);", params), "my_op(Tensor x, Tensor cache, float scale) -> ()", params=params, extra={"my_cache_update_def.cpp": opdef})
    assert written(root) == {"x": "unknown", "cache": "unknown"}
    assert "declares no output" in effects_of(root).argument("cache").unknown_because
    assert codes(root) == []


# The OpDef's own device kernel (msOpGen's op_kernel/<snake>.cpp: inputs, outputs, workspace, tiling) shows
# which inputs it writes: an OpDef without outputs is an op that writes some of them.
OPDEF_KERNEL = """#include "kernel_operator.h"
class CacheUpdate {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR cache)
    {
        xGm.SetGlobalBuffer((__gm__ half *)x);
        cacheGm.SetGlobalBuffer((__gm__ half *)cache);
    }
    __aicore__ inline void Process()
    {
        AscendC::DataCopy(local, xGm[0], 16);
        AscendC::DataCopy(cacheGm[0], local, 16);
    }
    AscendC::GlobalTensor<half> xGm, cacheGm;
    AscendC::LocalTensor<half> local;
};
extern "C" __global__ __aicore__ void my_cache_update(GM_ADDR x, GM_ADDR cache, GM_ADDR workspace, GM_ADDR tiling)
{
    CacheUpdate op;
    op.Init(x, cache);
    op.Process();
}
"""


@pytest.mark.parametrize("schema, fires", [("my_op(Tensor x, Tensor cache, float scale) -> ()", True), ("my_op(Tensor x, Tensor(a!) cache, float scale) -> ()", False)])
def test_an_opdef_without_outputs_is_read_through_its_device_kernel(tmp_path, schema, fires):
    opdef = OPDEF_WITHOUT_OUTPUTS
    params = "const at::Tensor &x, const at::Tensor &cache, double scale"
    extra = {"my_cache_update/op_host/my_cache_update_def.cpp": opdef, "my_cache_update/op_kernel/my_cache_update.cpp": OPDEF_KERNEL}
    root = project(tmp_path, kernel("EXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache, scale);", params), schema, params=params, extra=extra)
    assert written(root) == {"x": "no", "cache": "yes"}
    [evidence] = effects_of(root).argument("cache").evidence
    assert evidence.path.endswith("my_cache_update.cpp") and "DataCopy(cacheGm[0], ...)" in evidence.why and "passes cache as its input cache" in evidence.why
    assert codes(root) == (["K201"] if fires else [])


def test_an_opdef_kernel_in_another_layout_leaves_the_inputs_unknown(tmp_path):
    opdef = OPDEF_WITHOUT_OUTPUTS
    params = "const at::Tensor &x, const at::Tensor &cache, double scale"
    no_workspace = OPDEF_KERNEL.replace(", GM_ADDR workspace, GM_ADDR tiling)", ")")
    extra = {"op_host/my_cache_update_def.cpp": opdef, "op_kernel/my_cache_update.cpp": no_workspace}
    root = project(tmp_path, kernel("EXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache, scale);", params), "my_op(Tensor x, Tensor cache, float scale) -> ()", params=params, extra=extra)
    assert written(root) == {"x": "unknown", "cache": "unknown"}
    assert "takes 2 global-memory parameters" in effects_of(root).argument("cache").unknown_because


def test_a_header_whose_tensors_are_all_const_gives_way_to_the_opdef(tmp_path):
    # vllm-ascend's hand-written aclnn definitions take every tensor const and forward to a generated one
    header = (
        "aclnnStatus aclnnMyCacheUpdateGetWorkspaceSize(const aclTensor *x, const aclTensor *cache, double scale,\n"
        "                                               const aclTensor *cacheOut, const aclTensor *y, uint64_t *workspaceSize, aclOpExecutor **executor);\n"
    )
    body = "at::Tensor y = at::empty_like(x);\nEXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache, scale, cache, y);\nreturn y;"
    params = "const at::Tensor &x, const at::Tensor &cache, double scale"
    meta = "at::Tensor my_op_meta(const at::Tensor &x, const at::Tensor &cache, double scale) { return at::empty_like(x); }"
    opdef = OPDEF.replace('this->Output("cache")', 'this->Output("cacheOut")')
    extra = {"aclnn.h": header, "op_host/my_cache_update_def.cpp": opdef}
    root = project(tmp_path, kernel(body, params, "at::Tensor"), "my_op(Tensor x, Tensor cache, float scale) -> Tensor", params=params, meta=meta, extra=extra)
    assert written(root) == {"x": "no", "cache": "yes"}
    assert "OpDef MyCacheUpdate" in effects_of(root).argument("cache").evidence[0].why
    assert codes(root) == ["K201"]


def test_an_aclnn_call_with_neither_header_nor_opdef_is_unknown(tmp_path):
    root = project(tmp_path, kernel("EXEC_NPU_CMD(aclnnMyCacheUpdate, x, cache);"), "my_op(Tensor x, Tensor cache) -> ()", params=PARAMS)
    assert written(root) == {"x": "unknown", "cache": "unknown"}
    assert "no aclnn header" in effects_of(root).argument("x").unknown_because
    assert codes(root) == []


# -- OpCommand ---------------------------------------------------------------------------------------

def test_opcommand_output_is_a_write_and_run_is_aclop(tmp_path):
    body = 'at_npu::native::OpCommand cmd;\ncmd.Name("MyCacheUpdate").Input(x).Output(cache).Run();'
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS)
    effects = effects_of(root)
    assert written(root) == {"x": "no", "cache": "yes"}
    assert [e.line for e in effects.aclop] == [4]
    assert "cmd.Output(cache): an output of the OpCommand" in effects.argument("cache").evidence[0].why
    assert codes(root) == ["K208"]


def test_another_builder_of_inputs_and_outputs_is_named_as_what_it_is(tmp_path):
    # op-plugin's ATB kernels build their call with a ParamSetter, not an OpCommand
    body = "ParamSetter setter;\nsetter.Input(x, true).Output(cache);\nRunAtbCmd(op, setter, \"MyCacheUpdate\");"
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor cache) -> ()", params=PARAMS)
    evidence = effects_of(root).argument("cache").evidence[0]
    assert "setter.Output(cache): an output of the command it builds" in evidence.why and "OpCommand" not in evidence.why


def test_an_opcommand_with_a_custom_handler_is_not_aclop(tmp_path):
    body = """
void *gm = cache.data_ptr();
at_npu::native::OpCommand cmd;
cmd.Name("my_op");
cmd.SetCustomHandler([gm]() -> int { return launch_my_kernel(gm); });
cmd.Run();
"""
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS)
    assert effects_of(root).aclop == ()
    assert written(root) == {"x": "no", "cache": "unknown"}  # what the handler's launch does is the device's to say
    assert codes(root) == []


# -- tensor methods and ATen calls -------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    "cache.copy_(x);",
    "auto flat = cache.view({-1});\nflat.zero_();",
    "cache.select(0, 0).fill_(1);",
    "at::add_out(cache, cache, x);",
    "at::Tensor c = cache;\nc = c.squeeze(0);\nc.index_put_({x}, x);",
])  # fmt: skip
def test_in_place_methods_and_aten_out_calls_write_through_views(tmp_path, body):
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor cache) -> ()", params=PARAMS)
    assert written(root)["cache"] == "yes"
    assert codes(root) == ["K201"]


def test_a_method_on_a_copy_writes_the_copy(tmp_path):
    root = project(tmp_path, kernel("at::Tensor c = cache.clone();\nc.zero_();\nTORCH_CHECK(c.dim() == 1, \"1-D\");"), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS)
    assert written(root) == {"x": "no", "cache": "no"}
    assert codes(root) == ["K202"]


def test_a_non_const_reference_is_no_write(tmp_path):
    params = "at::Tensor &x, at::Tensor &cache"
    root = project(tmp_path, kernel("cache.copy_(x);", params), "my_op(Tensor(a!) x, Tensor(b!) cache) -> ()", params=params)
    assert written(root) == {"x": "no", "cache": "yes"}
    assert [f.message.split(":")[0] for f in lint([str(root)], use_cache=False, selection=Selection(("K2",))).findings] == ["the schema marks 'x' written (`Tensor(a!) x`), but kernel my_op never writes it"]


@pytest.mark.parametrize("schema, fires", [("my_op(Tensor! x, Tensor! cache) -> ()", "K202"), ("my_op(Tensor x, Tensor! cache) -> ()", None)])
def test_a_runtime_copy_writes_its_destination_and_reads_its_source(tmp_path, schema, fires):
    # vllm-ascend's swap_blocks shape: block copies between two tensors' memory with CANN's runtime
    body = """
char *src = static_cast<char *>(x.data_ptr());
char *dst = static_cast<char *>(cache.data_ptr());
aclrtMemcpyAsync(dst + 64, 64, src + 128, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, stream);
"""
    root = project(tmp_path, kernel(body), schema, params=PARAMS)
    assert written(root) == {"x": "no", "cache": "yes"}
    assert "aclrtMemcpyAsync's destination dst+64 points into it" in effects_of(root).argument("cache").evidence[0].why
    assert codes(root) == ([fires] if fires else [])


HANDLE_HELPER = """
using TensorHandle = std::unique_ptr<aclTensor, HandleDeleter>;
TensorHandle Handle(const at::Tensor &t)
{
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    return TensorHandle(aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, shape.data(), shape.size(), const_cast<void *>(t.data_ptr())));
}
"""


@pytest.mark.parametrize("schema, fires", [("my_op(Tensor x, Tensor cache) -> ()", ["K201"]), ("my_op(Tensor x, Tensor(a!) cache) -> ()", [])])
def test_acl_tensor_handles_of_the_arguments_are_their_memory(tmp_path, schema, fires):
    # ops-nn's rotate_quant binding: aclTensor handles made by a helper, passed to the aclnn call by .get()
    body = """
auto xh = Handle(x);
auto ch = Handle(cache);
uint64_t ws = 0;
aclOpExecutor *exec = nullptr;
aclnnMyCacheUpdateGetWorkspaceSize(xh.get(), ch.get(), &ws, &exec);
"""
    root = project(tmp_path, HANDLE_HELPER + kernel(body), schema, params=PARAMS, extra={"aclnn.h": HEADER})
    assert written(root) == {"x": "no", "cache": "yes"}
    assert "aclnnMyCacheUpdate's output cacheRef" in effects_of(root).argument("cache").evidence[0].why
    assert codes(root) == fires


def test_a_tensor_used_where_opkit_does_not_read_is_unknown(tmp_path):
    body = "MyParams params{x, cache};\nlaunch_with(params);"
    root = project(tmp_path, kernel(body), "my_op(Tensor(a!) x, Tensor(b!) cache) -> ()", params=PARAMS)
    assert written(root) == {"x": "unknown", "cache": "unknown"}
    assert "in a way opkit does not read" in effects_of(root).argument("x").unknown_because
    assert codes(root) == []


def test_a_pointer_handed_to_a_device_launch_is_unknown(tmp_path):
    body = "auto stream = c10_npu::getCurrentNPUStream();\nauto gm = (GM_ADDR)cache.data_ptr();\nmy_kernel<<<8, nullptr, stream>>>(gm);"
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS)
    assert written(root) == {"x": "no", "cache": "unknown"}
    assert "device kernel my_kernel" in effects_of(root).argument("cache").unknown_because


# -- helpers and registered ops ----------------------------------------------------------------------

HELPER = "static void refresh(const at::Tensor &dst, const at::Tensor &src)\n{\n    dst.copy_(src);\n}\n"


def test_a_helper_in_the_files_read_is_followed(tmp_path):
    root = project(tmp_path, HELPER + kernel("refresh(cache, x);"), "my_op(Tensor x, Tensor cache) -> ()", params=PARAMS)
    effects = effects_of(root)
    assert written(root) == {"x": "no", "cache": "yes"}
    assert "in refresh, called at" in effects.argument("cache").evidence[0].why
    assert codes(root) == ["K201"]


def test_a_helper_elsewhere_in_the_tree_is_followed_and_one_missing_is_unknown(tmp_path):
    root = project(tmp_path, kernel("refresh(cache, x);"), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS, extra={"helpers/refresh.cpp": HELPER})
    assert written(root) == {"x": "no", "cache": "yes"} and codes(root) == []
    (root / "helpers" / "refresh.cpp").unlink()
    assert written(root) == {"x": "unknown", "cache": "unknown"}
    assert "not defined in the C++ files read" in effects_of(root).argument("cache").unknown_because


def test_a_call_of_a_registered_op_writes_its_annotated_positions(tmp_path):
    other = 'TORCH_LIBRARY_FRAGMENT(my_ops, m) { m.def("my_fill(Tensor(a!) dst, Tensor src) -> ()"); }\n'
    root = project(tmp_path, "void my_fill(const at::Tensor &dst, const at::Tensor &src);\n" + kernel("my_fill(cache, x);"), "my_op(Tensor x, Tensor cache) -> ()", params=PARAMS, extra={"fill.cpp": other})
    assert written(root) == {"x": "no", "cache": "yes"}
    assert "(a!)" in effects_of(root).argument("cache").evidence[0].why


# -- returns and allocations -------------------------------------------------------------------------

RETURNING = "const at::Tensor &x, const at::Tensor &y"


@pytest.mark.parametrize("result, returns, fires", [
    ("return y;", "at::Tensor", True),
    ("at::Tensor out = y;\nreturn out;", "at::Tensor", True),
    ("return y.clone();", "at::Tensor", False),
    ("at::Tensor out = at::empty_like(y);\nout.copy_(y);\nreturn out;", "at::Tensor", False),
])  # fmt: skip
def test_a_returned_input_is_an_alias(tmp_path, result, returns, fires):
    meta = "at::Tensor my_op_meta(const at::Tensor &x, const at::Tensor &y) { return at::empty_like(y); }"
    root = project(tmp_path, kernel(result, RETURNING, returns), "my_op(Tensor x, Tensor y) -> Tensor", params=RETURNING, meta=meta)
    effects = effects_of(root)
    assert effects.returns[0].known and (effects.returns[0].aliases == "y") is fires
    assert codes(root) == (["K203"] if fires else [])


def test_a_tuple_of_references_returns_its_inputs(tmp_path):
    params = "const at::Tensor &x, at::Tensor &a, at::Tensor &b"
    meta = "std::tuple<at::Tensor, at::Tensor> my_op_meta(const at::Tensor &x, at::Tensor &a, at::Tensor &b) { return {at::empty_like(a), at::empty_like(b)}; }"
    body = "a.copy_(x);\nb.copy_(x);\nreturn std::forward_as_tuple(a, b);"
    root = project(tmp_path, kernel(body, params, "std::tuple<at::Tensor &, at::Tensor &>"), "my_op(Tensor x, Tensor(a!) a, Tensor(b!) b) -> (Tensor, Tensor)", params=params, meta=meta)
    effects = effects_of(root)
    assert [(r.aliases, r.known) for r in effects.returns] == [("a", True), ("b", True)]
    assert "a reference in the return type" in effects.returns[0].evidence[0].why
    findings = lint([str(root)], use_cache=False, selection=Selection(("K2",))).findings
    assert [f.code for f in findings] == ["K203"] and "'a' as output 0, 'b' as output 1" in findings[0].message


def test_an_allocation_records_dtype_size_and_device(tmp_path):
    params = "const at::Tensor &x"
    body = "at::Tensor out = at::empty({x.size(0)}, x.options().dtype(at::kChar));\nEXEC_NPU_CMD(aclnnMyQuant, x, out);\nreturn out;"
    meta = "at::Tensor my_op_meta(const at::Tensor &x) { return at::empty_like(x); }"
    root = project(tmp_path, kernel(body, params, "at::Tensor"), "my_op(Tensor x) -> Tensor", params=params, meta=meta)
    allocation = effects_of(root).returns[0].allocation
    assert (allocation.dtype, allocation.size, allocation.device) == ("int8", "{x.size(0)}", "like:x")
    assert allocation.evidence.line == 3


# -- host syncs, K209 and the launch rules -----------------------------------------------------------

def test_a_host_sync_in_a_helper_is_k209_and_its_twin_is_silent(tmp_path):
    helper = "static int64_t rows(const at::Tensor &t)\n{\n    return t.cpu().size(0);\n}\n"
    root = project(tmp_path, helper + kernel("int64_t n = rows(x);\ncache.narrow(0, 0, n).zero_();"), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS)
    assert [e.line for e in effects_of(root).host_syncs] == [3]
    assert codes(root) == ["K209"]
    (root / "my_ops.cpp").write_text((root / "my_ops.cpp").read_text().replace("t.cpu().size(0)", "t.size(0)"))
    assert codes(root) == []


def test_a_wait_the_launch_rules_report_is_not_reported_again(tmp_path):
    body = "float s = x.item<float>();\nauto stream = c10_npu::getCurrentNPUStream();\nmy_kernel<<<8, nullptr, stream>>>(x.data_ptr(), cache.data_ptr(), s);"
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS)
    assert effects_of(root).host_syncs
    found = sorted(f.code for f in lint([str(root)], use_cache=False).findings if f.code.startswith("K"))
    assert "K101" in found and "K209" not in found


# -- void ops and has_side_effect --------------------------------------------------------------------

def test_a_void_op_writing_nothing_is_k207_unless_declared_a_side_effect(tmp_path):
    params = "const at::Tensor &x"
    root = project(tmp_path, kernel('TORCH_CHECK(x.dim() == 1, "1-D");\nprint_tensor_summary(x.size(0));', params), "my_op(Tensor x) -> ()", params=params)
    # print_tensor_summary gets a size, not the tensor: x is known unwritten
    assert written(root) == {"x": "no"} and codes(root) == ["K207"]
    (root / "ops.py").write_text("import torch\nimport torch.fx\n\ntorch.fx.node.has_side_effect(torch.ops.my_ops.my_op.default)\n")
    assert codes(root) == []


# -- the merge of several kernels (or producers) ------------------------------------------------------

def test_merge_writes_if_any_writes_and_is_unknown_if_any_cannot_tell():
    where = Evidence("k.cpp", 3, 5, "cache.copy_(x)")
    a = OpEffects("ns::op", (), (ArgumentEffect("x", Knowledge.NO), ArgumentEffect("cache", Knowledge.YES, (where,))), (ReturnEffect(0),))
    b = OpEffects("ns::op", (), (ArgumentEffect("x", Knowledge.UNKNOWN, unknown_because="passed to f"), ArgumentEffect("cache", Knowledge.NO)), (ReturnEffect(0, aliases="x", known=True),))
    c = OpEffects("ns::op", (), (ArgumentEffect("x", Knowledge.NO),))
    merged = merge([a, b])
    assert [(e.name, e.written) for e in merged.arguments] == [("x", Knowledge.UNKNOWN), ("cache", Knowledge.YES)]
    assert merged.argument("cache").evidence == (where,) and merged.argument("x").unknown_because == "passed to f"
    assert merged.returns[0].aliases == "x"
    assert merge([a, c]).argument("cache").written is Knowledge.YES  # one kernel's write is a write
    assert merge([c, b]).argument("cache").written is Knowledge.NO  # c has no say on it, b read it
    assert merge([c, OpEffects("ns::op", (), (ArgumentEffect("x", Knowledge.NO),))]).argument("x").written is Knowledge.NO


def test_an_unknown_left_to_the_device_producer_is_settled_by_its_answer():
    launch = ArgumentEffect("x", Knowledge.UNKNOWN, unknown_because="x is handed to the device kernel k<<<>>>", settled_by="device")
    host = OpEffects("ns::op", (KernelSite("op", "c++", "PrivateUse1", "op.cpp", 3),), (launch, ArgumentEffect("y", Knowledge.UNKNOWN, unknown_because="passed to f")))
    device = OpEffects("ns::op", (KernelSite("k", "device", "", "k.asc", 9),), (ArgumentEffect("x", Knowledge.NO), ArgumentEffect("y", Knowledge.NO)))
    merged = merge([host, device])
    assert merged.argument("x").written is Knowledge.NO  # the device kernel was read: it never writes x
    assert merged.argument("y").written is Knowledge.UNKNOWN  # f was not followed: the device cannot settle that
    assert merge([host]).argument("x").settled_by == "device"


def test_a_launch_unknown_says_the_device_producer_settles_it(tmp_path):
    body = "auto stream = c10_npu::getCurrentNPUStream();\nmy_kernel<<<8, nullptr, stream>>>(x.data_ptr(), cache.data_ptr());\nother(cache);"
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS)
    # the C++ producer's own answer: merged, the device producer's (here: my_kernel's code is not in the tree) replaces it
    effects = compute(load_project([str(root)]), producers=("opkit.effects.cpp",))["my_ops::my_op"]
    assert effects.argument("x").settled_by == "device"
    assert effects.argument("cache").settled_by == ""  # also passed to other(): the device cannot settle it alone


def test_a_pointer_named_in_a_launch_is_left_to_the_device_producer(tmp_path):
    """A launch's pointer argument is a use the C++ reader understands (the device producer reads the rest), so
    it does not spoil the unknown the device producer settles (vllm-ascend's bgmv launchers)."""
    body = "void *xp = x.data_ptr();\nauto stream = c10_npu::getCurrentNPUStream();\nmy_kernel<<<8, nullptr, stream>>>(xp, cache.data_ptr());"
    root = project(tmp_path, kernel(body), "my_op(Tensor x, Tensor(a!) cache) -> ()", params=PARAMS)
    effects = compute(load_project([str(root)]), producers=("opkit.effects.cpp",))["my_ops::my_op"]
    assert effects.argument("x").written is Knowledge.UNKNOWN and effects.argument("x").settled_by == "device"


def test_sources_without_cpp_produce_nothing():
    assert compute(Sources()) == {}


# -- the body reader stays linear --------------------------------------------------------------------

def test_a_kernel_body_reads_in_time_linear_in_its_length(tmp_path):
    from opkit.formats.cpp_bodies import read_body_in

    def body(statements: int) -> tuple[str, int, int]:
        text = "void f(at::Tensor &x)\n{\n" + "".join(f"    auto v{i} = x.view({{-1}});\n    v{i}.add_(x, 1);\n" for i in range(statements)) + "}\n"
        return text, text.index("{"), text.rindex("}")

    def cpu(args) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            read_body_in(*args)
            best = min(best, time.process_time() - start)
        return max(best, 1e-4)

    small, large = body(200), body(4000)
    assert len(read_body_in(*large).facts) == 4000 * 3  # the assignment, view, add_
    ratio = cpu(large) / cpu(small)
    assert ratio < 60, f"20x the statements cost {ratio:.0f}x"


def test_a_conversion_may_be_the_tensor_itself_so_it_is_no_return_alias_and_no_proof_of_no_write(tmp_path):
    params = "const at::Tensor &x, const at::Tensor &idx"
    meta = "at::Tensor my_op_meta(const at::Tensor &x, const at::Tensor &idx) { return at::empty_like(idx); }"
    body = "at::Tensor idx64 = idx.to(at::kLong);\nauto gm = idx64.data_ptr();\nlaunch_my_kernel(gm);\nreturn idx.to(at::kLong);"
    root = project(tmp_path, kernel(body, params, "at::Tensor"), "my_op(Tensor x, Tensor(a!) idx) -> Tensor", params=params, meta=meta)
    effects = effects_of(root)
    assert written(root) == {"x": "no", "idx": "unknown"}  # .to() returns idx itself when it is int64 already
    assert not effects.returns[0].known
    assert codes(root) == []
