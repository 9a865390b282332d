"""The op spec, called directly: defaults ``opkit new`` resolves, every refusal with its one-line message, the
opkit.json round trip and the OpType clash warnings.

Expectations are written from docs/new.md (`opkit new`: styles, names and shapes, the type mapping, the refusals
and warnings) and msopgen.md (dtypes, formats, SoC variants, vendor_name), never from opkit's own tables.
"""

from __future__ import annotations

import json
import os

import pytest

from opkit.generate.outputs import OutputRule
from opkit.naming import default_style
from opkit.generate.spec import (
    OpSpec,
    SpecError,
    default_schema,
    format_dtypes,
    load_spec,
    make_spec,
    op_type_clashes,
    op_type_warnings,
    op_types_beside,
    parse_dtypes,
    spec_from_json,
    validate_spec,
)
from opkit.signature import Dialect

DEFAULT_DTYPES = ("float16", "float", "bfloat16")  # `opkit new --help`: --dtypes [default: float16,float,bfloat16]
IDENT = "is not an identifier (letters, digits and '_', not starting with a digit)"


# -- defaults --------------------------------------------------------------------------------------


def test_a_bare_name_gets_the_documented_defaults():
    spec = make_spec("my_op")
    assert spec == OpSpec(
        name="my_op",
        schema="my_op(Tensor x) -> Tensor",
        style="op-plugin",
        namespace="npu",
        dtypes=DEFAULT_DTYPES,
        formats=("ND",),
        soc=("ascend910b1",),
        out_like="x",
        vendor="my_op",
    )
    assert spec.dialect is Dialect.OP_PLUGIN
    assert spec.resolved_op_type == "MyOp"
    assert spec.signature.text == "my_op(Tensor x) -> Tensor"


def test_inplace_defaults_follow_each_dialect():
    # docs/new.md: `opkit new my_inplace --inplace` is my_inplace(Tensor(a!) x, Tensor y) -> (); its output, if any, sizes like y
    spec = make_spec("my_inplace", inplace=True)
    assert (spec.schema, spec.style, spec.namespace, spec.out_like) == ("my_inplace(Tensor(a!) x, Tensor y) -> ()", "op-plugin", "npu", "y")
    # a trailing '_' gets custom-op and its default namespace
    spec = make_spec("scale_", inplace=True)
    assert (spec.schema, spec.style, spec.namespace, spec.vendor, spec.resolved_op_type) == ("scale_(Tensor(a!) x, Tensor y) -> ()", "custom-op", "mylib", "scale_", "Scale")
    assert spec.dialect is Dialect.TORCH_LIBRARY


@pytest.mark.parametrize("name, style", [("relu_", "custom-op"), ("relu", "op-plugin"), ("__init__", "op-plugin"), ("_x_", "custom-op"), ("__x_", "op-plugin")])
def test_default_style(name, style):
    assert default_style(name) == style


def test_default_schema():
    assert default_schema("f", inplace=False) == "f(Tensor x) -> Tensor"
    assert default_schema("f", inplace=True) == "f(Tensor(a!) x, Tensor y) -> ()"


def test_given_values_are_normalised():
    spec = make_spec(
        "my_op",
        schema="  my_op(Tensor x, Tensor y) -> Tensor ",
        dtypes="float16, float ;y=int32,int32",
        formats=" ND, NCHW,",
        soc="Ascend910B2, ascend910_9391",
        out_like="y",
        vendor="acme",
        op_type="SwiGlu",
    )
    assert spec.schema == "my_op(Tensor x, Tensor y) -> Tensor"
    assert spec.dtypes == ("float16", "float")
    assert spec.descriptor_dtypes == (("y", ("int32", "int32")),)
    assert spec.formats == ("ND", "NCHW")
    assert spec.soc == ("ascend910b2", "ascend910_9391")
    assert (spec.out_like, spec.vendor, spec.op_type, spec.resolved_op_type) == ("y", "acme", "SwiGlu", "SwiGlu")
    assert make_spec("my_op", dtypes=["int8", " int32 ", ""], formats=("NCHW",), soc=["ascend310p3"]).dtypes == ("int8", "int32")
    assert make_spec("my_op", dtypes=["int8"], formats=("NCHW",), soc=["ascend310p3"]).soc == ("ascend310p3",)


def test_the_namespace_comes_from_the_schema_else_from_the_style():
    assert make_spec("my_op", schema="ns1::my_op(Tensor x) -> Tensor", style="library").namespace == "ns1"
    assert make_spec("my_op", style="library").namespace == "mylib"
    assert make_spec("my_op", style="custom-op").namespace == "mylib"
    assert make_spec("my_op", style="library", namespace="mine").namespace == "mine"


