"""Drop what the chosen style does not use: a custom_op is registered by torch.library, not op-plugin;
the extension style builds its own library (csrc/, setup.py, the package) instead of an msOpGen project.

The style is read from the generated opkit.json (data), never spliced into this script by Jinja.
`opkit new` runs this same file in-process (opkit.generate.project._render).
"""

import json
import os
import shutil

with open("opkit.json", encoding="utf-8") as f:
    spec = json.load(f)
name, style = spec["name"], spec["style"]
if style != "op-plugin":
    shutil.rmtree("op_plugin")
if style == "extension":
    shutil.rmtree("meta")
    shutil.rmtree("msopgen")
    for tree in [d for d in os.listdir(".") if os.path.isdir(os.path.join(d, "op_host"))]:
        shutil.rmtree(tree)  # the msOpGen project: this style's kernel is in csrc/
else:
    shutil.rmtree("csrc")
    shutil.rmtree(name + "_ext")
    os.remove("setup.py")
    os.remove(os.path.join("tests", "test_" + name + "_capture.py"))
