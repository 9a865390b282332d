"""Hardening III, part 6: a spec value with a line break or a control character is refused, nothing written."""

from __future__ import annotations

import pytest

OPTIONS = {
    "--vendor": "my_op", "--op-type": "MyOp", "--dtypes": "float", "--formats": "ND", "--soc": "ascend910b1",
    "--namespace": "npu", "--out-like": "x", "--output": "y=like:x",
}  # fmt: skip


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("control", ["\n", "\r", "\x1b", "\x00"])
def test_a_control_character_in_a_spec_value_is_refused(tmp_path, run_opkit, option, control):
    schema = "my_op(Tensor x) -> (Tensor, Tensor)" if option == "--output" else "my_op(Tensor x) -> Tensor"
    target = tmp_path / "p"
    code, output = run_opkit("new", "my_op", "--schema", schema, option, OPTIONS[option] + control, "-o", str(target), "--no-verify", "--msopgen", "builtin")
    assert code == 2, output
    assert "holds a line break or another control character" in output and option in output
    assert not target.exists()


def test_a_control_character_in_a_recorded_spec_is_refused(tmp_path, run_opkit):
    import json

    target = tmp_path / "p"
    assert run_opkit("new", "my_op", "--schema", "my_op(Tensor x) -> Tensor", "-o", str(target), "--no-verify", "--msopgen", "builtin")[0] == 0
    spec = json.loads((target / "opkit.json").read_text())
    spec["vendor"] = "my_op\n"
    (target / "opkit.json").write_text(json.dumps(spec))
    code, output = run_opkit("new", "-o", str(target), "--force", "--no-verify", "--msopgen", "builtin")
    assert code == 2 and "--vendor 'my_op\\\\n' holds a line break" in output, output
