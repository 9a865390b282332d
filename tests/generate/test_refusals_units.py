"""Documented refusals, called directly: why, the corrected schema and the exact ``opkit new`` command.

Written from docs/new.md ("Type mapping", the Refused paragraph: a returned mutated input → ``-> ()``, an ``.out``
overload → its functional twin ``npu_broadcast(Tensor self, int[] size) -> Tensor``, a view → a fresh Tensor,
Dimname → int, Generator/Device/Layout/MemoryFormat dropped, a non-tensor return → a 0-dim Tensor with
``--output out1=size:[],dtype:int64``, no Tensor input → ``Tensor self`` first with ``--output out=size:size``) and
op-plugin-yaml.md (in-place and functionalization rules).
"""

from __future__ import annotations

import pytest

from opkit.generate.outputs import OutputRule
from opkit.generate.refusals import (
    corrected,
    corrected_schema,
    dimname_refusal,
    library_command,
    new_command,
    refusal,
)
from opkit.generate.spec import SpecError, library_suggestion, make_spec
from opkit.signature import Dialect, parse_schema

MUTATED = "it returns a mutated input (-> Tensor(a!)), which automatic functionalization rejects, so it cannot enter an npugraph_ex graph; return () or fresh tensors"
VIEW = "it returns a view of an input (-> Tensor(a)); a custom op's outputs must not alias its inputs: return a fresh Tensor"
SCALAR = "an Ascend C kernel writes only tensors: return a 0-dim Tensor and read it with .item() outside the graph"
NO_INPUT = (
    "it has no Tensor input, so torch has no device to dispatch it to ('There were no tensor arguments to this function') and its Meta "
    "function none to take: take a Tensor self whose device and dtype the output takes, as ATen's new_empty/new_zeros do"
)
GENERATOR = "'Generator? g': random number generation cannot enter an npugraph_ex graph: drop the Generator argument and seed outside the op"
DEVICE = "'Device? d': a device is not an operand of an Ascend C kernel: drop the argument (the op runs where its tensors are)"
LAYOUT = "'Layout? l': a layout is not an operand of an Ascend C kernel: drop the argument (outputs are strided)"
MEMORY_FORMAT = "'MemoryFormat? m': a memory format is not an operand of an Ascend C kernel: drop the argument (outputs are contiguous)"
DIMNAME = "Dimname: torch 2.13's torchgen no longer parses Dimname: take the dimension as an int"


