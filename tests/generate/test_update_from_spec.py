"""`opkit new --force` and `--from PROJECT` make the op again from the project's own opkit.json.

Options not given on the command line keep their recorded values; each value that changes is printed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opkit.cli.new import new_command
from opkit.generate.spec import OPTION_NAMES, make_spec, options_over, spec_from_json, spec_options

BUILTIN = ("--no-verify", "--msopgen", "builtin")
SCHEMA = "my_op(Tensor x, Tensor slot_mapping) -> Tensor"


def _spec(project: Path) -> dict:
    return json.loads((project / "opkit.json").read_text())


def _tree(project: Path) -> dict[str, bytes]:
    return {p.relative_to(project).as_posix(): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file() and ".opkit" not in p.parts}


@pytest.fixture
def custom_op(tmp_path, run_opkit):
    """A custom-op project whose slot_mapping is int32: neither is what `opkit new my_op` chooses by itself."""
    target = tmp_path / "proj"
    code, output = run_opkit("new", "my_op", "--schema", SCHEMA, "--style", "custom-op", "--dtypes", "float16;slot_mapping=int32", "--soc", "ascend910b2", "--op-type", "MySlotOp", "--vendor", "acme", "-o", str(target), *BUILTIN)
    assert code == 0, output
    return target


def test_force_without_options_keeps_style_dtypes_and_every_recorded_choice(custom_op, run_opkit):
    before = _spec(custom_op)
    code, output = run_opkit("new", "my_op", "-o", str(custom_op), "--force", *BUILTIN)
    assert code == 0, output
    assert "opkit.json: unchanged (the options not given are as recorded)\n" in output
    assert "<<<<<<<" not in output and "conflicts" not in output
    after = _spec(custom_op)
    assert after == before
    assert after["style"] == "custom-op" and after["descriptor_dtypes"] == {"slot_mapping": ["int32"]}
    assert not (custom_op / "op_plugin").exists()  # it stayed a custom-op project


def test_force_without_name_takes_it_from_the_project(custom_op, run_opkit):
    code, output = run_opkit("new", "-o", str(custom_op), "--force", *BUILTIN)
    assert code == 0, output
    assert f"created {custom_op} (15 files): {SCHEMA}" in output


def test_each_changed_value_is_printed_and_defaults_follow_the_new_choice(custom_op, run_opkit):
    code, output = run_opkit("new", "my_op", "-o", str(custom_op), "--force", "--style", "op-plugin", *BUILTIN)
    assert code == 0, output
    lines = output.splitlines()
    changes = lines[lines.index("opkit.json: changed (the options not given are as recorded)") + 1 :]
    # mylib was custom-op's default namespace: op-plugin's default follows; the rest is as recorded
    assert changes[:2] == ["  style: custom-op -> op-plugin", "  namespace: mylib -> npu"]
    assert not changes[2].startswith("  ")
    spec = _spec(custom_op)
    assert (spec["style"], spec["namespace"], spec["vendor"], spec["op_type"], spec["soc"]) == ("op-plugin", "npu", "acme", "MySlotOp", ["ascend910b2"])
    assert spec["descriptor_dtypes"] == {"slot_mapping": ["int32"]}


def test_a_new_schema_drops_only_the_recorded_columns_of_tensors_it_no_longer_has(custom_op, run_opkit):
    code, output = run_opkit("new", "my_op", "-o", str(custom_op), "--force", "--schema", "my_op(Tensor x) -> Tensor", *BUILTIN)
    assert code == 0, output
    assert "  schema: 'my_op(Tensor x, Tensor slot_mapping) -> Tensor' -> 'my_op(Tensor x) -> Tensor'\n" in output
    assert "  dtypes: float16;slot_mapping=int32 -> float16\n" in output
    spec = _spec(custom_op)
    assert spec["dtypes"] == ["float16"] and "descriptor_dtypes" not in spec and spec["style"] == "custom-op"


def test_an_edited_opkit_json_is_what_force_generates(custom_op, run_opkit):
    spec = _spec(custom_op)
    spec["soc"] = ["ascend910b3"]
    (custom_op / "opkit.json").write_text(json.dumps(spec, indent=2) + "\n")
    code, output = run_opkit("new", "my_op", "-o", str(custom_op), "--force", *BUILTIN)
    assert code == 0, output
    assert "opkit.json: unchanged" in output  # the project's opkit.json is the spec; nothing on the command line changed it
    assert _spec(custom_op / ".opkit" / "generated")["soc"] == ["ascend910b3"]  # generated from the edited spec


def test_a_recorded_value_that_no_longer_fits_is_named_with_where_it_came_from(tmp_path, run_opkit):
    target = tmp_path / "proj"
    assert run_opkit("new", "my_op", "--schema", "my_op(Tensor x, Tensor y) -> Tensor", "--out-like", "y", "-o", str(target), *BUILTIN)[0] == 0
    code, output = run_opkit("new", "my_op", "-o", str(target), "--force", "--schema", "my_op(Tensor x) -> Tensor", *BUILTIN)
    assert code == 2
    assert output == f"opkit new: --out-like 'y' is not an argument of the schema; use one of: x (the options not given on the command line are {target}/opkit.json's)\n"


@pytest.mark.parametrize("source", ["dir", "opkit.json", "a copy of opkit.json"])
def test_from_a_project_adopts_its_own_spec(custom_op, tmp_path, run_opkit, source):
    where = {"dir": custom_op, "opkit.json": custom_op / "opkit.json", "a copy of opkit.json": tmp_path / "my_op.spec.json"}[source]
    if source == "a copy of opkit.json":
        where.write_bytes((custom_op / "opkit.json").read_bytes())
    copy = tmp_path / "copy"
    code, output = run_opkit("new", "--from", str(where), "-o", str(copy), *BUILTIN)
    assert code == 0, output
    assert output.startswith(f"adopted my_op from {where} (opkit project): {SCHEMA}\ncreated {copy} (15 files)")
    assert "opkit.json: unchanged\n" in output
    assert _tree(copy) == _tree(custom_op)  # the same spec: the same project, byte for byte


def test_from_a_project_with_options_changes_only_those(custom_op, tmp_path, run_opkit):
    code, output = run_opkit("new", "--from", str(custom_op), "-o", str(tmp_path / "copy"), "--vendor", "other", *BUILTIN)
    assert code == 0, output
    assert "opkit.json: changed\n  vendor: acme -> other\n" in output
    assert {k: v for k, v in _spec(tmp_path / "copy").items() if k != "vendor"} == {k: v for k, v in _spec(custom_op).items() if k != "vendor"}


@pytest.mark.parametrize(
    "setup, message",
    [
        ("empty-dir", "{src} is not an opkit project: it has no opkit.json"),
        ("bad-json", "{src}/opkit.json:1:2: not valid JSON"),
        ("op", "--op picks one op of a file that declares several; the opkit project {src} has one"),
    ],
)
def test_from_a_directory_that_is_no_project_is_one_message(tmp_path, run_opkit, setup, message):
    src = tmp_path / "src"
    src.mkdir()
    extra = ()
    if setup == "bad-json":
        (src / "opkit.json").write_text("{")
    if setup == "op":
        make = run_opkit("new", "my_op", "-o", str(src), "--force", *BUILTIN)
        assert make[0] == 0, make[1]
        extra = ("--op", "MyOp")
    code, output = run_opkit("new", "--from", str(src), "-o", str(tmp_path / "out"), *extra, *BUILTIN)
    assert code == 2 and output.startswith("opkit new: " + message.format(src=src)), output
    assert len(output.splitlines()) == 1 and not (tmp_path / "out").exists()


# -- the field list ----------------------------------------------------------------------------------------

FULL = dict(
    schema="my_op(Tensor x, Tensor idx, int k) -> (Tensor values, Tensor indices)",
    style="library",
    namespace="acme",
    dtypes="float16,float;idx=int32,int32;indices=int64,int64",
    formats="ND",
    soc="ascend910b1,ascend910b2",
    out_like="x",
    vendor="acme_ops",
    op_type="MyTopK",
    outputs=["values=size:[x.0, k]", "indices=size:[x.0, k]"],
)


KEPT_ENTRY = {"yaml_entry": {"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version", "gen_opapi": {"exec": "aclnnMyOp"}}}


@pytest.mark.parametrize("options", [{}, FULL, {"schema": "my_op(Tensor(a!) x, Tensor y) -> ()", "style": "custom-op"}, KEPT_ENTRY])
def test_the_json_form_and_the_options_of_a_spec_make_it_again(options):
    spec = make_spec("my_op", **options)
    assert spec_from_json(json.loads(spec.dumps())) == spec
    assert make_spec(spec.name, **spec_options(spec)) == spec
    assert options_over(spec, {}) != {} and make_spec(spec.name, **options_over(spec, {})) == spec


def test_every_spec_option_but_the_kept_yaml_entry_is_an_option_of_opkit_new():
    cli = {p.name for p in new_command.params}
    assert set(OPTION_NAMES) - cli == {"yaml_entry"}  # set only by --from an op_plugin_functions.yaml entry


def test_options_given_win_and_defaults_are_chosen_again():
    recorded = make_spec("my_op", schema="my_op(Tensor x, Tensor y) -> Tensor", style="custom-op", out_like="y")
    options = options_over(recorded, {"style": "op-plugin"})
    assert options["style"] == "op-plugin" and options["out_like"] == "y"  # given; recorded (not the default x)
    assert "namespace" not in options and "vendor" not in options  # mylib and my_op were defaults: chosen again
    assert make_spec("my_op", **options).namespace == "npu"


def test_from_with_force_and_no_directory_updates_the_adopted_ops_project(custom_op, tmp_path, run_opkit, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_opkit("new", "--from", str(custom_op), *BUILTIN)[0] == 0  # ./my_op, as the op is named
    code, output = run_opkit("new", "--from", str(custom_op / "opkit.json"), "--force", "--vendor", "v2", *BUILTIN)
    assert code == 0, output
    assert "opkit.json: changed (the options not given are as recorded)\n  vendor: acme -> v2\n" in output
    assert _spec(tmp_path / "my_op")["vendor"] == "v2"
