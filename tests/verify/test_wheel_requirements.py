"""The modules the torch-npu wheel's npugraph_ex imports are opkit's dependencies; when one is missing anyway,
the report names it and the `pip install` that fixes it, and `opkit doctor` says so."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opkit.verify import diagnose
from opkit import torch_npu_wheel as wheel
from opkit.verify.npugraph_ex import requirements
from opkit.verify.report import Stage

REPO = Path(__file__).resolve().parents[2]
NOT_THIRD_PARTY = {"npugraph_ex", "torch_npu", "torch", "__future__"}

# Run before opkit in a child Python: `packaging` cannot be imported, as in a venv that lacks it.
HIDE_PACKAGING = textwrap.dedent(
    """
    import sys
    class HidePackaging:
        def find_spec(self, name, path=None, target=None):
            if name == "packaging" or name.startswith("packaging."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    for loaded in [m for m in sys.modules if m == "packaging" or m.startswith("packaging.")]:
        del sys.modules[loaded]
    sys.meta_path.insert(0, HidePackaging())
    from opkit.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def _third_party_imports(package: Path) -> dict[str, str]:
    """Top-level modules the package's files import (at the top or inside functions), each with a file that does."""
    own = {p.stem for p in package.rglob("*.py")} | {p.name for p in package.rglob("*") if p.is_dir()}
    found: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_bytes(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in NOT_THIRD_PARTY and top not in own:
                    found.setdefault(top, str(path.relative_to(package)))
    return found


def _declared() -> set[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return {re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0].lower() for d in deps}


def test_every_third_party_module_the_wheel_imports_is_in_the_table_and_declared(npugraph_ex_wheel):
    tree = wheel.obtain()
    imported = _third_party_imports(tree.root / "torch_npu" / "dynamo" / "npugraph_ex")
    assert "packaging" in imported  # the import that broke a fresh install's first `opkit new`
    assert set(imported) == set(requirements.WHEEL_IMPORTS), imported
    assert {requirements.pip_name(m).lower() for m in imported} <= _declared()


def _raise_from(path: str, source: str) -> BaseException:
    try:
        exec(compile(source, path, "exec"), {})
    except BaseException as exc:
        return exc
    raise AssertionError("the code did not raise")


def test_a_module_missing_inside_the_wheel_is_named_with_its_pip_install():
    inner = _raise_from("/cache/torch-npu/2.13.0/torch_npu/dynamo/npugraph_ex/ops/_tagged_event.py", "\n\nimport packaging_absent_here\n")
    wrapped = RuntimeError("backend compiler failed")
    wrapped.inner_exception = inner  # how Dynamo's BackendCompilerFailed carries it
    problem = diagnose.compile_failure(wrapped, backend="npugraph_ex", reached_aot_graph=False, sees_aot_graph=True, sole_op="npu::my_op")
    assert problem.stage is Stage.BACKEND and problem.check == "missing_module"
    assert "(npugraph_ex/ops/_tagged_event.py:3) imports 'packaging_absent_here'" in problem.message
    assert problem.next_action.startswith("pip install packaging_absent_here ")
    assert "alias" not in problem.next_action


def test_a_missing_module_found_through_the_cause_chain_and_mapped_to_its_distribution():
    try:
        try:
            raise ModuleNotFoundError("No module named 'sympy'", name="sympy")
        except ModuleNotFoundError as exc:
            raise RuntimeError("replay failed") from exc
    except RuntimeError as outer:
        problem = diagnose.runtime_failure(outer, backend="npugraph_ex", sole_op=None, call="replay 2")
    assert problem.stage is Stage.REPLAY and problem.check == "missing_module"
    assert "the code backend npugraph_ex ran imports 'sympy'" in problem.message
    assert problem.next_action.startswith("pip install sympy ")


def test_other_failures_are_not_taken_for_a_missing_module():
    problem = diagnose.runtime_failure(ImportError("cannot import name 'x' from 'y'"), backend="npugraph_ex", sole_op=None)
    assert problem.check == "graph_run"


@pytest.mark.slow
def test_verify_without_packaging_names_it_at_the_backend_stage(npugraph_ex_wheel, run_opkit, tmp_path):
    code, out = run_opkit("new", "my_op", "--inplace", "-o", str(tmp_path / "my_op"), "--no-verify")
    assert code == 0, out
    done = subprocess.run(
        [sys.executable, "-c", HIDE_PACKAGING, "verify", str(tmp_path / "my_op")], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "failed at stage: backend passes" in done.stdout
    assert re.search(r"missing_module \[npu::my_op\]: npugraph_ex's code from the torch-npu wheel \(npugraph_ex/[\w/]+\.py:\d+\) imports 'packaging'", done.stdout), done.stdout
    assert "next: pip install packaging " in done.stdout
    assert "alias annotations" not in done.stdout
    assert "AOT functionalization" not in done.stdout.split("passed:", 1)[1].splitlines()[0]  # AOT never ran


def test_doctor_checks_the_wheels_imports(run_opkit):
    code, out = run_opkit("doctor", "--format", "json")
    finding = next(f for f in json.loads(out)["findings"] if f["name"] == "npugraph_ex's imports")
    assert finding["status"] == "ok" and finding["detail"] == "packaging, sympy, numpy"


@pytest.mark.slow
def test_doctor_without_packaging_fails_and_says_the_pip_install():
    done = subprocess.run([sys.executable, "-c", HIDE_PACKAGING, "doctor"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "npugraph_ex's imports" in line)
    assert line.startswith("[FAIL]") and "packaging not installed" in line and line.endswith("pip install packaging")


def test_a_module_missing_when_npugraph_ex_is_imported_is_named_with_its_pip_install(monkeypatch):
    from opkit.verify import npugraph_ex

    def load():
        raise ModuleNotFoundError("No module named 'packaging'", name="packaging")

    monkeypatch.setattr(npugraph_ex, "load", load)
    reason = npugraph_ex.unavailable_reason()
    assert reason == (
        f"npugraph_ex from the torch-npu wheel imports 'packaging', which is not installed in this Python "
        f"({sys.executable}): pip install packaging"
    )
