"""Fixtures for `opkit check`: the stand-in CANN header tree (cann_include/) and generated projects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from opkit.check import ToolchainError, find_compiler
from opkit.generate import make_spec
from opkit.generate.project import generate_project

CANN_INCLUDE = Path(__file__).resolve().parent / "cann_include"


def _compiler_missing() -> str:
    try:
        find_compiler()
    except ToolchainError as exc:
        return str(exc)
    return ""


needs_compiler = pytest.mark.skipif(bool(_compiler_missing()), reason=f"opkit check needs a C++ compiler: {_compiler_missing()} (.ci/run installs g++)")


@pytest.fixture
def cann_include() -> Path:
    return CANN_INCLUDE


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """generated(name, schema) → a fresh copy of a project generated once per module (built-in tree)."""
    cache: dict[tuple[str, str], Path] = {}
    base = tmp_path_factory.mktemp("generated")

    def copy(name: str, schema: str, **options) -> Path:
        key = (name, schema)
        if key not in cache:
            cache[key] = generate_project(make_spec(name, schema=schema, **options), base / f"orig{len(cache)}" / name, msopgen_mode="builtin").path
        target = tmp_path_factory.mktemp("project") / name
        shutil.copytree(cache[key], target)
        return target

    return copy