@pytest.mark.parametrize(
    "value, parsed",
    [
        ("float16,float", (("float16", "float"), ())),
        ("", (DEFAULT_DTYPES, ())),
        (";", (DEFAULT_DTYPES, ())),
        ("x=int32;float", (("float",), (("x", ("int32",)),))),
        ("float16,float;indices=int32,int32", (("float16", "float"), (("indices", ("int32", "int32")),))),
        (" a = int8 ; b=int16,", (DEFAULT_DTYPES, (("a", ("int8",)), ("b", ("int16",))))),
        # an empty part is skipped, the parts after it still read
        ("float16;;x=int32", (("float16",), (("x", ("int32",)),))),
        (";x=int32", (DEFAULT_DTYPES, (("x", ("int32",)),))),
        # NAME is what precedes the first '=': the rest is its (here unknown) dtype, refused later by name
        ("x=int8=int8", (DEFAULT_DTYPES, (("x", ("int8=int8",)),))),
        (["int8", "bool"], (("int8", "bool"), ())),
        (("int8",), (("int8",), ())),
    ],
)
def test_parse_dtypes(value, parsed):
    assert parse_dtypes(value) == parsed


def test_format_dtypes_prints_what_parse_dtypes_reads():
    assert format_dtypes(("float16", "float"), (("indices", ("int32", "int32")), ("y", ("int8", "int8")))) == "float16,float;indices=int32,int32;y=int8,int8"
    assert format_dtypes(("float",), ()) == "float"


def test_parse_dtypes_refuses_a_bad_name():
    with pytest.raises(SpecError) as err:
        parse_dtypes("float;1q=float")
    assert str(err.value) == "--dtypes: '1q' is not an input or output name (write NAME=dtype,dtype;...)"


# -- derived facts -----------------------------------------------------------------------------------


def test_output_rules_and_the_prototype_columns_they_fix():
    spec = make_spec("my_op", schema="my_op(Tensor x, int n) -> (Tensor a, Tensor b)", outputs="b=size:[x.0, n],dtype:int64", dtypes="float16,float", op_type="MyThing")
    assert str(spec.output_rule("a")) == "a=like:x"
    assert str(spec.output_rule("b")) == "b=like:x,size:[x.0, n],dtype:int64"
    assert spec.sample_shape == (8, 16)
    assert spec.prototype().to_json() == {
        "op": "MyThing",
        "input_desc": [{"name": "x", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "float"]}],
        "output_desc": [
            {"name": "a", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "float"]},
            {"name": "b", "param_type": "required", "format": ["ND", "ND"], "type": ["int64", "int64"]},
        ],
        "attr": [{"name": "n", "param_type": "required", "type": "int"}],
    }


def test_an_explicit_column_list_wins_over_the_output_dtype():
    spec = make_spec("my_op", dtypes="float16,float;out=int64,int64", outputs="out=dtype:int64")
    assert spec.prototype().to_json()["output_desc"] == [{"name": "out", "param_type": "required", "format": ["ND", "ND"], "type": ["int64", "int64"]}]


def test_an_output_rule_without_dtype_leaves_the_columns_to_dtypes():
    spec = make_spec("my_op", outputs="out=size:[x.0]", dtypes="float16,float")
    assert spec.prototype().to_json()["output_desc"] == [{"name": "out", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "float"]}]


def test_an_output_rule_keeps_its_own_like():
    spec = make_spec("my_op", schema="my_op(Tensor x, Tensor y) -> Tensor", outputs="out=like:y,size:[x.-3]")
    assert spec.output_rule("out") == OutputRule("out", like="y", shape=spec.outputs[0].shape)
    assert spec.sample_shape == (8, 16, 4)  # three dims read: x.-3
    assert make_spec("my_op").sample_shape == (8, 16)


# -- opkit.json ----------------------------------------------------------------------------------------


def test_to_json_writes_optional_keys_only_when_set():
    spec = make_spec("my_op", schema="my_op(Tensor x, int n) -> (Tensor a, Tensor b)", outputs="b=size:[x.0, n],dtype:int64", dtypes="float16,float;a=int8,int8", soc="ascend910b1,ascend310p3", op_type="MyThing", yaml_entry='{"func": "my_op(Tensor x, int n) -> (Tensor a, Tensor b)", "op_api": "all_version"}', opkit_version="9.9")
    assert spec.to_json() == {
        "name": "my_op",
        "schema": "my_op(Tensor x, int n) -> (Tensor a, Tensor b)",
        "style": "op-plugin",
        "namespace": "npu",
        "dtypes": ["float16", "float"],
        "formats": ["ND"],
        "soc": ["ascend910b1", "ascend310p3"],
        "out_like": "x",
        "vendor": "my_op",
        "op_type": "MyThing",
        "descriptor_dtypes": {"a": ["int8", "int8"]},
        "outputs": {"b": {"size": "[x.0, n]", "dtype": "int64"}},
        "yaml_entry": {"func": "my_op(Tensor x, int n) -> (Tensor a, Tensor b)", "op_api": "all_version"},
        "opkit_version": "9.9",
    }
    assert json.loads(spec.dumps()) == spec.to_json()
    assert spec.dumps().startswith('{\n  "name": "my_op",\n  "schema"')
    assert spec.dumps().endswith('"opkit_version": "9.9"\n}\n')
    assert spec_from_json(spec.to_json()) == spec
    assert spec_from_json(spec.to_json()).opkit_version == "9.9"
    bare = make_spec("my_op", opkit_version="1.0")
    assert list(bare.to_json()) == ["name", "schema", "style", "namespace", "dtypes", "formats", "soc", "out_like", "vendor", "opkit_version"]
    assert spec_from_json(bare.to_json()) == bare


