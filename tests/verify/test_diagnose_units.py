"""opkit.verify.diagnose on exceptions as torch raises them (their texts quoted from torch 2.13's messages):
each maps to one stage, check, message and next action. No torch.compile here."""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.exc import BackendCompilerFailed, Unsupported
from torch._subclasses.fake_tensor import UnsupportedOperatorException

from opkit.verify import diagnose
from opkit.verify.report import GraphBreak, Problem, Stage

_USER_CODE = (
    "Unsupported: Graph break due to unsupported builtin print\n"
    "  Developer debug context: builtin print\n\n"
    "from user code:\n"
    '   File "/tmp/model.py", line 7, in forward\n'
    "    y = self.inner(x)\n"
    '  File "/tmp/model.py", line 12, in inner\n'
    "    print(x)\n"
)


def _raised(exc: BaseException, cause: BaseException | None = None) -> BaseException:
    """``exc`` as raised (``raise exc from cause``), so it carries its cause as torch's would."""
    try:
        raise exc from cause
    except BaseException as caught:  # noqa: BLE001 - the exception is the test's input
        return caught


# -- small readers -------------------------------------------------------------------------------------


def test_user_location_is_the_innermost_frame_under_from_user_code():
    assert diagnose.user_location(_USER_CODE) == "/tmp/model.py:12 in inner"
    # A frame before "from user code:" is torch's own, not the user's.
    assert diagnose.user_location('File "/torch/x.py", line 3, in run\nfrom user code:\n  (nothing)') is None
    assert diagnose.user_location('  File "/tmp/m.py", line 4, in f\n') == "/tmp/m.py:4 in f"
    assert diagnose.user_location("no frames") is None
    # Only the first "from user code:" opens the user's frames.
    twice = 'from user code:\n  File "/tmp/m.py", line 4, in f\nfrom user code:\n  (nothing)'
    assert diagnose.user_location(twice) == "/tmp/m.py:4 in f"


@pytest.mark.parametrize(
    ("text", "want"),
    [("\n\n  first  \nsecond", "first"), ("only", "only"), ("  \n ", ""), ("", "")],
)
def test_first_line(text, want):
    assert diagnose.first_line(text) == want


def test_meta_name():
    assert diagnose.meta_name("npu::npu_add_rms_norm") == "npu_add_rms_norm_meta"
    assert diagnose.meta_name("my_op") == "my_op_meta"
    assert diagnose.meta_name(None) == "the Meta function"


# -- dynamo_failure ------------------------------------------------------------------------------------

_NO_FAKE = (
    "Failed running call_function npu.my_op.default(*(FakeTensor(..., size=(2,)),), **{}):\n"
    "npu.my_op.default: unsupported operator: npu.my_op.default (does not support running with fake tensors)"
)


def test_missing_meta_by_text():
    problem, brk = diagnose.dynamo_failure(Unsupported(_NO_FAKE), sole_op="npu::fallback", schema_params={})
    assert problem == Problem(
        Stage.REGISTRATION,
        "missing_meta",
        "no Meta/fake function is registered for npu::my_op, so Dynamo cannot trace it with fake tensors",
        'register it before torch.compile runs: op-plugin style `m = Library("npu", "IMPL", "Meta")` + '
        '`@impl(m, "my_op")`, custom_op style `@<op>.register_fake`',
        "npu::my_op",
        _NO_FAKE,
    )
    assert brk == GraphBreak(
        "Failed running call_function npu.my_op.default(*(FakeTensor(..., size=(2,)),), **{}):", None
    )


def test_missing_meta_by_cause_falls_back_to_the_sole_op():
    exc = _raised(RuntimeError("Failed running call_function"), UnsupportedOperatorException("npu.x.default"))
    problem, _ = diagnose.dynamo_failure(exc, sole_op="npu::x", schema_params={})
    assert (problem.stage, problem.check, problem.op) == (Stage.REGISTRATION, "missing_meta", "npu::x")
    assert problem.message == "no Meta/fake function is registered for npu::x, so Dynamo cannot trace it with fake tensors"
    assert '`@impl(m, "x")`' in problem.next_action


