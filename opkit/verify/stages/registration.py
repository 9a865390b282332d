"""Registration: the schema is defined and a Meta/fake function is registered before anything compiles."""

from __future__ import annotations

from collections.abc import Sequence

from opkit.verify.report import Problem, Stage
from opkit.verify.stages import stage_unit
from opkit.verify.stages.context import has_fake_impl

def check_registration(op_names: Sequence[str]) -> list[Problem]:
    """Schema defined and a Meta/fake function registered, before anything compiles."""
    import torch

    problems = []
    for op_name in op_names:
        ns, _, name = op_name.partition("::")
        if getattr(getattr(torch.ops, ns), name, None) is None:
            problems.append(
                Problem(
                    Stage.REGISTRATION,
                    "undefined_op",
                    f"{op_name} is not registered with the dispatcher",
                    "define the schema first: torch_npu does it from op_plugin_functions.yaml; off-NPU "
                    "`Library(ns, \"FRAGMENT\").define(func)` or torch.library.custom_op",
                    op_name,
                )
            )
        elif not has_fake_impl(op_name):
            problems.append(
                Problem(
                    Stage.REGISTRATION,
                    "missing_meta",
                    f"no Meta/fake function is registered for {op_name}, so Dynamo cannot trace it with fake tensors",
                    f"register {graphs_meta_hint(op_name)} before torch.compile runs",
                    op_name,
                )
            )
    return problems


def graphs_meta_hint(op_name: str) -> str:
    name = op_name.split("::")[-1]
    return f'`@impl(Library("{op_name.split("::")[0]}", "IMPL", "Meta"), "{name}")` (op-plugin) or `@{name}.register_fake` (custom_op)'



@stage_unit("registration", Stage.REGISTRATION)
def registration(ctx) -> list[Problem]:
    """Each target op is registered with the dispatcher and has a Meta/fake function."""
    return check_registration(ctx.op_names)
