"""``--output NAME=RULE``, called directly: the parsed rule, how it prints back, and each refusal with its column.

Expectations are written from docs/new.md ("Styles, names and shapes": the rule grammar, the message naming the
rule and the column) and count columns by hand in the text as the user typed it (1-based).
"""

from __future__ import annotations

import pytest

from opkit.generate.outputs import (
    Dim,
    OutputRule,
    OutputRuleError,
    can_size_outputs,
    default_out_like,
    like_problem,
    parse_outputs,
    parse_rule,
    rank_read,
    shape_problem,
    sizing_tensors,
)
from opkit.signature import Dialect, parse_schema

SYNTAX_HINT = "(write NAME=like:ARG[,size:[ARG.N, ARG, 8]|size:ARG][,dtype:DTYPE], e.g. rstd=size:[x.0, 1],dtype:float32)"


def _sig(schema: str):
    return parse_schema(schema, Dialect.TORCH_LIBRARY)


# -- parsing ---------------------------------------------------------------------------------------


def test_a_full_rule_is_parsed_with_the_column_of_each_dim():
    rule = parse_rule("rstd=like:x,size:[x.-1, k, 8],dtype:float32")
    assert rule == OutputRule("rstd", like="x", dtype="float32", shape=(Dim("dim", "x", -1, 19), Dim("int", "k", 0, 25), Dim("literal", "", 8, 28)))
    assert [d.column for d in rule.shape] == [19, 25, 28]
    assert rule.text == "rstd=like:x,size:[x.-1, k, 8],dtype:float32"
    assert rule.size_arg == ""


def test_spaces_around_items_and_the_name_count_in_the_columns():
    #        1234567890123456789012345678901234
    text = "rstd = like:x , size:[ x.-1 ,k, 8 ], dtype:float32"
    rule = parse_rule(text)
    assert (rule.name, rule.like, rule.dtype) == ("rstd", "x", "float32")
    assert [(d.kind, d.arg, d.index, d.column) for d in rule.shape] == [("dim", "x", -1, 24), ("int", "k", 0, 30), ("literal", "", 8, 33)]
    with pytest.raises(OutputRuleError) as err:
        parse_rule("o = like:1x")
    assert str(err.value) == f"--output 'o = like:1x', column 10: like:'1x' is not an argument name {SYNTAX_HINT}"


def test_rule_prints_back_in_like_size_dtype_order_without_empty_items():
    rule = parse_rule(" o=dtype:int64,size:[2, n] ")
    assert str(rule) == "o=size:[2, n],dtype:int64"
    assert rule.to_json() == {"size": "[2, n]", "dtype": "int64"}
    assert rule.text == "o=dtype:int64,size:[2, n]"
    assert str(parse_rule("o=like:x")) == "o=like:x"
    assert parse_rule("o=like:x").to_json() == {"like": "x"}
    assert str(OutputRule("o")) == "o="
    assert OutputRule("o").to_json() == {}


@pytest.mark.parametrize(
    "text, shape, size_arg, size_text",
    [
        ("o=size:[]", (), "", "[]"),
        ("o=size:[ ]", (), "", "[]"),
        ("o=size:size", None, "size", "size"),
        ("o=like:x", None, "", ""),
        ("o=size:[x.0]", (Dim("dim", "x", 0, 9),), "", "[x.0]"),
        ("o=size:[0, 12]", (Dim("literal", "", 0, 9), Dim("literal", "", 12, 12)), "", "[0, 12]"),
        ("o=size:[x_1.10,n_2]", (Dim("dim", "x_1", 10, 9), Dim("int", "n_2", 0, 16)), "", "[x_1.10, n_2]"),
    ],
)
def test_sizes(text, shape, size_arg, size_text):
    rule = parse_rule(text)
    assert rule.shape == shape
    assert rule.size_arg == size_arg
    assert rule.size_text == size_text


def test_dim_prints_as_written():
    assert [str(d) for d in parse_rule("o=size:[x.-2, n, 3]").shape] == ["x.-2", "n", "3"]


