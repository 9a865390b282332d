"""Hints say what is wrong: a Meta function that returns another structure than the schema's returns is told
so (not to take every parameter); a graph break is located in the user's file, or said to be inside opkit's
call of the op, never "in your code" at one of opkit's own files. Texts are torch 2.13's, measured."""

from __future__ import annotations

import os

import pytest
from torch._dynamo.exc import Unsupported

import opkit
from opkit.verify import diagnose, verify_project
from opkit.verify.report import Stage

OPKIT_HARNESS = os.path.join(os.path.dirname(opkit.__file__), "verify", "stages", "context.py")


@pytest.mark.parametrize(
    "text, returned",
    [
        ("Object of type 'Tensor' is not an instance of 'sequence'", "one value where the schema declares several returns (a tuple)"),
        ("Object of type 'FakeTensor' is not an instance of 'sequence'", "one value where the schema declares several returns (a tuple)"),
        ("Unable to cast (tensor(..., device='meta', size=(2, 3)), tensor(..., device='meta', size=(2, 3))) to Tensor", "a tuple or list where the schema declares one Tensor"),
        ("Unable to cast [tensor(..., device='meta', size=(2, 3))] to Tensor", "a tuple or list where the schema declares one Tensor"),
        ("Expected PythonKernelHolder for fsx::e to return None but it returned something else instead.", "a value where the schema declares no return ('-> ()')"),
        ("Unable to cast Python instance of type <class 'torch.Tensor'> to C++ type '?'", "a value of another type than the schema's return"),
        ("<lambda>() takes 1 positional argument but 2 were given", None),
    ],
)
def test_return_mismatches_are_read_from_torchs_text(text, returned):
    assert diagnose.return_mismatch(text) == returned


def test_meta_call_hints():
    returned = diagnose.meta_call_hint(TypeError("Object of type 'Tensor' is not an instance of 'sequence'"), "my_op_meta", "x", "(Tensor a, Tensor b)")
    assert returned == (
        "it returns one value where the schema declares several returns (a tuple); the schema returns (Tensor a, Tensor b)",
        "make my_op_meta return exactly what the schema returns, (Tensor a, Tensor b): None for '()', one tensor for 'Tensor', a tuple of as many tensors as there are returns",
    )
    signature = diagnose.meta_call_hint(TypeError("my_op_meta() missing 1 required positional argument: 'y'"), "my_op_meta", "x, y", "Tensor")
    assert signature[1] == "make my_op_meta take every schema parameter, defaulted ones included (x, y), in schema order"
    raised = diagnose.meta_call_hint(AttributeError("'FakeTensor' object has no attribute 'foo'"), "my_op_meta", "x", "Tensor")
    assert raised == (
        "AttributeError: 'FakeTensor' object has no attribute 'foo'",
        "fix my_op_meta: call it on tensors of the sample shapes (in eager, with device='meta') to see the line that raises",
    )


def _break(frames: list[tuple[str, int, str]], head: str = "Unsupported: Graph break due to unsupported builtin print") -> Unsupported:
    lines = [head, "", "from user code:"] + [f'   File "{f}", line {n}, in {fn}\n    x' for f, n, fn in frames]
    return Unsupported("\n".join(lines))


def test_a_break_whose_frames_are_all_opkits_is_said_to_be_inside_opkit():
    exc = _break([(OPKIT_HARNESS, 54, "entry"), (OPKIT_HARNESS, 82, "call_op")])
    problem, brk = diagnose.dynamo_failure(exc, sole_op="npu::my_op", schema_params={})
    assert brk.location is None
    assert problem.message.startswith("Dynamo could not trace npu::my_op in one graph: the break is inside opkit's call of the op, not in your code")
    assert "your code at" not in problem.next_action and OPKIT_HARNESS not in problem.message + problem.next_action


def test_a_break_under_opkits_frames_is_located_in_the_users_file():
    exc = _break([(OPKIT_HARNESS, 54, "entry"), ("/home/me/model.py", 12, "forward")])
    problem, brk = diagnose.dynamo_failure(exc, sole_op=None, schema_params={}, user_code=True)
    assert brk.location == "/home/me/model.py:12 in forward"
    assert problem.next_action.startswith("fix the break in your code at /home/me/model.py:12 in forward")


def test_a_meta_that_raises_under_fake_tensors_is_the_metas_problem():
    text = (
        "RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run FX node with fake tensors: "
        "call_function npu.my_op.default(*(FakeTensor(..., size=(8, 16)),), **{}): got RuntimeError('shape mismatch')\n"
        "  Hint: Your code may result in an error\n\nfrom user code:\n"
        f'   File "{OPKIT_HARNESS}", line 82, in call_op\n    return op(*args, **kwargs)\n'
    )
    problem, _ = diagnose.dynamo_failure(Unsupported(text), sole_op="npu::my_op", schema_params={})
    assert (problem.stage, problem.check) == (Stage.META, "meta_raises")
    assert problem.message == "my_op_meta raises when Dynamo calls it with fake tensors: RuntimeError('shape mismatch')"


ONE_FOR_TWO = '''
import torch
from torch.library import Library, impl

m = Library("npu", "IMPL", "Meta")


@impl(m, "my_op")
def my_op_meta(x):
    return torch.empty_like(x)
'''


def test_a_meta_returning_one_value_for_two_returns_is_told_so_end_to_end(make_project):
    project = make_project(name="my_op", schema="my_op(Tensor x) -> (Tensor a, Tensor b)", meta=ONE_FOR_TWO)
    report = verify_project(project)
    assert not report.ok
    said = [(p.check, p.message, p.next_action) for p in report.problems]
    assert said and all("every schema parameter" not in next_action for _, _, next_action in said)
    assert {check for check, _, _ in said} == {"meta_call", "meta_returns"}
    for _, message, next_action in said:
        assert "one value where the schema declares several returns (a tuple); the schema returns (Tensor a, Tensor b)" in message
        assert next_action.startswith("make my_op_meta return exactly what the schema returns, (Tensor a, Tensor b)")
    opkit_dir = os.path.dirname(opkit.__file__)
    assert not any(b.location and b.location.startswith(opkit_dir) for b in report.graph_breaks)