def test_spec_from_json_fills_optional_keys():
    data = make_spec("my_op", schema="my_op(Tensor(a!) x) -> ()").to_json()
    del data["out_like"], data["opkit_version"]
    spec = spec_from_json(data)
    assert (spec.out_like, spec.op_type, spec.descriptor_dtypes, spec.outputs, spec.yaml_entry) == ("", "", (), (), "")
    from opkit import __version__

    assert spec.opkit_version == __version__


def test_a_kept_yaml_entry_is_canonical_json_text():
    entry = {"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version", "note": "ü"}
    assert make_spec("my_op", yaml_entry=entry).yaml_entry == '{"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version", "note": "ü"}'
    assert make_spec("my_op", yaml_entry=json.dumps(entry)).yaml_entry == '{"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version", "note": "ü"}'
    assert make_spec("my_op", yaml_entry={}).yaml_entry == ""


@pytest.mark.parametrize(
    "change, message",
    [
        ({"style": 3}, "W: style: 3 is not one of ['op-plugin', 'custom-op', 'library', 'extension']"),
        ({"outputs": {"out": {"size": "[x.a]"}}}, "W: outputs: --output 'out=size:[x.a]', column 11: 'x.a' is not ARG.N (a tensor's dim), ARG (an int argument) or an int >= 0 (write NAME=like:ARG[,size:[ARG.N, ARG, 8]|size:ARG][,dtype:DTYPE], e.g. rstd=size:[x.0, 1],dtype:float32)"),
        ({"vendor": "customize"}, "W: vendor: 'customize' should not be valid under {'const': 'customize'}"),
        ({"out_like": ""}, "--out-like: no input to size the outputs from; use one of: x"),
    ],
)
def test_spec_from_json_refusals(change, message):
    data = {**make_spec("my_op").to_json(), **change}
    with pytest.raises(SpecError) as err:
        spec_from_json(data, where="W")
    assert str(err.value) == message


def test_spec_from_json_reads_every_key():
    spec = make_spec("my_op", schema="ns1::my_op(Tensor x) -> Tensor", style="library", formats="NCHW,NHWC", dtypes="int8", soc="ascend310p3", vendor="acme")
    assert spec_from_json(spec.to_json()) == OpSpec(
        name="my_op", schema="ns1::my_op(Tensor x) -> Tensor", style="library", namespace="ns1", dtypes=("int8",), formats=("NCHW", "NHWC"),
        soc=("ascend310p3",), out_like="x", vendor="acme",
    )


def test_spec_from_json_refuses_a_keyword_op_name():
    # opkit-spec.schema.json's name pattern takes 'class'; the op name rule (docs/new.md: "Names are validated (identifiers, no keywords ...)") does not
    data = {**make_spec("my_op").to_json(), "name": "class", "schema": "class(Tensor x) -> Tensor"}
    with pytest.raises(SpecError) as err:
        spec_from_json(data)
    assert str(err.value) == "op name 'class' is a Python keyword"


def test_validate_spec_refuses_an_unknown_style_of_a_spec_built_directly():
    with pytest.raises(SpecError) as err:
        validate_spec(OpSpec(name="my_op", schema="my_op(Tensor x) -> Tensor", style="weird", out_like="x", vendor="acme"))
    assert str(err.value) == "unknown style 'weird': choose one of op-plugin, custom-op, library, extension"


def test_spec_from_json_names_opkit_json_by_default():
    with pytest.raises(SpecError, match=r"^opkit\.json: \(top level\): 'schema' is a required property$"):
        spec_from_json({"name": "x"})


@pytest.mark.parametrize(
    "content, message",
    [
        ("{", "{path}:1:2: not valid JSON: Expecting property name enclosed in double quotes"),
        ('{"name": 1, "name": 2}', "{path}: key 'name' is given twice; keep one"),
        ("[" * 5000, "{path} is nested too deeply to read"),
        ('{"name": "x"}', "{path}: (top level): 'schema' is a required property"),
        (b"\xff\xfe\x00", "cannot read {path}: binary file (contains NUL bytes)"),
        (None, "{dir} is not an opkit project: it has no opkit.json"),
    ],
)
def test_load_spec_refusals(tmp_path, content, message):
    path = tmp_path / "opkit.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(SpecError) as err:
        load_spec(tmp_path)
    assert str(err.value) == message.format(path=os.path.join(tmp_path, "opkit.json"), dir=tmp_path)


