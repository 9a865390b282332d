"""Drop what the chosen style does not use: a custom_op is registered by torch.library, not op-plugin."""

import shutil

if "{{ cookiecutter.style }}" != "op-plugin":
    shutil.rmtree("op_plugin")
