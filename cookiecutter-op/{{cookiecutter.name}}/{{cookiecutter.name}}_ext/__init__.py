{%- set op = opkit_project(cookiecutter) -%}
{%- if op.style == "extension" -%}
"""Load the library bisheng built from csrc/{{ op.name }}.asc, then its Meta (fake) function.

The library registers {{ op.qualified_op }} (TORCH_LIBRARY_FRAGMENT def and the PrivateUse1 kernel);
{{ op.name }}_meta.py registers the Meta function torch.compile needs, so `import {{ op.launch.package }}`
before torch.compile is all a user does.
"""

from pathlib import Path

import torch

_LIBRARY = "_C"


def _load_library() -> None:
    here = Path(__file__).resolve().parent
    built = sorted(here.glob(_LIBRARY + "*.so"))
    if not built:
        raise ImportError(f"no {_LIBRARY}*.so in {here}: build it first (python setup.py bdist_wheel && pip install dist/*.whl)")
    torch.ops.load_library(str(built[0]))


_load_library()

from . import {{ op.name }}_meta  # noqa: E402,F401  the Meta function, once the op is defined
{% endif -%}