@pytest.mark.parametrize(
    "schema, style, message",
    [
        (
            "npu_silu_(Tensor(a!) self) -> Tensor(a!)",
            "op-plugin",
            f"cannot generate npu_silu_: {MUTATED}. Corrected schema: npu_silu(Tensor(a!) self) -> () (opkit new npu_silu --schema 'npu_silu(Tensor(a!) self) -> ()')",
        ),
        (
            "npu_broadcast.out(Tensor self, int[] size, *, Tensor(a!) out) -> Tensor(a!)",
            "op-plugin",
            f"cannot generate npu_broadcast.out: {MUTATED}. Corrected schema: npu_broadcast(Tensor self, int[] size) -> Tensor (opkit new npu_broadcast --schema 'npu_broadcast(Tensor self, int[] size) -> Tensor')",
        ),
        (
            "npu_two.out(Tensor self, *, Tensor(a!) a, Tensor(b!) b) -> (Tensor(a!), Tensor(b!))",
            "op-plugin",
            f"cannot generate npu_two.out: {MUTATED}. Corrected schema: npu_two(Tensor self) -> (Tensor a, Tensor b) (opkit new npu_two --schema 'npu_two(Tensor self) -> (Tensor a, Tensor b)')",
        ),
        (
            "my_view(Tensor(a) self) -> Tensor(a)",
            "op-plugin",
            f"cannot generate my_view: {VIEW}. Corrected schema: my_view(Tensor self) -> Tensor (opkit new my_view --schema 'my_view(Tensor self) -> Tensor')",
        ),
        (
            # an overload keeps its name in the corrected schema; the command names the op
            "my_view.ov(Tensor(a) self, Generator? g=None) -> Tensor(a)",
            "op-plugin",
            f"cannot generate my_view.ov: {VIEW}; {GENERATOR}. Corrected schema: my_view.ov(Tensor self) -> Tensor (opkit new my_view --schema 'my_view.ov(Tensor self) -> Tensor')",
        ),
        (
            "my_op(Tensor x) -> (Tensor[], int)",
            "library",
            f"cannot generate my_op: it returns 'int': {SCALAR}. Corrected schema: my_op(Tensor x) -> (Tensor[], Tensor) "
            "(opkit new my_op --style library --schema 'my_op(Tensor x) -> (Tensor[], Tensor)' --output 'out1=size:[],dtype:int64')",
        ),
        (
            "my_op(Tensor(a!) x, Tensor(b) y) -> (Tensor(a!), Tensor(b))",
            "library",
            f"cannot generate my_op: {MUTATED}; {VIEW}. Corrected schema: my_op(Tensor(a!) x, Tensor y) -> Tensor (opkit new my_op --style library --schema 'my_op(Tensor(a!) x, Tensor y) -> Tensor')",
        ),
        (
            "my_op(Tensor x, Generator? g=None, Device? d=None, Layout? l=None, MemoryFormat? m=None) -> Tensor",
            "op-plugin",
            f"cannot generate my_op: {GENERATOR}; {DEVICE}; {LAYOUT}; {MEMORY_FORMAT}. Corrected schema: my_op(Tensor x) -> Tensor (opkit new my_op --schema 'my_op(Tensor x) -> Tensor')",
        ),
        (
            "my_op(Tensor x) -> (Tensor, int)",
            "op-plugin",
            f"cannot generate my_op: it returns 'int': {SCALAR}. Corrected schema: my_op(Tensor x) -> (Tensor, Tensor) (opkit new my_op --schema 'my_op(Tensor x) -> (Tensor, Tensor)' --output 'out1=size:[],dtype:int64')",
        ),
        (
            "my_op(Tensor x) -> (bool, float, SymInt, Scalar)",
            "op-plugin",
            f"cannot generate my_op: it returns 'bool', 'float', 'SymInt', 'Scalar': {SCALAR}. Corrected schema: my_op(Tensor x) -> (Tensor, Tensor, Tensor, Tensor) "
            "(opkit new my_op --schema 'my_op(Tensor x) -> (Tensor, Tensor, Tensor, Tensor)' --output 'out0=size:[],dtype:bool' --output 'out1=size:[],dtype:float32' "
            "--output 'out2=size:[],dtype:int64' --output 'out3=size:[],dtype:float32')",
        ),
        (
            # a return type with no dtype of its own becomes a float32 0-dim tensor
            "my_op(Tensor x) -> (Tensor, ScalarType)",
            "library",
            f"cannot generate my_op: it returns 'ScalarType': {SCALAR}. Corrected schema: my_op(Tensor x) -> (Tensor, Tensor) "
            "(opkit new my_op --style library --schema 'my_op(Tensor x) -> (Tensor, Tensor)' --output 'out1=size:[],dtype:float32')",
        ),
        (
            "npu_dropout_gen_mask(int[] size, float p) -> Tensor",
            "op-plugin",
            f"cannot generate npu_dropout_gen_mask: {NO_INPUT}. Corrected schema: npu_dropout_gen_mask(Tensor self, int[] size, float p) -> Tensor "
            "(opkit new npu_dropout_gen_mask --schema 'npu_dropout_gen_mask(Tensor self, int[] size, float p) -> Tensor' --output out=size:size)",
        ),
        (
            "my_fac(int[] shape, int[] size) -> Tensor",
            "op-plugin",
            f"cannot generate my_fac: {NO_INPUT}. Corrected schema: my_fac(Tensor self, int[] shape, int[] size) -> Tensor (opkit new my_fac --schema 'my_fac(Tensor self, int[] shape, int[] size) -> Tensor' --output out=size:size)",
        ),
        (
            "my_fac(int[] shape, SymInt[] s2, int[]? size=None) -> (Tensor a, Tensor b)",
            "library",
            f"cannot generate my_fac: {NO_INPUT}. Corrected schema: my_fac(Tensor self, int[] shape, SymInt[] s2, int[]? size=None) -> (Tensor a, Tensor b) "
            "(opkit new my_fac --style library --schema 'my_fac(Tensor self, int[] shape, SymInt[] s2, int[]? size=None) -> (Tensor a, Tensor b)' --output a=size:shape --output b=size:shape)",
        ),
        (
            # the corrected schema has a problem of the user's own too: said, and no command opkit would refuse
            "my_fac(int[] shape, int[]? size=None, SymInt[] s2) -> Tensor",
            "library",
            f"cannot generate my_fac: {NO_INPUT}. Corrected schema: my_fac(Tensor self, int[] shape, int[]? size=None, SymInt[] s2) -> Tensor, which opkit refuses too: "
            "the schema fails `opkit lint` S107: 'size' has a default but 's2' after it has none: the default is never used "
            "(hint: put arguments with defaults after the required ones, or make the later ones keyword-only)",
        ),
        (
            "my_fac(float p, int n) -> Tensor",
            "op-plugin",
            f"cannot generate my_fac: {NO_INPUT}. Corrected schema: my_fac(Tensor self, float p, int n) -> Tensor (opkit new my_fac --schema 'my_fac(Tensor self, float p, int n) -> Tensor')",
        ),
        (
            "my_fac(int[] self) -> Tensor",
            "op-plugin",
            f"cannot generate my_fac: {NO_INPUT}. Corrected schema: my_fac(Tensor like, int[] self) -> Tensor (opkit new my_fac --schema 'my_fac(Tensor like, int[] self) -> Tensor' --output out=size:self)",
        ),
        (
            "my_fac(int[] size) -> int",
            "op-plugin",
            f"cannot generate my_fac: it returns 'int': {SCALAR}; {NO_INPUT}. Corrected schema: my_fac(Tensor self, int[] size) -> Tensor (opkit new my_fac --schema 'my_fac(Tensor self, int[] size) -> Tensor' --output 'out=size:[],dtype:int64')",
        ),
        (
            "my_op(Tensor x, Dimname d) -> Tensor",
            "op-plugin",
            f"cannot generate my_op: {DIMNAME}. Corrected schema: my_op(Tensor x, int d) -> Tensor (opkit new my_op --schema 'my_op(Tensor x, int d) -> Tensor')",
        ),
        (
            "mylib::my_op_(Tensor(a!) x) -> Tensor(a!)",
            "library",
            f"cannot generate mylib::my_op_: {MUTATED}. Corrected schema: mylib::my_op_(Tensor(a!) x) -> () (opkit new my_op_ --style library --schema 'mylib::my_op_(Tensor(a!) x) -> ()')",
        ),
        (
            "my_op_(Tensor(a!) x) -> Tensor(a!)",
            "custom-op",
            f"cannot generate my_op_: {MUTATED}. Corrected schema: my_op_(Tensor(a!) x) -> () (opkit new my_op_ --schema 'my_op_(Tensor(a!) x) -> ()')",
        ),
        (
            "my_op(Tensor(a!) x) -> Tensor(a!)",
            "custom-op",
            f"cannot generate my_op: {MUTATED}. Corrected schema: my_op(Tensor(a!) x) -> () (opkit new my_op --style custom-op --schema 'my_op(Tensor(a!) x) -> ()')",
        ),
    ],
)
def test_refused_schemas_get_the_corrected_schema_and_command(schema, style, message):
    name = schema.split("(", 1)[0].split(".", 1)[0].rsplit("::", 1)[-1]
    with pytest.raises(SpecError) as err:
        make_spec(name, schema=schema, style=style)
    assert str(err.value) == message


