"""The Jinja extension cookiecutter loads (``_extensions`` in cookiecutter-op/cookiecutter.json).

It gives every template the ``opkit_project(cookiecutter)`` global, which resolves the cookiecutter
variables into an ``OpSpec`` and its ``ProjectModel`` through opkit itself, and a few filters that
spell values as C++, Python or YAML literals. So `opkit new` and a plain ``cookiecutter
cookiecutter-op/`` render the same files from the same logic.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from jinja2.ext import Extension

from opkit import msopgen
from opkit.generate.model import ProjectModel
from opkit.generate.spec import make_spec

# cookiecutter variables that make up the spec (the rest are cookiecutter's own, '_'-prefixed).
SPEC_VARIABLES = ("name", "schema", "inplace", "style", "namespace", "dtypes", "formats", "soc", "out_like", "vendor", "op_type", "outputs", "yaml_entry")


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "y", "on")
    return bool(value)


@functools.lru_cache(maxsize=64)
def _project(items: tuple[tuple[str, str], ...]) -> ProjectModel:
    v = dict(items)
    spec = make_spec(
        v["name"],
        schema=v.get("schema") or None,
        inplace=_truthy(v.get("inplace", False)),
        style=v.get("style") or None,
        namespace=v.get("namespace") or None,
        dtypes=v.get("dtypes") or "",
        formats=v.get("formats") or "",
        soc=v.get("soc") or "",
        out_like=v.get("out_like") or None,
        vendor=v.get("vendor") or None,
        op_type=v.get("op_type") or None,
        outputs=v.get("outputs") or None,
        yaml_entry=v.get("yaml_entry") or None,
    )
    return ProjectModel(spec)


def opkit_project(cookiecutter: Mapping[str, Any]) -> ProjectModel:
    """The project model for a cookiecutter context (cached: every file of one render shares it)."""
    items = tuple((k, ",".join(cookiecutter[k]) if isinstance(cookiecutter[k], (list, tuple)) else str(cookiecutter[k])) for k in SPEC_VARIABLES if k in cookiecutter)
    return _project(items)


def py_literal(value: Any) -> str:
    """A default as Python source."""
    return repr(value)


def yaml_scalar(value: str) -> str:
    """A string as a YAML scalar: plain when YAML reads it back unchanged, else quoted."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, width=math.inf, allow_unicode=True)
    return text.removesuffix("\n").removesuffix("\n...").strip()


class OpkitExtension(Extension):
    def __init__(self, environment):
        super().__init__(environment)
        environment.globals["opkit_project"] = opkit_project
        environment.filters["cpp_literal"] = msopgen.cpp_literal
        environment.filters["py_literal"] = py_literal
        environment.filters["yaml_scalar"] = yaml_scalar