def test_load_spec_reads_what_was_written(tmp_path):
    spec = make_spec("my_op", schema="my_op(Tensor x, Tensor y) -> Tensor", out_like="y", soc="ascend310p3")
    (tmp_path / "opkit.json").write_text(spec.dumps())
    assert load_spec(tmp_path) == spec


# -- refusals --------------------------------------------------------------------------------------------

class Prefix(str):
    """The message starts so (the rest is a long list, or tested in full elsewhere)."""


LIB = "; use --style library: opkit new my_op --style library --schema"
REFUSALS = [
    (dict(name="bad name"), f"op name 'bad name' {IDENT}"),
    (dict(name=""), "op name is empty"),
    (dict(name="my_op", style="weird"), "unknown style 'weird': choose one of op-plugin, custom-op, library, extension"),
    (dict(name="my_op", schema="my_op(Tensor x) -> Tensor", inplace=True), "--inplace was given but the schema mutates no argument; annotate the written one Tensor(a!)"),
    (dict(name="my_op", schema="other(Tensor x) -> Tensor"), "the schema names the op 'other', but NAME is 'my_op'"),
    (
        dict(name="my_op", schema="my_op(Tensor x, Dimname d) -> Tensor"),
        "cannot generate my_op: Dimname: torch 2.13's torchgen no longer parses Dimname: take the dimension as an int. "
        "Corrected schema: my_op(Tensor x, int d) -> Tensor (opkit new my_op --schema 'my_op(Tensor x, int d) -> Tensor')",
    ),
    (
        dict(name="my_op", schema="my_op(Tensor x, int[] s=[1, 1]) -> Tensor"),
        "bad schema 'my_op(Tensor x, int[] s=[1, 1]) -> Tensor': default of 'int[] s=[1, 1]' contains spaces [op-plugin schema, column 17] "
        "(hint: op-plugin's codegen splits arguments at ', ': write defaults without spaces, e.g. int[2] pads=[1,1]); torch.library takes it: "
        "use --style library: opkit new my_op --style library --schema 'my_op(Tensor x, int[] s=[1, 1]) -> Tensor'",
    ),
    # the corrected command names a style only where the name would not get it by default
    (
        dict(name="my_op", schema="my_op(Tensor x, Dimname d) -> Tensor", style="library"),
        "cannot generate my_op: Dimname: torch 2.13's torchgen no longer parses Dimname: take the dimension as an int. "
        "Corrected schema: my_op(Tensor x, int d) -> Tensor (opkit new my_op --style library --schema 'my_op(Tensor x, int d) -> Tensor')",
    ),
    # the int spelling is parsed in the style's dialect: only op-plugin's takes the enum default Sum (torch refuses it)
    (
        dict(name="my_op", schema="my_op(Tensor x, Dimname d, int r=Sum) -> Tensor"),
        "cannot generate my_op: Dimname: torch 2.13's torchgen no longer parses Dimname: take the dimension as an int. "
        # the corrected schema is refused too (msOpGen), so no command is suggested that opkit would refuse
        "Corrected schema: my_op(Tensor x, int d, int r=Sum) -> Tensor, which opkit refuses too: msOpGen cannot declare this op: default 'Sum' of 'r' is not a literal msOpGen can carry",
    ),
    # an argument name is an identifier: both dialects' parsers refuse any other (torch's too)
    (dict(name="my_op", schema="my_op(Tensor x, int a-b) -> Tensor"), Prefix("bad schema 'my_op(Tensor x, int a-b) -> Tensor': unsupported by opkit: argument name 'a-b' is not an identifier")),
    (dict(name="my_op", schema="my_op(Tensor x, int a-b) -> Tensor", style="library"), Prefix("bad schema 'my_op(Tensor x, int a-b) -> Tensor': invalid argument name 'a-b'")),
    (dict(name="my_op", schema="my_op(Tensor x, int lambda) -> Tensor"), "argument name 'lambda' is a Python keyword, which PyTorch cannot take as a parameter name (opcheck, torch.fx); rename it, e.g. lambda_"),
    (dict(name="my_op", schema="my_op(Tensor x) -> (Tensor lambda)", style="library"), Prefix("return name 'lambda' is a Python keyword")),
    (dict(name="my_op", namespace="mylib"), "op-plugin registers custom ops in the 'npu' namespace, not 'mylib'; use --style custom-op or --style library for another namespace"),
    (dict(name="my_op", style="library", namespace="bad-ns"), f"namespace 'bad-ns' {IDENT}"),
    (dict(name="my_op", schema="ns1::my_op(Tensor x) -> Tensor", style="library", namespace="ns2"), "the schema's namespace 'ns1' differs from --namespace 'ns2'"),
    (dict(name="my_op", op_type="swiGlu"), "--op-type 'swiGlu' is not UpperCamelCase (e.g. SwiGlu)"),
    (dict(name="my_op", op_type="Swi_Glu"), "--op-type 'Swi_Glu' is not UpperCamelCase (e.g. SwiGlu)"),
    (dict(name="my_op", dtypes="float17"), "unknown msOpGen dtype 'float17'; known: bf16, bfloat16, bool, complex128, complex32, complex64, double, float, float16, float32, fp16, fp32, half, int16, int2, int32, int64, int8, qint16, qint32, qint8, quint16, quint8, resource, string, uint1, uint16, uint32, uint64, uint8"),
    (dict(name="my_op", dtypes="float;x=float17"), Prefix("unknown msOpGen dtype 'float17'")),
    (dict(name="my_op", outputs="out=dtype:float17"), Prefix("unknown msOpGen dtype 'float17'")),
    (dict(name="my_op", dtypes=[]), "no dtypes given"),
    (dict(name="my_op", formats=""), "no formats given"),
    (dict(name="my_op", formats="XYZ"), Prefix("unknown msOpGen format 'XYZ'; known: BN_WEIGHT, C1HWNC0")),
    (dict(name="my_op", soc=""), "no SoC given"),
    (dict(name="my_op", soc="ascend910b"), "SoC 'ascend910b' makes msOpGen target the first-generation Ascend 910; name the variant, e.g. ascend910b1 … ascend910b4"),
    (dict(name="my_op", soc="ascend910b1,foo"), "unknown SoC version 'foo'; e.g. ascend910b1, ascend910b2, ascend910b3, ascend910b4, ascend910_9391, ascend310p3, ascend950pr"),
    # msOpGen would pass an unknown ascend... name through into an OpDef no CANN builds
    (dict(name="my_op", soc="ascend999"), "unknown SoC version 'ascend999'; e.g. ascend910b1, ascend910b2, ascend910b3, ascend910b4, ascend910_9391, ascend310p3, ascend950pr"),
    # an empty --schema is a mistake, not a request for the default op
    (dict(name="my_op", schema=""), "--schema is empty; give the op's signature, e.g. --schema 'my_op(Tensor x) -> Tensor', or leave --schema out for that default"),
    (dict(name="my_op", schema="  ", inplace=True), "--schema is empty; give the op's signature, e.g. --schema 'my_op(Tensor(a!) x, Tensor y) -> ()', or leave --schema out for that default"),
    # a store written in place (a cache) stays a mutated argument: no functional twin that drops it
    (
        dict(name="my_cache_put", schema="my_cache_put.value(Tensor key, Tensor slots, *, Tensor? lens=None, Tensor(a!) kv_cache) -> Tensor(a!)"),
        "cannot generate my_cache_put.value: it returns a mutated input (-> Tensor(a!)), which automatic functionalization rejects, so it cannot enter an npugraph_ex graph; "
        "return () or fresh tensors; kv_cache is what the op writes in place (a cache or scatter target, not an out= buffer): a functional twin returning a fresh "
        "tensor would drop it; keep Tensor(a!) kv_cache as a positional argument and return (). Corrected schema: "
        "my_cache_put(Tensor key, Tensor slots, Tensor(a!) kv_cache, *, Tensor? lens=None) -> () "
        "(opkit new my_cache_put --schema 'my_cache_put(Tensor key, Tensor slots, Tensor(a!) kv_cache, *, Tensor? lens=None) -> ()')",
    ),
    (
        # named like a scatter op, two stores
        dict(name="my_scatter", schema="my_scatter.out(Tensor src, Tensor idx, *, Tensor(a!) out, Tensor(b!) out2) -> (Tensor(a!), Tensor(b!))"),
        Prefix("cannot generate my_scatter.out: it returns a mutated input (-> Tensor(a!)), which automatic functionalization rejects, so it cannot enter an npugraph_ex graph; "
               "return () or fresh tensors; out, out2 are what the op writes in place (a cache or scatter target, not an out= buffer): a functional twin returning a fresh "
               "tensor would drop them; keep Tensor(a!) out, out2 as positional arguments and return (). Corrected schema: "
               "my_scatter(Tensor src, Tensor idx, Tensor(a!) out, Tensor(b!) out2) -> ()"),
    ),
    (dict(name="my_op", vendor="customize"), "vendor 'customize' is msOpGen's default: packages sharing it overwrite each other; choose a project-specific name"),
    (dict(name="my_op", vendor="bad vendor"), f"vendor name 'bad vendor' {IDENT}"),
    (dict(name="my_op", outputs="q=like:x"), "--output 'q' is not a returned tensor; outputs: out"),
    (dict(name="my_op", schema="my_op(Tensor x) -> (Tensor a, Tensor b)", outputs="q=like:x"), "--output 'q' is not a returned tensor; outputs: a, b"),
    # each output's own rule is checked: a's problem is named, not b's
    (dict(name="my_op", schema="my_op(Tensor x) -> (Tensor a, Tensor b)", outputs="a=size:[q.0];b=size:[z.0]"), "--output 'a=size:[q.0]', column 9: q.0 (q is not an argument); ARG.N takes the dims of x"),
    (dict(name="my_op", schema="my_op(Tensor(a!) x) -> ()", outputs="q=like:x"), "--output 'q' is not a returned tensor; outputs: none"),
    (dict(name="my_op", outputs="out=like:x;out=like:x"), "--output 'out' is given twice; keep one rule per output"),
    (dict(name="my_op", schema="my_op(Tensor x) -> (Tensor a, Tensor b)", outputs="a=like:x;b=like:x;b=dtype:int8"), "--output 'b' is given twice; keep one rule per output"),
    (dict(name="my_op", outputs="out=like:"), Prefix("--output 'out=like:', column 10: like:'' is not an argument name")),
    (dict(name="my_op", outputs="out=size:[q.0]"), "--output 'out=size:[q.0]', column 11: q.0 (q is not an argument); ARG.N takes the dims of x"),
    (dict(name="my_op", outputs="out=like:y"), "--output out=like: 'y' is not an argument of the schema; use one of: x"),
    (dict(name="my_op", outputs="out=dtype:int8", out_like="y"), "--out-like 'y' is not an argument of the schema; use one of: x"),
    (dict(name="my_op", out_like="q"), "--out-like 'q' is not an argument of the schema; use one of: x"),
    (dict(name="my_op", schema="my_op(Tensor(a!) x) -> ()", out_like="q"), "--out-like 'q' is not an argument of the schema"),
    (dict(name="my_op", outputs="out=dtype:int32", dtypes="out=float;float16"), "--output out has dtype int32, but --dtypes gives out float; drop one"),
    (dict(name="my_op", outputs="out=dtype:int32", dtypes="float,float16;out=float,float16"), "--output out has dtype int32, but --dtypes gives out float,float16; drop one"),
    (dict(name="my_op", dtypes="x=float,float16;out=float"), "--dtypes: column i of every descriptor is one supported combination, so all need the same number of dtypes (x: 2, out: 1)"),
    (dict(name="my_op", dtypes="x=float,float16;out=float", formats="ND,NCHW"), "--dtypes: column i of every descriptor is one supported combination, so all need the same number of dtypes (x: 2, out: 1)"),
    (dict(name="my_op", dtypes="q=float"), "--dtypes names 'q', which is not an input or output; descriptors: out, x"),
    (dict(name="my_op", style="custom-op", schema="my_op.ov(Tensor x) -> Tensor"), f"custom_op ops have no overload name ('.ov'){LIB} 'my_op.ov(Tensor x) -> Tensor'"),
    (dict(name="my_op", style="custom-op", schema="my_op(Tensor x) -> (Tensor a)"), f"custom_op cannot name returns{LIB} 'my_op(Tensor x) -> (Tensor a)'"),
    (dict(name="my_op", style="custom-op", schema="my_op(Tensor! x) -> ()"), f"custom_op infers Tensor(a!) from mutates_args and cannot spell 'Tensor!'{LIB} 'my_op(Tensor! x) -> ()'"),
    (dict(name="my_op", style="custom-op", schema="my_op(Tensor x, int[] s=[1]) -> Tensor"), f"custom_op cannot infer a list default ('int[] s=[1]'){LIB} 'my_op(Tensor x, int[] s=[1]) -> Tensor'"),
    (dict(name="my_op", style="custom-op", schema="my_op(Tensor x, Scalar s) -> Tensor"), f"custom_op cannot infer 'Scalar' from a Python annotation{LIB} 'my_op(Tensor x, Scalar s) -> Tensor'"),
    (dict(name="my_op", style="custom-op", schema="my_op(Tensor x, ScalarType s) -> Tensor"), Prefix(f"custom_op cannot infer 'ScalarType' from a Python annotation{LIB}")),
    (dict(name="my_op", style="custom-op", schema="my_op(Tensor x, Tensor?[] s) -> Tensor"), "custom_op cannot infer 'Tensor?[]' from a Python annotation; --style library does not generate it either: msOpGen cannot declare this op: argument 's: Tensor?[]' has no msOpGen input kind"),
    # torch.library's parser refuses the enum default Sum, as torch._C.parse_schema does
    (dict(name="my_op", style="custom-op", schema="my_op(Tensor x, int r=Sum) -> Tensor"), Prefix("bad schema 'my_op(Tensor x, int r=Sum) -> Tensor': default Sum is not a number")),
    (dict(name="my_op", style="custom-op", schema="my_op(Tensor x, ScalarType? d=long) -> Tensor"), Prefix("custom_op cannot infer 'ScalarType?' from a Python annotation")),
    (
        dict(name="my_op", schema="my_op(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", style="library"),
        "cannot generate my_op: it returns a mutated input (-> Tensor(a!)), which automatic functionalization rejects, so it cannot enter an npugraph_ex graph; "
        "return () or fresh tensors. Corrected schema: my_op(Tensor x) -> Tensor (opkit new my_op --style library --schema 'my_op(Tensor x) -> Tensor')",
    ),
    (
        dict(name="my_op", schema="my_op(Tensor x, *, Tensor(a!) out) -> Tensor(a!)"),
        "cannot generate my_op: it returns a mutated input (-> Tensor(a!)), which automatic functionalization rejects, so it cannot enter an npugraph_ex graph; "
        "return () or fresh tensors. Corrected schema: my_op(Tensor x) -> Tensor (opkit new my_op --schema 'my_op(Tensor x) -> Tensor')",
    ),
    (dict(name="my_op", yaml_entry={"fun": 1}), "a kept yaml entry is a mapping with a func"),
    (dict(name="my_op", yaml_entry='["x"]'), "a kept yaml entry is a mapping with a func"),
    (dict(name="my_op", schema="my_op(Tensor x, Tensor x) -> Tensor", style="library"), "the schema fails `opkit lint` S106: argument 'x' is declared more than once"),
    # S107 is a warning, refused all the same: opcheck's test_schema fails on it
    (
        dict(name="my_op", schema="my_op(Tensor x, int a=1, Tensor y) -> Tensor"),
        "the schema fails `opkit lint` S107: 'a' has a default but 'y' after it has none: the default is never used "
        "(hint: put arguments with defaults after the required ones, or make the later ones keyword-only)",
    ),
    (dict(name="my_op", schema="my_op(Tensor(a!) x, Tensor(a!) y) -> ()"), "the schema fails `opkit lint` S102: alias set 'a' is shared by arguments x, y (hint: give each mutated argument its own letter: Tensor(a!), Tensor(b!), ...)"),
    (dict(name="my_op", schema="my_op(Tensor x, int[] k=1, int[] dims) -> Tensor"), "msOpGen cannot declare this op: default '1' of 'k' is not a literal msOpGen can carry"),
]


