"""``torch.library.opcheck``: every test, always, each failure filed under the stage whose check it makes."""

from __future__ import annotations

from collections.abc import Sequence

from opkit.verify import diagnose
from opkit.verify.report import OpcheckResult, Problem, SkippedCheck, Stage
from opkit.verify.stages import stage_unit
from opkit.verify.stages.inputs import clone_tree
from opkit.verify.stages.eager import OpCall
from opkit.verify.stages.meta import first_call_per_op

# Every opcheck test, always; each failure belongs to the stage whose check it makes.
OPCHECK_ALL = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
AOT_DISPATCH_DYNAMIC = "test_aot_dispatch_dynamic"


_OPCHECK_STAGE = {
    "test_schema": Stage.REGISTRATION,
    "test_autograd_registration": Stage.REGISTRATION,
    "test_faketensor": Stage.META,
    "test_aot_dispatch_dynamic": Stage.AOT_FUNCTIONALIZATION,
}


def mutates_or_aliases(call: OpCall) -> bool:
    """Whether the op writes or aliases an argument (by its schema, or as eager saw its kernel do)."""
    schema = call.op._schema
    return bool(call.undeclared_mutations) or any(a.alias_info is not None for a in (*schema.arguments, *schema.returns))


def _aot_dispatch_dynamic(call: OpCall):
    """opcheck's test_aot_dispatch_dynamic for an op that writes and aliases nothing: the same
    ``aot_autograd_check(dynamic=True, check_gradients="auto")``, given the op itself instead of opcheck's
    wrapper that first clones every input. That clone only protects inputs from an op that mutates
    them (the check calls the function twice); for an op that mutates nothing it adds two traced
    clones under symbolic shapes, a quarter of the test's time."""
    from torch.testing._internal.optests.aot_autograd import aot_autograd_check

    args, kwargs = clone_tree((call.args, call.kwargs))
    try:
        aot_autograd_check(call.op, args, kwargs, True, check_gradients="auto")
    except Exception as exc:
        return exc
    return "SUCCESS"


def run_opcheck(calls: list[OpCall], tests: Sequence[str]) -> list[OpcheckResult]:
    import torch

    results = []
    for call in first_call_per_op(calls):
        op_name = call.op._schema.name
        direct = AOT_DISPATCH_DYNAMIC in tests and not mutates_or_aliases(call)
        through_opcheck = tuple(t for t in tests if not (direct and t == AOT_DISPATCH_DYNAMIC))
        raw: dict = {}
        try:
            if through_opcheck:
                raw = torch.library.opcheck(
                    call.op, clone_tree(call.args), clone_tree(call.kwargs), test_utils=through_opcheck, raise_exception=False
                )
            if direct:
                raw[AOT_DISPATCH_DYNAMIC] = _aot_dispatch_dynamic(call)
        except Exception as exc:  # opcheck itself can trip over exotic argument types
            raw = {"opcheck": exc}
        ordered = sorted(raw.items(), key=lambda kv: tests.index(kv[0]) if kv[0] in tests else -1)
        results.append(OpcheckResult(op_name, tuple((k, v if v == "SUCCESS" else f"{type(v).__name__}: {v}") for k, v in ordered)))
    return results


def opcheck_problems(results: list[OpcheckResult], already: list[Problem]) -> list[Problem]:
    """opcheck failures not already explained by a more specific check of the same op."""
    explained = {p.op for p in already}
    problems = []
    for r in results:
        if r.ok or r.op in explained:
            continue
        for test, error in r.results:
            if error == "SUCCESS":
                continue
            problems.append(
                Problem(
                    _OPCHECK_STAGE.get(test, Stage.REGISTRATION),
                    f"opcheck.{test}",
                    f"torch.library.opcheck's {test} fails for {r.op}: {diagnose.first_line(error)}",
                    f"run torch.library.opcheck(torch.ops.{r.op.replace('::', '.')}, args, test_utils=({test!r},)) "
                    "and fix what it reports",
                    r.op,
                    error,
                )
            )
    return problems



@stage_unit("opcheck", Stage.REGISTRATION)
def opcheck(ctx) -> list[Problem] | None:
    """test_schema, test_autograd_registration, test_faketensor and test_aot_dispatch_dynamic pass."""
    if not ctx.opcheck_tests:
        ctx.skipped.append(SkippedCheck("opcheck", "turned off by the caller (opcheck=False)"))
        return None
    calls = ctx.eager.calls if not ctx.undefined else []
    if not calls:
        return None
    tests = ctx.opcheck_tests
    if not ctx.real_kernel:  # a stand-in kernel agrees with the Meta function by construction
        tests = tuple(t for t in tests if t != "test_faketensor")
        ctx.skipped.append(SkippedCheck("opcheck.test_faketensor", "a stand-in kernel agrees with the Meta function by construction"))
    ctx.opcheck = run_opcheck(calls, tests)
    return opcheck_problems(ctx.opcheck, ctx.problems)
