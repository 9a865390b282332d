"""Every command a refusal suggests is one opkit then accepts: each refusal case is run through `opkit new`,
the command in its message is run as printed, and it must generate the project (exit 0).

The table covers each kind of suggestion the refusals module prints: a corrected schema (returned mutated
input, .out overload, view, Generator/Device/Layout/MemoryFormat, non-tensor returns, no tensor input,
Dimname), ``--style library`` for what only torch.library's dialect parses, and custom_op's limits.
"""

from __future__ import annotations

import shlex

import pytest

BUILTIN = ("--no-verify", "--msopgen", "builtin")

# (name, style, schema, whether a command is suggested)
CASES = [
    ("my_add_", "op-plugin", "my_add_(Tensor(a!) x, Tensor y) -> Tensor(a!)", True),  # issue 19's case
    ("my_add_", "library", "my_add_(Tensor(a!) x, Tensor y) -> Tensor(a!)", True),
    ("my_add_", "custom-op", "my_add_(Tensor(a!) x, Tensor y) -> Tensor(a!)", True),
    ("npu_silu_", "op-plugin", "npu_silu_(Tensor(a!) self) -> Tensor(a!)", True),
    ("npu_broadcast", "op-plugin", "npu_broadcast.out(Tensor self, int[] size, *, Tensor(a!) out) -> Tensor(a!)", True),
    ("npu_two", "op-plugin", "npu_two.out(Tensor self, *, Tensor(a!) a, Tensor(b!) b) -> (Tensor(a!), Tensor(b!))", True),
    ("my_view", "op-plugin", "my_view(Tensor(a) self) -> Tensor(a)", True),
    ("my_view", "op-plugin", "my_view.ov(Tensor(a) self, Generator? g=None) -> Tensor(a)", True),
    ("my_op", "op-plugin", "my_op(Tensor x, Generator? g=None, Device? d=None, Layout? l=None, MemoryFormat? m=None) -> Tensor", True),
    ("my_op", "op-plugin", "my_op(Tensor x) -> (Tensor, int)", True),
    ("my_op", "op-plugin", "my_op(Tensor x) -> (bool, float, SymInt, Scalar)", True),
    ("my_op", "library", "my_op(Tensor x) -> (Tensor[], int)", True),
    ("my_op", "library", "my_op(Tensor x) -> (Tensor, ScalarType)", True),
    ("my_op", "library", "my_op(Tensor(a!) x, Tensor(b) y) -> (Tensor(a!), Tensor(b))", True),
    ("npu_dropout_gen_mask", "op-plugin", "npu_dropout_gen_mask(int[] size, float p) -> Tensor", True),
    ("my_fac", "op-plugin", "my_fac(int[] shape, int[] size) -> Tensor", True),
    ("my_fac", "op-plugin", "my_fac(float p, int n) -> Tensor", True),
    ("my_fac", "op-plugin", "my_fac(int[] self) -> Tensor", True),
    ("my_fac", "op-plugin", "my_fac(int[] size) -> int", True),
    ("my_fac", "library", "my_fac(int[] shape, SymInt[] s2, int[]? size=None) -> (Tensor a, Tensor b)", True),
    ("my_fac", "library", "my_fac(int[] shape, int[]? size=None, SymInt[] s2) -> Tensor", False),  # S107 in the user's own order
    ("my_op", "op-plugin", "my_op(Tensor x, Dimname d) -> Tensor", True),
    ("my_op", "op-plugin", "my_op(Tensor x, Dimname d, int r=Sum) -> Tensor", False),  # msOpGen cannot carry Sum
    ("a", "custom-op", "a(Tensor x, Dimname d, Dimname[] e) -> Tensor", True),
    ("a", "library", "a(Tensor x, Dimname d, int[] s=[1, 1]) -> Tensor", True),
    ("my_op_", "library", "mylib::my_op_(Tensor(a!) x) -> Tensor(a!)", True),
    ("my_op_", "custom-op", "my_op_(Tensor(a!) x) -> Tensor(a!)", True),
    ("my_op", "custom-op", "my_op(Tensor(a!) x) -> Tensor(a!)", True),
    ("my_op", "op-plugin", "my_op(Tensor x, int[] s=[1, 1]) -> Tensor", True),  # only torch.library's dialect parses it
    ("my_op", "custom-op", "my_op.ov(Tensor x) -> Tensor", True),
    ("my_op", "custom-op", "my_op(Tensor x) -> (Tensor a, Tensor b)", True),
    ("my_op", "custom-op", "my_op(Tensor! x) -> ()", True),
    ("my_op", "custom-op", "my_op(Tensor x, int[] s=[1]) -> Tensor", True),
    ("my_op", "custom-op", "my_op(Tensor x, Scalar s) -> Tensor", True),
    ("my_op", "custom-op", "my_op(Tensor x, ScalarType t) -> Tensor", True),
    ("my_op", "custom-op", "my_op(Tensor x, Tensor?[] s) -> Tensor", False),  # no style generates Tensor?[]
]


def suggested_command(message: str) -> list[str] | None:
    """The ``opkit new`` arguments a refusal's message ends with (in parentheses or after a colon), or None."""
    at = message.rfind("opkit new ")
    if at < 0:
        return None
    command = message[at:].rstrip("\n")
    if message[at - 1] == "(":
        assert command.endswith(")"), message
        command = command[:-1]
    words = shlex.split(command)
    assert words[:2] == ["opkit", "new"], message
    return words[2:]


@pytest.mark.parametrize("name, style, schema, suggests", CASES, ids=[f"{c[1]}:{c[2]}" for c in CASES])
def test_each_suggested_command_is_accepted(tmp_path, run_opkit, name, style, schema, suggests):
    code, output = run_opkit("new", name, "--style", style, "--schema", schema, "-o", str(tmp_path / "refused"), *BUILTIN)
    assert code == 2 and len(output.splitlines()) == 1, output
    command = suggested_command(output.removeprefix("opkit new: "))
    assert (command is not None) == suggests, output
    if command is None:
        return
    code, again = run_opkit("new", *command, "-o", str(tmp_path / "suggested"), *BUILTIN)
    assert code == 0, f"{output}\n-> {again}"
    assert (tmp_path / "suggested" / "opkit.json").is_file()
