"""Drop what the chosen style does not use: a custom_op is registered by torch.library, not op-plugin.

The style is read from the generated opkit.json, not spliced into this script by Jinja: values are
data, never code.
"""

import json
import shutil

with open("opkit.json", encoding="utf-8") as f:
    if json.load(f)["style"] != "op-plugin":
        shutil.rmtree("op_plugin")
