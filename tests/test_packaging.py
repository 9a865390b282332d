"""What other repositories and installers read from this one: pre-commit hooks and the package metadata."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent


def test_pre_commit_hooks_run_opkit_lint_on_the_files_it_lints():
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"opkit-lint", "opkit-lint-system"}
    for hook in hooks.values():
        assert hook["entry"] == "opkit lint" and hook["name"] and hook["language"] in ("python", "system")
        files = re.compile(hook["files"])
        for path in ("third_party/op-plugin/op_plugin/config/op_plugin_functions.yaml", "op_plugin/python/meta/_meta_registrations.py",
                     "my_op/meta/my_op_meta.py", "my_op/msopgen/my_op.json"):  # fmt: skip
            assert files.search(path), path
        assert not files.search("setup.py") and not files.search("ci/config.yaml")


def _project() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_console_script_and_pytest_plugin_are_declared():
    project = _project()
    assert project["scripts"]["opkit"] == "opkit.cli:main"
    assert project["entry-points"]["pytest11"]["opkit"] == "opkit.verify.pytest_plugin"
    # torch is a range (never replacing an installed torch/torch_npu pair); torch-npu only as an extra.
    assert "torch>=2.6" in project["dependencies"]
    assert not any(d.startswith("torch-npu") for d in project["dependencies"])
    assert any(d.startswith("torch-npu") for d in project["optional-dependencies"]["npu"])


def test_the_distribution_has_a_name_of_its_own():
    # `opkit` on the package index is another author's project; import package and command stay `opkit`.
    assert _project()["name"] == "ascend-opkit"
    assert (REPO / "opkit" / "__init__.py").is_file()


# `pip install opkit` (or `pip install -U opkit[test]`) fetches the unrelated index project of that name.
_INSTALLS_THE_OTHER_OPKIT = re.compile(r"pip install\s+(?:-\S+\s+)*[\"']?opkit(?:[\[\s\"'=<>]|$)", re.MULTILINE)


def _user_facing_texts() -> list[Path]:
    texts = [REPO / "README.md", REPO / ".pre-commit-hooks.yaml", REPO / ".ci" / "run"]
    texts += [p for p in (REPO / "CONTRIBUTING.md", REPO / "benchmarks" / "README.md") if p.is_file()]
    texts += sorted((REPO / "docs").glob("**/*.md")) + sorted((REPO / "opkit").rglob("*.py"))
    texts += sorted(p for p in (REPO / "cookiecutter-op").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return texts


def test_nothing_tells_a_user_to_pip_install_opkit():
    assert _INSTALLS_THE_OTHER_OPKIT.search("- run: pip install opkit\n") and _INSTALLS_THE_OTHER_OPKIT.search('pip install -U "opkit[test]"')
    assert not _INSTALLS_THE_OTHER_OPKIT.search("pip install -c constraints.txt .") and not _INSTALLS_THE_OTHER_OPKIT.search("pip install opkit-x")
    said = {str(p.relative_to(REPO)): m.group(0) for p in _user_facing_texts() if (m := _INSTALLS_THE_OTHER_OPKIT.search(p.read_text(errors="replace")))}
    assert not said


def _ci_command(name: str) -> str:
    m = re.search(rf"^{name}='([^']+)'$", (REPO / ".ci" / "run").read_text(), re.MULTILINE)
    assert m, f".ci/run defines no {name}"
    return m.group(1)


def test_ci_runs_the_readmes_commands_word_for_word():
    readme_lines = {line.strip() for line in (REPO / "README.md").read_text().splitlines()}
    for name in ("MAIN_JOB", "TESTS", "WHEEL_JOB"):
        assert _ci_command(name) in readme_lines, name
    assert _ci_command("TESTS").endswith("python -m pytest -q -n auto") and '".[test]"' in _ci_command("TESTS")
    assert "[test]" not in _ci_command("MAIN_JOB") and " -e " not in _ci_command("MAIN_JOB")


def test_a_built_wheel_carries_the_template_schemas_and_header(tmp_path):
    import shutil
    import subprocess
    import zipfile

    src = tmp_path / "src"
    outputs = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis")

    def ignore(folder: str, names: list[str]) -> set[str]:  # the suite itself too (not the template's tests/)
        return set(outputs(folder, names)) | ({"tests"} if Path(folder) == REPO else set())

    shutil.copytree(REPO, src, symlinks=True, ignore=ignore)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (built,) = (tmp_path / "dist").glob("*.whl")
    assert built.name.startswith("ascend_opkit-") and built.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(built) as archive:
        names = set(archive.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(info).decode()
        entry_points = archive.read(info.replace("METADATA", "entry_points.txt")).decode()
    assert "Name: ascend-opkit" in metadata.splitlines()
    assert "Requires-Dist: packaging>=20" in metadata.splitlines()
    assert "opkit = opkit.cli:main" in entry_points
    for folder in ("cookiecutter-op", "schemas"):
        wanted = {f"opkit/_data/{p.relative_to(REPO).as_posix()}" for p in (REPO / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
        assert wanted and wanted <= names, sorted(wanted - names)
    assert "opkit/check/include/kernel_operator.h" in names
