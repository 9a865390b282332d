"""opkit runs every opcheck test; for an op that writes and aliases nothing it runs test_aot_dispatch_dynamic
without opcheck's defensive input clone (opkit.verify.stages.opcheck). Its verdict must be opcheck's own."""

from __future__ import annotations

import itertools

import torch
from oplib import OpLibrary

from opkit.verify.stages.eager import OpCall
from opkit.verify.stages.opcheck import AOT_DISPATCH_DYNAMIC, OPCHECK_ALL, mutates_or_aliases, run_opcheck

NS = "opkit_t_opcheck"
op = OpLibrary(NS).op
_calls = itertools.count()

op("plain(Tensor x, float s) -> Tensor", lambda x, s: x * s, lambda x, s: torch.empty_like(x))
# A kernel whose result changes from call to call: the compiled graph and eager disagree.
op("drifting(Tensor x) -> Tensor", lambda x: x + next(_calls), lambda x: torch.empty_like(x))


def _scale_(x, s):
    x.mul_(s)


op("scale_(Tensor(a!) x, float s) -> ()", _scale_, lambda x, s: None)
ops = getattr(torch.ops, NS)


def _verdicts(overload, args):
    with torch.no_grad():
        ours = dict(run_opcheck([OpCall(overload, args, {}, None)], OPCHECK_ALL)[0].results)
        theirs = torch.library.opcheck(overload, args, test_utils=OPCHECK_ALL, raise_exception=False)
    return ours, theirs


def test_a_plain_op_passes_every_test_as_opcheck_says():
    ours, theirs = _verdicts(ops.plain.default, (torch.randn(4, 3), 2.0))
    assert list(ours) == list(OPCHECK_ALL)
    assert ours == theirs == dict.fromkeys(OPCHECK_ALL, "SUCCESS")


def test_aot_dispatch_dynamic_fails_where_opcheck_fails_it():
    ours, theirs = _verdicts(ops.drifting.default, (torch.randn(4, 3),))
    assert not isinstance(theirs[AOT_DISPATCH_DYNAMIC], str)  # opcheck's own verdict: a failure
    assert ours[AOT_DISPATCH_DYNAMIC].startswith("AssertionError") and "Outputs of the operator are different" in ours[AOT_DISPATCH_DYNAMIC]


def test_only_ops_that_write_and_alias_nothing_skip_the_clone():
    x = torch.randn(4, 3)
    assert not mutates_or_aliases(OpCall(ops.plain.default, (x, 2.0), {}, None))
    assert mutates_or_aliases(OpCall(ops.scale_.default, (x, 2.0), {}, None))  # Tensor(a!) in the schema
    assert mutates_or_aliases(OpCall(torch.ops.aten.view.default, (x, [12]), {}, None))  # Tensor(a) return
    assert mutates_or_aliases(OpCall(ops.plain.default, (x, 2.0), {}, None, ["x"]))  # eager saw the kernel write x
