{%- set op = opkit_project(cookiecutter) -%}
"""Graph-entry smoke test for {{ op.qualified_op }}: it must enter an npugraph_ex graph without breaks.

`opkit verify` checks the project off-NPU (schema registration, Meta function, Dynamo with
fullgraph=True, AOTAutograd functionalization); on an Atlas A2/A3 machine with the op built into
torch_npu, the MRE also runs for real through the npugraph_ex backend.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parent.parent


def test_{{ op.name }}_verifies():
    if importlib.util.find_spec("opkit") is None:
        pytest.skip("opkit is not installed")
    run = subprocess.run(
        [sys.executable, "-c", "from opkit.cli import main; main()", "verify", str(PROJECT_DIR)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_{{ op.name }}_mre_runs_on_npu():
    pytest.importorskip("torch_npu", reason="needs an Ascend NPU with CANN and torch_npu")
    spec = importlib.util.spec_from_file_location("{{ op.name }}_mre", PROJECT_DIR / "mre" / "{{ op.name }}_mre.py")
    mre = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mre)
    mre.infer_one_step()
