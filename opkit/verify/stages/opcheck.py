"""``torch.library.opcheck``: every test, always, each failure filed under the stage whose check it makes."""

from __future__ import annotations

from collections.abc import Sequence

from opkit.verify import diagnose
from opkit.verify.report import OpcheckResult, Problem, SkippedCheck, Stage
from opkit.verify.stages import stage_unit
from opkit.verify.stages.context import clone_tree
from opkit.verify.stages.eager import OpCall
from opkit.verify.stages.meta import first_call_per_op

# Every opcheck test, always; each failure belongs to the stage whose check it makes.
OPCHECK_ALL = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


_OPCHECK_STAGE = {
    "test_schema": Stage.REGISTRATION,
    "test_autograd_registration": Stage.REGISTRATION,
    "test_faketensor": Stage.META,
    "test_aot_dispatch_dynamic": Stage.AOT_FUNCTIONALIZATION,
}


def run_opcheck(calls: list[OpCall], tests: Sequence[str]) -> list[OpcheckResult]:
    import torch

    results = []
    for call in first_call_per_op(calls):
        op_name = call.op._schema.name
        try:
            raw = torch.library.opcheck(call.op, clone_tree(call.args), clone_tree(call.kwargs), test_utils=tuple(tests), raise_exception=False)
        except Exception as exc:  # opcheck itself can trip over exotic argument types
            raw = {"opcheck": exc}
        results.append(OpcheckResult(op_name, tuple((k, v if v == "SUCCESS" else f"{type(v).__name__}: {v}") for k, v in raw.items())))
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
