"""The next steps: the README and `opkit new` give the same commands, in order, runnable from the project root."""

from __future__ import annotations

import re

MY_OP = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"


def _bash_blocks(readme: str) -> list[str]:
    """Command lines of the README's ```bash blocks, comments dropped."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", readme, re.S):
        lines += [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    return lines


def test_readme_commands_in_order_from_the_project_root(tmp_path, run_opkit):
    project = tmp_path / "my_op"
    code, output = run_opkit("new", "my_op", "--schema", MY_OP, "--no-verify", "--msopgen", "builtin", "-o", str(project))
    assert code == 0, output
    commands = _bash_blocks((project / "README.md").read_text())
    order = ["opkit check .", "bash MyOp/build.sh", "bash MyOp/build_out/custom_opp_*.run --install-path=", "source \"$PWD/opp/vendors/my_op/bin/set_env.bash\"",
             "opkit yaml add ", "bash ci/build.sh", "pip install ", "python mre/my_op_mre.py", "python -m pytest tests/test_my_op_graph_entry.py"]  # fmt: skip
    positions = [next(i for i, c in enumerate(commands) if step in c) for step in order]
    assert positions == sorted(positions), commands
    # The project files the commands name exist relative to the project root.
    for path in ("MyOp/build.sh", "mre/my_op_mre.py", "tests/test_my_op_graph_entry.py", "op_plugin/op_plugin_functions.yaml"):
        assert (project / path).is_file(), path
    assert any(c.endswith("op_plugin_functions.yaml\" --entry .") for c in commands), commands
    # opkit new printed the same commands.
    for command in commands:
        assert command in output, command


def test_vendor_and_aclnn_names_reach_the_steps(generate):
    readme = (generate("kv_update_", inplace=True, style="custom-op", vendor="acme_kv") / "README.md").read_text()
    assert "source \"$PWD/opp/vendors/acme_kv/bin/set_env.bash\"" in readme
    assert "`vendor_name` is `acme_kv` rather than `customize`" in readme
    # The eager kernel's aclnn call: inputs, then outputs not already inputs (the in-place x is passed once).
    assert "void kv_update_(at::Tensor& x, const at::Tensor& y)" in readme
    assert "EXEC_NPU_CMD(aclnnKvUpdate, x, y);" in readme
    assert "bash ci/build.sh" not in readme  # no torch_npu rebuild for a custom_op
    # The Python that builds and calls the extension is valid Python.
    import ast
    import textwrap

    ast.parse(textwrap.dedent(re.search(r"```python\n(.*?)```", readme, re.S).group(1)))