def test_corrected_schemas_generate():
    """The command a refusal prints is accepted: the corrected schema and its --output rules make a spec."""
    for schema, rules in [
        ("npu_dropout_gen_mask(Tensor self, int[] size, float p) -> Tensor", "out=size:size"),
        ("my_op(Tensor x) -> (Tensor, Tensor)", "out1=size:[],dtype:int64"),
        ("npu_silu(Tensor(a!) self) -> ()", None),
    ]:
        assert make_spec(schema.split("(")[0], schema=schema, outputs=rules).schema == schema


def _sig(schema: str, dialect: Dialect = Dialect.OP_PLUGIN):
    return parse_schema(schema, dialect)


def test_corrected_of_an_accepted_schema_is_none():
    assert corrected(_sig("my_op(Tensor x, int[] size) -> Tensor")) is None
    assert corrected_schema(_sig("my_op(Tensor(a!) x) -> ()")) is None
    assert refusal(_sig("my_op(Tensor x) -> Tensor"), "my_op(Tensor x) -> Tensor", "op-plugin") is None


def test_corrected_carries_the_output_rules_and_whether_an_input_was_added():
    result = corrected(_sig("my_fac(int[] size) -> int"))
    assert str(result.signature) == "my_fac(Tensor self, int[] size) -> Tensor"
    assert result.signature.dialect is Dialect.OP_PLUGIN
    assert result.outputs == (OutputRule("out", dtype="int64", shape=()),)
    assert result.adds_input is True
    result = corrected(_sig("my_view(Tensor(a) self) -> Tensor(a)"))
    assert (str(result.signature), result.outputs, result.adds_input) == ("my_view(Tensor self) -> Tensor", (), False)
    assert corrected_schema(_sig("my_view(Tensor(a) self) -> Tensor(a)")) == "my_view(Tensor self) -> Tensor"
    result = corrected(_sig("my_fac(int[] shape) -> (Tensor a, bool b)", Dialect.TORCH_LIBRARY))
    assert str(result.signature) == "my_fac(Tensor self, int[] shape) -> (Tensor a, Tensor b)"
    assert result.signature.dialect is Dialect.TORCH_LIBRARY
    assert [str(o) for o in result.outputs] == ["b=size:[],dtype:bool", "a=size:shape"]


