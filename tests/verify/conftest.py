"""Builders for opkit projects in tmp_path, in the layout `opkit new` writes (agreed, not imported)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from opkit.generate.spec import make_spec


def write_project(
    root: Path,
    *,
    name: str,
    schema: str,
    meta: str,
    style: str = "op-plugin",
    namespace: str = "npu",
    reference: str | None = None,
    generated_schema: str | None = None,
) -> Path:
    """``schema`` goes into the yaml entry; ``generated_schema`` (default: the same) into opkit.json, as
    `opkit new` wrote it before a user edited the yaml."""
    (root / "op_plugin").mkdir(parents=True, exist_ok=True)
    (root / "meta").mkdir(exist_ok=True)
    spec = make_spec(name, schema=generated_schema or schema, style=style, namespace=namespace)
    (root / "opkit.json").write_text(json.dumps(spec.to_json(), indent=2))
    (root / "op_plugin" / "op_plugin_functions.yaml").write_text(
        f"custom:\n  - func: {schema}\n    op_api: all_version\n    gen_opapi:\n      exec: aclnn{name.title().replace('_', '')}\n"
    )
    (root / "meta" / f"{name}_meta.py").write_text(textwrap.dedent(meta).lstrip())
    if reference is not None:
        (root / "reference.py").write_text(textwrap.dedent(reference).lstrip())
    return root


@pytest.fixture
def make_project(tmp_path):
    def make(subdir: str = "proj", **kwargs) -> Path:
        return write_project(tmp_path / subdir, **kwargs)

    return make