@pytest.mark.parametrize("options, message", REFUSALS)
def test_make_spec_refusals(options, message):
    with pytest.raises(SpecError) as err:
        make_spec(**options)
    if isinstance(message, Prefix):
        assert str(err.value).startswith(message)
    else:
        assert str(err.value) == message


def test_validate_refuses_a_lone_surrogate_with_its_position():
    data = {**make_spec("my_op").to_json(), "schema": "my_op(Tensor x\udc80) -> Tensor"}
    with pytest.raises(SpecError) as err:
        spec_from_json(data)
    assert str(err.value) == "the schema is not valid text: undecodable character at position 15"


@pytest.mark.parametrize(
    "options",
    [
        dict(name="my_op", style="custom-op", schema="my_op(Tensor x, int r=1) -> Tensor"),
        # an enum name is the int torch reads (torch._C.parse_schema: Mean 1, long 4, float 6): the Python default is that int
        dict(name="my_op", style="custom-op", schema="my_op(Tensor x, int r=Mean, int d=long, int? e=float, int f=complex) -> Tensor"),
        dict(name="my_op", style="custom-op", schema="my_op(Tensor x, int[] s) -> Tensor"),
        dict(name="my_op", style="custom-op", schema="my_op(Tensor x, float a=1.5, bool b=False, str s=\"long\") -> Tensor"),
        dict(name="my_op", style="custom-op", schema="my_op(Tensor(a!) x, Tensor? y=None) -> ()"),
        dict(name="my_op", style="library", schema="my_op.ov(Tensor x) -> (Tensor a)"),
        dict(name="my_op", schema="my_op(Tensor x, int[1] s=1) -> Tensor"),
        # msopgen.md: float, fp32 and float32 are all DT_FLOAT, so the rule and the columns agree
        dict(name="my_op", dtypes="float;out=fp32", outputs="out=dtype:float32"),
    ],
)
def test_accepted(options):
    assert make_spec(**options).name == "my_op"