def test_missing_meta_without_any_op_name():
    exc = _raised(RuntimeError("boom"), UnsupportedOperatorException("?"))
    problem, _ = diagnose.dynamo_failure(exc, sole_op=None, schema_params={})
    assert problem.message == "no Meta/fake function is registered for a custom op, so Dynamo cannot trace it with fake tensors"
    assert '`@impl(m, "my_op")`' in problem.next_action and problem.op is None


def test_user_code_is_not_blamed_on_the_sole_op():
    exc = _raised(RuntimeError("boom"), UnsupportedOperatorException("?"))
    problem, _ = diagnose.dynamo_failure(exc, sole_op="npu::x", schema_params={}, user_code=True)
    assert problem.op is None and "for a custom op," in problem.message


def test_meta_signature_by_text_names_the_schema_parameters():
    text = (
        "Failed running call_function npu.my_op.default(*(FakeTensor(..., size=(2,)),), **{}):\n"
        "TypeError npu.my_op.default: TypeError when making fake tensor call"
    )
    problem, _ = diagnose.dynamo_failure(Unsupported(text), sole_op=None, schema_params={"npu::my_op": "x, scale"})
    assert problem == Problem(
        Stage.REGISTRATION,
        "meta_signature",
        "my_op_meta does not accept the schema's arguments: Failed running call_function "
        "npu.my_op.default(*(FakeTensor(..., size=(2,)),), **{}):",
        "make my_op_meta take exactly the schema's parameters, in schema order (x, scale)",
        "npu::my_op",
        text,
    )


def test_meta_signature_by_cause_says_the_cause():
    cause = TypeError("my_op_meta() takes 1 positional argument but 2 were given")
    exc = _raised(RuntimeError("failed while attempting to run meta for npu.my_op.default"), cause)
    problem, _ = diagnose.dynamo_failure(exc, sole_op="npu::other", schema_params={"npu::other": "a"})
    assert problem.check == "meta_signature" and problem.op == "npu::my_op"
    assert problem.message == (
        "my_op_meta does not accept the schema's arguments: my_op_meta() takes 1 positional argument but 2 were given"
    )
    assert problem.next_action == "make my_op_meta take exactly the schema's parameters, in schema order"


def test_meta_signature_with_no_op_known():
    exc = _raised(RuntimeError("x"), TypeError("bad"))
    problem, _ = diagnose.dynamo_failure(exc, sole_op=None, schema_params={"npu::my_op": "x"})
    assert problem.message == "the Meta function does not accept the schema's arguments: bad"
    # no op known, so no op's parameters to name
    assert problem.next_action == "make the Meta function take exactly the schema's parameters, in schema order"


@pytest.mark.parametrize(
    "text",
    [
        "Data-dependent branching",
        "Could not guard on data dependent expression u0 > 2",
        "Unsupported Tensor.item() call",
        "dynamic shape operator: aten.nonzero.default",
        "set torch._dynamo.config.capture_scalar_outputs = True",
        "Tensor.tolist",
    ],
)
def test_data_dependent(text):
    problem, brk = diagnose.dynamo_failure(Unsupported(text), sole_op="npu::x", schema_params={})
    assert problem == Problem(
        Stage.DYNAMO,
        "data_dependent",
        "a value computed on the device is read back on the host (.item(), .tolist(), or a data-dependent shape), "
        "which breaks the graph and forces a device sync",
        "keep the value a tensor (use torch.where/masking instead of Python control flow on it), or move that "
        "logic outside the compiled region; npugraph_ex needs static shapes",
        None,
        text,
    )
    assert brk == GraphBreak(text, None)


