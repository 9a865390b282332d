"""Graph entry: does an op enter ONE npugraph_ex graph with ZERO breaks? (graph-entry.md)

``import opkit.verify`` is cheap: torch is imported only when a check runs. The public API:

* ``check_graph_entry(fn_or_op, args, kwargs=None, *, backend="auto", device=None) -> GraphEntryReport``
* ``verify_project(project_dir, *, backend="auto") -> GraphEntryReport`` for a project ``opkit new`` wrote
* ``assert_enters_graph(...)``: the pytest helper (also a fixture of the ``opkit`` pytest plugin)
* ``diagnose_environment() -> DoctorReport``: what ``opkit doctor`` prints

A check is the pipeline of ``opkit.verify.stages`` (one unit per stage, in the order an op meets them).
Off the NPU the ``npugraph_ex`` backend is npugraph_ex's own compiler from the torch-npu wheel behind a
stand-in NPU runtime (``opkit.verify.npugraph_ex``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from opkit.verify.report import GraphEntryReport, Problem, Stage

if TYPE_CHECKING:
    from opkit.verify.check import check_graph_entry
    from opkit.verify.doctor import DoctorReport, diagnose_environment
    from opkit.verify.project import verify_project
    from opkit.verify.assertions import GraphEntryError, assert_enters_graph, assert_project_enters_graph

_LAZY = {
    "check_graph_entry": "opkit.verify.check",
    "verify_project": "opkit.verify.project",
    "assert_enters_graph": "opkit.verify.assertions",
    "assert_project_enters_graph": "opkit.verify.assertions",
    "GraphEntryError": "opkit.verify.assertions",
    "diagnose_environment": "opkit.verify.doctor",
    "DoctorReport": "opkit.verify.doctor",
    "backend_names": "opkit.verify.backends",
}

__all__ = ["GraphEntryReport", "Problem", "Stage", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'opkit.verify' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