# -- OpType clashes -------------------------------------------------------------------------------------------


def test_op_type_warnings():
    assert op_type_warnings("scale", "Scale", []) == ["OpType Scale is a CANN built-in op: installing this package shadows it; choose another with --op-type"]
    assert op_type_warnings("a", "T", [("a", "T", "x"), ("b", "T", ""), ("c", "T", "p/opkit.json"), ("d", "U", "")]) == [
        "OpType T is also the OpType of b: one OpType, two kernels, and the package installed last shadows the other; give one --op-type",
        "OpType T is also the OpType of c (p/opkit.json): one OpType, two kernels, and the package installed last shadows the other; give one --op-type",
    ]


def test_op_type_clashes_with_other_specs_and_neighbours(tmp_path, monkeypatch):
    scale_ = make_spec("scale_", inplace=True)
    mine = make_spec("my_scale", op_type="Scale")
    assert op_type_clashes(mine) == ["OpType Scale is a CANN built-in op: installing this package shadows it; choose another with --op-type"]
    assert op_type_clashes(mine, (scale_, make_spec("other"))) == [
        "OpType Scale is a CANN built-in op: installing this package shadows it; choose another with --op-type",
        "OpType Scale is also the OpType of scale_: one OpType, two kernels, and the package installed last shadows the other; give one --op-type",
    ]
    monkeypatch.chdir(tmp_path)
    for name, text in [
        ("a", make_spec("my_add").dumps()),
        ("b", make_spec("my_add2", op_type="MyAdd", style="library").dumps()),
        ("c", "{broken"),
        ("d", '{"schema": "x(Tensor x) -> Tensor"}'),
        ("e", '{"style": "op-plugin"}'),
        ("target", make_spec("target_op").dumps()),
    ]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "opkit.json").write_text(text)
    (tmp_path / "f").mkdir()  # no opkit.json
    assert op_types_beside(tmp_path / "target") == [
        ("my_add", "MyAdd", os.path.join("a", "opkit.json")),
        ("my_add2", "MyAdd", os.path.join("b", "opkit.json")),
        ("x", "X", os.path.join("d", "opkit.json")),
    ]
    assert op_type_clashes(make_spec("add3", op_type="MyAdd"), beside=tmp_path / "target") == [
        "OpType MyAdd is also the OpType of my_add (a/opkit.json): one OpType, two kernels, and the package installed last shadows the other; give one --op-type",
        "OpType MyAdd is also the OpType of my_add2 (b/opkit.json): one OpType, two kernels, and the package installed last shadows the other; give one --op-type",
    ]
    assert op_types_beside(tmp_path / "missing" / "deeper") == []