def test_graph_break_in_user_code_is_located():
    problem, brk = diagnose.dynamo_failure(Unsupported(_USER_CODE), sole_op="npu::x", schema_params={}, user_code=True)
    assert problem == Problem(
        Stage.DYNAMO,
        "graph_break",
        "Dynamo could not trace the model in one graph at /tmp/model.py:12 in inner: "
        "Unsupported: Graph break due to unsupported builtin print",
        "fix the break in your code at /tmp/model.py:12 in inner (a print(), a call Dynamo cannot trace, Python on "
        "tensor values); torch._dynamo.explain(fn)(*args) lists every break",
        None,
        _USER_CODE,
    )
    assert brk == GraphBreak(
        "Unsupported: Graph break due to unsupported builtin print (builtin print)", "/tmp/model.py:12 in inner"
    )


def test_graph_break_without_location_blames_the_sole_op():
    problem, brk = diagnose.dynamo_failure(Unsupported("call_method UserDefinedObjectVariable"), sole_op="npu::x", schema_params={})
    assert problem.message == "Dynamo could not trace the model in one graph: call_method UserDefinedObjectVariable"
    assert problem.next_action.startswith("fix the break in your code (a print()")
    assert problem.op == "npu::x" and brk == GraphBreak("call_method UserDefinedObjectVariable", None)


# -- compile_failure -----------------------------------------------------------------------------------

_ALIAS_TEXT = (
    "Found a custom (non-ATen) operator whose output has alias annotations: npu::scale_(Tensor(a!) x) -> Tensor(a!). "
    "We only support functionalizing operators whose outputs do not have alias annotations"
)


def _compile(exc, **kw):
    args = dict(backend="npugraph_ex", reached_aot_graph=True, sees_aot_graph=True, sole_op="npu::x")
    args.update(kw)
    return diagnose.compile_failure(exc, **args)


def test_data_dependent_output_size_in_the_functionalized_graph():
    exc = RuntimeError("Cannot convert symbols to int\nmore")
    problem = _compile(exc, data_dependent=("npu::pick", "aten::nonzero"))
    assert problem == Problem(
        Stage.BACKEND,
        "data_dependent",
        "npu::pick, aten::nonzero has an output size that depends on the data (an unbacked SymInt), and npugraph_ex "
        "cannot compile it: RuntimeError: Cannot convert symbols to int",
        "npugraph_ex captures static shapes: give the op a fixed-size output (pad to a bound and return the "
        "count as a tensor), or keep it out of the compiled region",
        "npu::pick",
        "Cannot convert symbols to int\nmore",
    )
    # Before the functionalized graph, data-dependence is not what failed.
    assert _compile(exc, data_dependent=("npu::pick",), reached_aot_graph=False).check == "functionalization"


def test_the_inner_exception_of_a_backend_failure_is_diagnosed():
    inner = ValueError("range check failed")
    problem = _compile(BackendCompilerFailed("npugraph_ex", inner, None), data_dependent=("npu::pick",))
    assert problem.message.endswith("cannot compile it: ValueError: range check failed")
    assert problem.detail == "range check failed"


def test_returns_mutated_input():
    problem = _compile(RuntimeError(_ALIAS_TEXT), sole_op="npu::other")
    assert problem == Problem(
        Stage.AOT_FUNCTIONALIZATION,
        "returns_mutated_input",
        "npu::scale_ returns an input it mutates (a '-> Tensor(a!)' return); AOTAutograd cannot functionalize a custom "
        "op whose output aliases an input, although Dynamo alone traces it",
        "do not return the mutated argument: declare the op '-> ()' (or return only fresh tensors) and read the "
        "result from the mutated input; the Meta function must then return None or fresh tensors",
        "npu::scale_",
        _ALIAS_TEXT,
    )


def test_returns_mutated_input_names_the_overload_free_op_or_the_sole_op():
    text = "operator whose output has alias annotations: npu::scale_.out(Tensor(a!) x) -> Tensor(a!)"
    assert _compile(RuntimeError(text)).op == "npu::scale_"
    assert _compile(RuntimeError("output has alias annotations somewhere"), sole_op="npu::y").op == "npu::y"


