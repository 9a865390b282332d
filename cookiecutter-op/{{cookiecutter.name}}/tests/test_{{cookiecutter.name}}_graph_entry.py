{%- set op = opkit_project(cookiecutter) -%}
"""Graph-entry smoke test for {{ op.qualified_op }}: one npugraph_ex graph, zero breaks.

Off-NPU, opkit emulates torch_npu's registration (schema from the yaml entry, this project's Meta
function, a CPU kernel) and checks Dynamo with fullgraph=True and AOTAutograd functionalization; on an
Atlas A2/A3 machine with the op built into torch_npu it uses the real npugraph_ex backend. The test
uses opkit's pytest plugin (installed with opkit), as users' own suites do.
"""

import importlib.util
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parent.parent
opkit_verify = pytest.importorskip("opkit.verify", reason="opkit is not installed (distribution ascend-opkit: pip install <opkit checkout or its wheel>)")


def test_{{ op.name }}_enters_one_graph_without_breaks():
    report = opkit_verify.assert_project_enters_graph(PROJECT_DIR)
    assert (report.graph_count, report.graph_break_count) == (1, 0)


@pytest.mark.npu
def test_{{ op.name }}_mre_runs_on_npu():
    spec = importlib.util.spec_from_file_location("{{ op.name }}_mre", PROJECT_DIR / "mre" / "{{ op.name }}_mre.py")
    mre = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mre)
    mre.infer_one_step()