def test_neighbours_are_read_in_their_own_dialect_and_as_utf8(tmp_path):
    import locale

    neighbours = {
        # only the op-plugin dialect takes an enum default; only torch.library takes a default with spaces
        "a": {"name": "npu_a", "style": "op-plugin", "schema": "npu_a(Tensor x, int d=Sum) -> Tensor"},
        "b": {"name": "b", "style": "library", "schema": "b(Tensor x, int[] s=[1, 1]) -> Tensor"},
        "c": {"name": "c", "style": "custom-op", "schema": 'c(Tensor x, str s="ü") -> Tensor', "op_type": "Cc"},
    }
    for name, data in neighbours.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "opkit.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # an ASCII locale: the file is still read as UTF-8
    try:
        found = op_types_beside(tmp_path / "target")
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert [(n, t) for n, t, _ in found] == [("npu_a", "A"), ("b", "B"), ("c", "Cc")]


def test_clashes_combine_other_specs_and_neighbours_but_not_the_op_itself(tmp_path):
    for name, spec in [("a", make_spec("my_add")), ("b", make_spec("my_add2", op_type="MyAdd"))]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "opkit.json").write_text(spec.dumps())
    other = make_spec("my_add3", op_type="MyAdd")
    warnings = op_type_clashes(make_spec("my_add"), (other,), beside=tmp_path / "target")
    assert [w.split(":")[0] for w in warnings] == ["OpType MyAdd is also the OpType of my_add3", "OpType MyAdd is also the OpType of my_add2 (" + os.path.relpath(tmp_path / "b" / "opkit.json") + ")"]


def test_examples_are_kept_checked_and_made_again():
    from opkit.generate.spec import options_over, spec_options

    spec = make_spec("my_op", examples=["torch.randn(2, 8)", " {'x': torch.randn(3)} "])
    assert spec.examples == ("torch.randn(2, 8)", "{'x': torch.randn(3)}")
    assert spec.to_json()["examples"] == ["torch.randn(2, 8)", "{'x': torch.randn(3)}"]
    assert spec_from_json(spec.to_json()) == spec
    assert make_spec("my_op", **spec_options(spec)) == spec  # the template variable's JSON text reads back
    assert make_spec("my_op", **options_over(spec, {"dtypes": "float"})).examples == spec.examples  # --force keeps them
    assert "examples" not in make_spec("my_op").to_json()
    with pytest.raises(SpecError, match=r"--example 'torch.randn\(2,', column \d+: not a Python expression"):
        make_spec("my_op", examples=["torch.randn(2,"])
    with pytest.raises(SpecError, match="--example: an empty example"):
        make_spec("my_op", examples=["  "])