@pytest.mark.parametrize(
    "text, column, problem",
    [
        ("o=size:[x.0", 8, "unbalanced '[' ']'"),
        ("o=size:x.0]", 11, "unbalanced '[' ']'"),
        ("o=size:[[x.0]", 8, "unbalanced '[' ']'"),
        ("=like:x", 1, "expected an output name and '='"),
        ("o", 1, "expected an output name and '='"),
        ("1o=like:x", 1, "expected an output name and '='"),
        ("o=foo:x", 3, "'foo:x' is not like:ARG, size:[...], size:ARG or dtype:DTYPE"),
        ("o=like", 3, "'like' is not like:ARG, size:[...], size:ARG or dtype:DTYPE"),
        ("o=like:x, dtype", 11, "'dtype' is not like:ARG, size:[...], size:ARG or dtype:DTYPE"),
        ("o=like:x,like:y", 10, "like: is given twice; keep one"),
        ("o=dtype:int64, dtype:int32", 16, "dtype: is given twice; keep one"),
        ("o=like:1x", 8, "like:'1x' is not an argument name"),
        ("o=like:", 8, "like:'' is not an argument name"),
        ("o=size:[[x]]", 8, "size:'[[x]]' is not [D, ...] or the name of an int[] argument"),
        ("o=size:1x", 8, "size:'1x' is not [D, ...] or the name of an int[] argument"),
        ("o=like:x,size: x.0", 16, "size:'x.0' is not [D, ...] or the name of an int[] argument"),
        ("o=size:[x.0, 1x]", 14, "'1x' is not ARG.N (a tensor's dim), ARG (an int argument) or an int >= 0"),
        ("o=size:[x.0,, 2]", 13, "'' is not ARG.N (a tensor's dim), ARG (an int argument) or an int >= 0"),
        ("o=size:[-1]", 9, "'-1' is not ARG.N (a tensor's dim), ARG (an int argument) or an int >= 0"),
        ("o=size:[x.a]", 9, "'x.a' is not ARG.N (a tensor's dim), ARG (an int argument) or an int >= 0"),
        # the first unmatched bracket is named: a surplus ']' at its first place
        ("o=size:[x.0]]", 12, "unbalanced '[' ']'"),
        ("o=like:x=y", 8, "like:'x=y' is not an argument name"),
        ("o=like:x:y", 8, "like:'x:y' is not an argument name"),
        # commas inside brackets, nested or after an earlier bracket, do not split items
        ("o=size:[[1],2]", 8, "size:'[[1],2]' is not [D, ...] or the name of an int[] argument"),
        ("o=size:[1],like:[a, b]", 17, "like:'[a, b]' is not an argument name"),
    ],
)
def test_malformed_rules_name_the_column(text, column, problem):
    with pytest.raises(OutputRuleError) as err:
        parse_rule(text)
    assert str(err.value) == f"--output {text.strip()!r}, column {column}: {problem} {SYNTAX_HINT}"


def test_parse_outputs_takes_text_lists_and_the_json_mapping():
    assert parse_outputs(None) == ()
    assert parse_outputs("") == ()
    assert parse_outputs([]) == ()
    assert parse_outputs({}) == ()
    both = parse_outputs("a=like:x; b=size:[2];")
    assert [str(r) for r in both] == ["a=like:x", "b=size:[2]"]
    assert [str(r) for r in parse_outputs(["a=like:x;b=like:y", "c=dtype:bool"])] == ["a=like:x", "b=like:y", "c=dtype:bool"]
    assert [str(r) for r in parse_outputs(("a=like:x",))] == ["a=like:x"]
    from_json = parse_outputs({"mean": {"size": "[input.0, num_groups]", "dtype": "float32", "like": ""}, "rstd": {"like": "input"}})
    assert [str(r) for r in from_json] == ["mean=size:[input.0, num_groups],dtype:float32", "rstd=like:input"]
    assert from_json[0].shape == (Dim("dim", "input", 0, 12), Dim("int", "num_groups", 0, 21))
    assert from_json[0].text == "mean=size:[input.0, num_groups],dtype:float32"


