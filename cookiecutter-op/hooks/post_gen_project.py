"""Drop what the chosen style does not use: a custom_op is registered by torch.library, not op-plugin.

The style is read from the generated opkit.json (data), never spliced into this script by Jinja.
`opkit new` runs this same file in-process (opkit.generate.project._render).
"""

import json
import shutil

with open("opkit.json", encoding="utf-8") as f:
    if json.load(f)["style"] != "op-plugin":
        shutil.rmtree("op_plugin")
