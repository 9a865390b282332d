"""Helpers for the adoption tests: generate projects in tmp_path, in-process, never running msopgen."""

from __future__ import annotations

from pathlib import Path

import pytest

from opkit.generate import make_spec
from opkit.generate.project import generate_project


@pytest.fixture
def generate(tmp_path: Path):
    """generate(name, **make_spec options) → the project directory; generate(spec=SPEC, dir=NAME) for a spec."""

    def run(name: str | None = None, *, spec=None, dir: str | None = None, **options) -> Path:
        spec = spec or make_spec(name, **options)
        return generate_project(spec, tmp_path / (dir or spec.name), msopgen_mode="builtin").path

    return run