def test_parse_outputs_refuses_a_bad_json_rule_with_its_text():
    with pytest.raises(OutputRuleError, match=r"^--output 'o=bad:1', column 3: 'bad:1' is not"):
        parse_outputs({"o": {"bad": "1"}})


# -- checks against the schema ---------------------------------------------------------------------

SCHEMA = "f(Tensor x, Tensor? y, Tensor[] zs, Tensor?[] w, int n, int? m, int[] size, SymInt k, float a, int[]? sz2, SymInt[] sym) -> Tensor"


def test_which_arguments_can_size_outputs():
    sig = _sig(SCHEMA)
    assert sizing_tensors(sig) == ["x", "zs"]
    assert [a.name for a in sig.arguments if can_size_outputs(a)] == ["x", "zs"]


@pytest.mark.parametrize(
    "like, problem",
    [
        ("", "--out-like: no input to size the outputs from; use one of: x, zs"),
        ("q", "--out-like 'q' is not an argument of the schema; use one of: x, zs"),
        ("y", "--out-like 'y' is optional (it may be None): outputs copy the size and dtype of a Tensor or Tensor[] argument; use one of: x, zs"),
        ("n", "--out-like 'n' is a int, not a tensor: outputs copy the size and dtype of a Tensor or Tensor[] argument; use one of: x, zs"),
        ("w", "--out-like 'w' is a Tensor?[], not a tensor: outputs copy the size and dtype of a Tensor or Tensor[] argument; use one of: x, zs"),
        ("x", None),
        ("zs", None),
    ],
)
def test_like_problem(like, problem):
    assert like_problem(_sig(SCHEMA), like, "--out-like") == problem


def test_like_problem_without_any_tensor():
    assert like_problem(_sig("g(int n) -> Tensor"), "n", "--output o=like:") == (
        "--output o=like: 'n' is a int, not a tensor: outputs copy the size and dtype of a Tensor or Tensor[] argument; "
        "the schema has no Tensor or Tensor[] argument to size outputs from"
    )


@pytest.mark.parametrize(
    "rule, problem",
    [
        ("o=size:size", None),
        ("o=size:sym", None),
        ("o=like:x", None),
        ("o=size:[]", None),
        ("o=size:[x.0, zs.1, n, k, 3]", None),
        ("o=size:sz2", "--output 'o=size:sz2': size:sz2 is a int[]?; size:ARG takes an int[] or SymInt[] argument (size, sym), size:[...] takes dims"),
        ("o=size:n", "--output 'o=size:n': size:n is a int; size:ARG takes an int[] or SymInt[] argument (size, sym), size:[...] takes dims"),
        ("o=size:q", "--output 'o=size:q': size:q is not an argument; size:ARG takes an int[] or SymInt[] argument (size, sym), size:[...] takes dims"),
        ("o=size:[x.0, y.0]", "--output 'o=size:[x.0, y.0]', column 14: y.0 (y is a Tensor?, not a Tensor or Tensor[]); ARG.N takes the dims of x, zs"),
        ("o=size:[q.0]", "--output 'o=size:[q.0]', column 9: q.0 (q is not an argument); ARG.N takes the dims of x, zs"),
        ("o=size:[n.0]", "--output 'o=size:[n.0]', column 9: n.0 (n is a int, not a Tensor or Tensor[]); ARG.N takes the dims of x, zs"),
        ("o=size:[w.0]", "--output 'o=size:[w.0]', column 9: w.0 (w is a Tensor?[], not a Tensor or Tensor[]); ARG.N takes the dims of x, zs"),
        ("o=size:[m]", "--output 'o=size:[m]', column 9: m is a int?, not an int; a bare name takes an int or SymInt argument (n, k) and ARG.N a tensor's dim"),
        ("o=size:[q]", "--output 'o=size:[q]', column 9: q is not an argument; a bare name takes an int or SymInt argument (n, k) and ARG.N a tensor's dim"),
        ("o=size:[x]", "--output 'o=size:[x]', column 9: x is a Tensor, not an int; a bare name takes an int or SymInt argument (n, k) and ARG.N a tensor's dim"),
        ("o=size:[size]", "--output 'o=size:[size]', column 9: size is a int[], not an int; a bare name takes an int or SymInt argument (n, k) and ARG.N a tensor's dim"),
        ("o=size:[a]", "--output 'o=size:[a]', column 9: a is a float, not an int; a bare name takes an int or SymInt argument (n, k) and ARG.N a tensor's dim"),
    ],
)
def test_shape_problem(rule, problem):
    assert shape_problem(_sig(SCHEMA), parse_rule(rule)) == problem


