"""Defaults said aloud: index-like tensors left at float dtypes, and several outputs without rules, are named,
each with the option that changes it; running that option is accepted and silences the message."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from opkit.generate.defaults import index_dtype_warnings, output_rule_notes, reads_as_index
from opkit.generate.spec import make_spec

BUILTIN = ("--no-verify", "--msopgen", "builtin")


@pytest.mark.parametrize(
    "name",
    ["slot_mapping", "indices", "group_list", "seq_lens", "topkIdx", "block_table", "cu_seqlens", "atten_mask", "idx1", "expert_token_nums", "sendDataOffset", "actual_seq_lengths"],
)
def test_names_that_read_as_an_index(name):
    assert reads_as_index(name)


@pytest.mark.parametrize("name", ["x", "self", "weight", "scale", "bias", "query", "key", "value", "residual", "gamma", "out", "y2", "positional_embedding"])
def test_names_that_do_not(name):
    assert not reads_as_index(name)


def _suggested(message: str) -> list[str]:
    match = re.search(r"pass (--dtypes \S+|--output \S+)", message) or re.search(r"e\.g\. (--output \S+),", message)
    assert match, message
    return shlex.split(match.group(1))


def _lines(output: str, prefix: str) -> list[str]:
    return [line.removeprefix(prefix) for line in output.splitlines() if line.startswith(prefix)]


@pytest.mark.parametrize(
    "schema, extra, prefix, expected",
    [
        (
            "my_op(Tensor x, Tensor slot_mapping) -> Tensor",
            (),
            "warning: ",
            "slot_mapping reads as an index, offset, length or mask, but its dtypes are float16,float,bfloat16 (the --dtypes default for every tensor): "
            "if it holds integers, pass --dtypes 'float16,float,bfloat16;slot_mapping=int32,int32,int32' (or int64, bool, as the kernel reads them)",
        ),
        (
            "my_op(Tensor x, Tensor group_list) -> Tensor",
            ("--dtypes", "float16"),
            "warning: ",
            "group_list reads as an index, offset, length or mask, but its dtypes are float16 (the --dtypes default for every tensor): "
            "if it holds integers, pass --dtypes 'float16;group_list=int32' (or int64, bool, as the kernel reads them)",
        ),
        (
            "my_op(Tensor x, int k) -> (Tensor values, Tensor indices)",
            ("--output", "values=size:[x.0, k]"),
            "warning: ",
            "output indices reads as an index, offset, length or mask, but it takes the dtype of x (float16,float,bfloat16): "
            "if it holds integers, pass --output indices=dtype:int32",
        ),
        (
            "my_op(Tensor q, Tensor k) -> (Tensor q_out, Tensor k_out)",
            (),
            "note: ",
            "2 outputs and no --output rule: each is sized and typed like an input (q_out=like:q, k_out=like:q); where one differs, "
            "give its rule, e.g. --output k_out=like:q,dtype:int32, or size:[q.0, ...] for another shape",
        ),
    ],
    ids=["slot_mapping", "group_list-own-dtypes", "topk-indices", "rope-two-outputs"],
)
def test_each_default_is_said_with_an_option_that_opkit_accepts_and_that_silences_it(tmp_path, run_opkit, schema, extra, prefix, expected):
    code, output = run_opkit("new", "my_op", "--schema", schema, *extra, "-o", str(tmp_path / "first"), *BUILTIN)
    assert code == 0, output
    said = _lines(output, prefix)
    assert said == [expected]
    suggestion = _suggested(expected)
    if suggestion[0] == "--dtypes":
        extra = tuple(a for i, a in enumerate(extra) if "--dtypes" not in extra[max(i - 1, 0) : i + 1])
    code, output = run_opkit("new", "my_op", "--schema", schema, *extra, *suggestion, "-o", str(tmp_path / "second"), *BUILTIN)
    assert code == 0, output
    assert _lines(output, prefix) == []
    spec = json.loads((tmp_path / "second" / "opkit.json").read_text())
    if suggestion[0] == "--dtypes":
        assert all(set(types) == {"int32"} for types in spec["descriptor_dtypes"].values())


def test_nothing_is_said_when_the_choices_are_the_users():
    spec = make_spec("my_op", schema="my_op(Tensor x, Tensor slot_mapping) -> (Tensor y, Tensor indices)", dtypes="float16;slot_mapping=int32", outputs=["indices=like:x,dtype:int64"])
    assert index_dtype_warnings(spec) == [] and output_rule_notes(spec) == []
    int_only = make_spec("my_op", schema="my_op(Tensor indices) -> Tensor", dtypes="int64")
    assert index_dtype_warnings(int_only) == []
