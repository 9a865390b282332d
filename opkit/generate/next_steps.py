"""The next steps after `opkit new`, as the terminal shows them: the same template macro as the README's."""

from __future__ import annotations

from opkit.generate.spec import OpSpec


def next_steps_text(spec: OpSpec) -> str:
    """cookiecutter-op/templates/next_steps.jinja rendered for a terminal (no markdown fences)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    from opkit.generate.extension import OpkitExtension
    from opkit.generate.model import ProjectModel
    from opkit.generate.resources import template_dir

    env = Environment(loader=FileSystemLoader(str(template_dir() / "templates")), extensions=[OpkitExtension], undefined=StrictUndefined)
    return str(env.get_template("next_steps.jinja").module.next_steps(ProjectModel(spec), markdown=False))