def test_a_symint_list_sizes_a_factory_output():
    result = corrected(_sig("my_fac(SymInt[] shape, int n) -> Tensor"))
    assert str(result.signature) == "my_fac(Tensor self, SymInt[] shape, int n) -> Tensor"
    assert [str(o) for o in result.outputs] == ["out=size:shape"]


def test_in_place_name_keeps_its_underscore_in_the_library_dialect():
    assert corrected_schema(_sig("my_op_(Tensor(a!) x) -> Tensor(a!)", Dialect.TORCH_LIBRARY)) == "my_op_(Tensor(a!) x) -> ()"
    assert corrected_schema(_sig("my_op_(Tensor(a!) self) -> Tensor(a!)")) == "my_op(Tensor(a!) self) -> ()"


def test_dimname_lists_and_optionals_become_ints():
    refused = dimname_refusal("my_op(Tensor x, Dimname[] d, Dimname? e=None) -> Tensor", "op-plugin", Dialect.OP_PLUGIN)
    assert str(refused).endswith("Corrected schema: my_op(Tensor x, int[] d, int? e=None) -> Tensor (opkit new my_op --schema 'my_op(Tensor x, int[] d, int? e=None) -> Tensor')")


def test_dimname_refusal():
    assert dimname_refusal("a(Tensor x) -> Tensor", "op-plugin", Dialect.OP_PLUGIN) is None
    assert dimname_refusal("a(Tensor x, MyDimname d) -> Tensor", "op-plugin", Dialect.OP_PLUGIN) is None
    assert dimname_refusal("a(Tensor x, Dimname d -> Tensor", "op-plugin", Dialect.OP_PLUGIN) is None  # still no schema with int
    # the int spelling must parse in the op's own dialect: only torch.library takes a default with spaces
    assert dimname_refusal("a(Tensor x, Dimname d, int[] s=[1, 1]) -> Tensor", "op-plugin", Dialect.OP_PLUGIN) is None
    assert str(dimname_refusal("a(Tensor x, Dimname d, int[] s=[1, 1]) -> Tensor", "library", Dialect.TORCH_LIBRARY)).endswith(
        "Corrected schema: a(Tensor x, int d, int[] s=[1, 1]) -> Tensor (opkit new a --style library --schema 'a(Tensor x, int d, int[] s=[1, 1]) -> Tensor')"
    )
    refused = dimname_refusal("a(Tensor x, Dimname d, Dimname[] e) -> Tensor", "custom-op", Dialect.TORCH_LIBRARY)
    assert str(refused) == f"cannot generate a: {DIMNAME}. Corrected schema: a(Tensor x, int d, int[] e) -> Tensor (opkit new a --style custom-op --schema 'a(Tensor x, int d, int[] e) -> Tensor')"


def test_commands_are_quoted_for_a_posix_shell():
    assert new_command("my op", "a(Tensor x) -> Tensor", style="library", outputs=(OutputRule("o", like="x"), OutputRule("p", shape=()))) == (
        "opkit new 'my op' --style library --schema 'a(Tensor x) -> Tensor' --output o=like:x --output 'p=size:[]'"
    )
    assert new_command("a", "a(Tensor x) -> Tensor") == "opkit new a --schema 'a(Tensor x) -> Tensor'"
    assert library_command("a", "a(Tensor x) -> Tensor") == "opkit new a --style library --schema 'a(Tensor x) -> Tensor'"


def test_library_suggestion_only_when_torch_library_takes_the_schema():
    schema = "a(Tensor x, int[] s=[1, 1]) -> Tensor"
    assert library_suggestion(schema, "a", "op-plugin") == f"; torch.library takes it: use --style library: opkit new a --style library --schema '{schema}'"
    assert library_suggestion(schema, "a", "custom-op") == f"; torch.library takes it: use --style library: opkit new a --style library --schema '{schema}'"
    assert library_suggestion(schema, "a", "library") == ""
    assert library_suggestion("a(Tensor x -> Tensor", "a", "op-plugin") == ""


def test_refusal_called_directly_names_the_schema_as_written():
    sig = _sig("my_view(Tensor(a) self) -> Tensor(a)")
    assert str(refusal(sig, "my_view(Tensor(a) self)  ->  Tensor(a)", "op-plugin")) == (
        f"cannot generate my_view: {VIEW}. Corrected schema: my_view(Tensor self) -> Tensor (opkit new my_view --schema 'my_view(Tensor self) -> Tensor')"
    )