def test_shape_problem_of_a_schema_without_tensors_ints_or_lists():
    sig = _sig("g(float a) -> Tensor")
    assert shape_problem(sig, parse_rule("o=size:[x.0]")) == "--output 'o=size:[x.0]', column 9: x.0 (x is not an argument); ARG.N takes the dims of no argument of this schema"
    assert shape_problem(sig, parse_rule("o=size:[q]")) == "--output 'o=size:[q]', column 9: q is not an argument; a bare name takes an int or SymInt argument (the schema has none) and ARG.N a tensor's dim"
    assert shape_problem(sig, parse_rule("o=size:q")) == "--output 'o=size:q': size:q is not an argument; size:ARG takes an int[] or SymInt[] argument (the schema has none), size:[...] takes dims"


def test_a_rule_built_in_code_is_quoted_as_it_prints_and_without_a_column():
    rule = OutputRule("o", shape=(Dim("dim", "q", 0),))
    assert shape_problem(_sig(SCHEMA), rule) == "--output 'o=size:[q.0]': q.0 (q is not an argument); ARG.N takes the dims of x, zs"


@pytest.mark.parametrize(
    "rules, rank",
    [
        ((), 0),
        (("o=size:size",), 0),
        (("o=size:[n, 7]",), 0),
        (("o=size:[x.0]",), 1),
        (("o=size:[x.2]",), 3),
        (("o=size:[x.-1]",), 1),
        (("o=size:[x.-3, n, 7]", "p=size:[x.0]"), 3),
        (("o=size:[x.1]", "p=like:x", "q=size:[x.-2, x.0]"), 2),
    ],
)
def test_rank_read(rules, rank):
    assert rank_read(tuple(parse_rule(r) for r in rules)) == rank


@pytest.mark.parametrize(
    "schema, out_like",
    [
        # torchair's my_inplace sizes its output like y, the input it does not write (docs/new.md: "the first unwritten `Tensor`")
        ("f(Tensor(a!) x, Tensor y) -> Tensor", "y"),
        ("f(Tensor(a!) x, Tensor(b!) y) -> Tensor", "x"),
        ("f(Tensor[] xs, Tensor y) -> Tensor", "y"),
        ("f(Tensor? y, Tensor x, Tensor z) -> Tensor", "x"),
        ("f(Tensor?[] w, Tensor[] zs, Tensor[] vs) -> Tensor", "zs"),
        ("f(int n) -> Tensor", ""),
    ],
)
def test_default_out_like(schema, out_like):
    assert default_out_like(_sig(schema)) == out_like


@pytest.mark.parametrize(("text", "like", "dtype"), [("o=dtype:int64", "", "int64"), ("o=like:x", "x", ""), ("o=size:[2]", "", "")])
def test_an_item_left_out_is_the_empty_string(text, like, dtype):
    # '' is the documented "not given" (OutputRule's docstring: empty like means the spec's --out-like)
    rule = parse_rule(text)
    assert (rule.like, rule.dtype) == (like, dtype)
    assert type(rule.like) is str and type(rule.dtype) is str