def test_functionalization():
    problem = _compile(RuntimeError("mutations on a view\nin a functionalized graph"), reached_aot_graph=False)
    assert problem == Problem(
        Stage.AOT_FUNCTIONALIZATION,
        "functionalization",
        "AOTAutograd could not functionalize the graph: mutations on a view",
        "check the schema's alias annotations: every mutated tensor is 'Tensor(a!)', no return aliases an input, "
        "and torch.library.opcheck(op, args) passes",
        "npu::x",
        "mutations on a view\nin a functionalized graph",
    )
    # Named in the text, even after the functionalized graph was reached.
    assert _compile(RuntimeError("Functionalization failed")).check == "functionalization"
    # A backend that never shows the functionalized graph cannot have failed before it.
    assert _compile(RuntimeError("boom"), reached_aot_graph=False, sees_aot_graph=False).check == "backend_compile"


def test_known_backend_defect():
    text = "AttributeError: 'CompilerConfig' object has no attribute 'experimental_config'"
    problem = _compile(RuntimeError(text), sole_op="npu::npu_weight_quant_batchmatmul")
    assert problem.stage is Stage.BACKEND and problem.check == "backend_defect"
    assert problem.message == (
        "backend npugraph_ex failed to compile the captured graph: torch-npu 2.13.0's npugraph_ex special-cases any "
        "op named npu.npu_weight_quant_batchmatmul (npu_fx_compiler.py sets config.experimental_config, which its "
        "own CompilerConfig lacks), so every graph holding an op of that name fails to compile, on an NPU too"
    )
    assert problem.next_action == (
        "give the op another name (the special case matches the name only), or wait for a torch-npu that fixes it"
    )
    assert (problem.op, problem.detail) == ("npu::npu_weight_quant_batchmatmul", text)


@pytest.mark.parametrize(
    ("backend", "action"),
    [
        ("npugraph_ex", diagnose.BACKEND_NEXT_ACTION["npugraph_ex"]),
        ("inductor", "the Inductor code generator failed: rerun with TORCH_LOGS=output_code and read the first error"),
        ("eager", "rerun with backend='aot_eager' to confirm the front half passes, then read the backend's error"),
    ],
)
def test_backend_compile(backend, action):
    problem = _compile(RuntimeError("\nlowering failed\nstack"), backend=backend)
    assert problem == Problem(
        Stage.BACKEND,
        "backend_compile",
        f"backend {backend} failed to compile the captured graph: lowering failed",
        action,
        "npu::x",
        "\nlowering failed\nstack",
    )


def test_npugraph_ex_next_action_points_at_torchair_docs():
    assert diagnose.BACKEND_NEXT_ACTION["npugraph_ex"] == (
        "aot_eager passes the front half, so this is the TorchAir/aclgraph layer: read TorchAir "
        "docs/zh/appendix/cases/graph_failed_cases.md and rerun with the npugraph_ex debug logs "
        "(docs/zh/npugraph_ex/dfx/debug_save.md) to find the failing pass"
    )


# -- runtime_failure -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "stage", "said"),
    [
        (None, Stage.CAPTURE, "first"),
        ("capture", Stage.CAPTURE, "capture"),
        ("shape 1", Stage.CAPTURE, "shape 1"),
        ("replay", Stage.REPLAY, "replay"),
        ("shape 2", Stage.REPLAY, "shape 2"),
    ],
)
def test_runtime_failure(call, stage, said):
    exc = RuntimeError("\naclgraph capture failed: sync\nmore")
    assert diagnose.runtime_failure(exc, backend="npugraph_ex", sole_op="npu::x", call=call) == Problem(
        stage,
        "graph_run",
        f"the graph compiled by npugraph_ex failed on the {said} call: RuntimeError: aclgraph capture failed: sync",
        "compare with eager: if eager passes, the kernel sees different inputs in the graph (check Meta strides and "
        "dtypes, and that mutated inputs are declared Tensor(a!))",
        "npu::x",
        "\naclgraph capture failed: sync\nmore",
    )


def test_runtime_failure_default_call_is_the_first():
    problem = diagnose.runtime_failure(torch.cuda.OutOfMemoryError("oom"), backend="aot_eager", sole_op=None)
    assert problem.stage is Stage.CAPTURE and problem.message.endswith("on the first call: OutOfMemoryError: oom")
