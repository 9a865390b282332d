"""Bad input ends with one clear message and exit 2, with nothing written; writes are atomic."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from opkit.generate import make_spec
from opkit.generate import project as project_module

BAD = [
    (["class"], "Python keyword"),
    (["template"], "C++ keyword"),
    (["../evil"], "path separator"),
    (["a/b"], "path separator"),
    (["..", "--schema", "x(Tensor x) -> Tensor"], "'..'"),
    (["2fast"], "not an identifier"),
    (["my_op", "--schema", "my_op(Tensor x, *, int class=1) -> Tensor"], "Python keyword"),
    (["my_op", "--schema", 'my_op(Tensor x, int i="abc") -> Tensor'], "is not an int value"),
    (["my_op", "--schema", 'my_op(Tensor x, bool b="x") -> Tensor'], "is not a bool value"),
    (["my_op", "--schema", "my_op(Tensor x, Generator? g=None) -> Tensor"], "Corrected schema: my_op(Tensor x) -> Tensor"),
    (["my_op", "--schema", "my_op(Tensor x"], "bad schema"),
    (["my_op", "--schema", "other(Tensor x) -> Tensor"], "names the op 'other'"),
    (["my_op", "--schema", "my_op(Tensor(a!) x) -> Tensor(a!)"], "Corrected schema: my_op(Tensor(a!) x) -> ()"),
    (["my_op", "--schema", "my_op(Tensor x, Tensor?[] s) -> Tensor"], "no msOpGen input kind"),
    (["my_op", "--output", "out=like:nope"], "is not an argument of the schema; use one of: x"),
    # size rules: each problem located by its column in the rule as written
    (["my_op", "--output", "out=size:[x.0, 2.5]"], "--output 'out=size:[x.0, 2.5]', column 16: '2.5' is not ARG.N"),
    (["my_op", "--output", "out=size:[x.0, n]"], "--output 'out=size:[x.0, n]', column 16: n is not an argument"),
    (["my_op", "--schema", "my_op(Tensor x, float n) -> Tensor", "--output", "out=size:[n]"], "column 11: n is a float, not an int"),
    (["my_op", "--output", "out=size:[q.1]"], "column 11: q.1 (q is not an argument); ARG.N takes the dims of x"),
    (["my_op", "--output", "out=size:x"], "size:x is a Tensor; size:ARG takes an int[] or SymInt[] argument"),
    (["my_op", "--output", "out=size:[x.0],size:[1]"], "column 16: size: is given twice"),
    (["my_op", "--output", "out=size:[x.0"], "column 10: unbalanced '[' ']'"),
    (["my_op", "--output", "out=shape:[1]"], "column 5: 'shape:[1]' is not like:ARG, size:[...], size:ARG or dtype:DTYPE"),
    (["my_op", "--output", "out=like:x", "--output", "out=like:x"], "'out' is given twice"),
    (["my_op", "--dtypes", "float16,float;out=int32"], "same number of dtypes"),
    (["my_op", "--inplace", "--schema", "my_op(Tensor x) -> Tensor"], "mutates no argument"),
    (["my_op", "--soc", "ascend910b"], "first-generation"),
    (["my_op", "--dtypes", "FP16"], "unknown msOpGen dtype"),
    (["my_op", "--vendor", "customize"], "overwrite"),
    (["my_op", "--namespace", "mylib"], "'npu' namespace"),
    (["my_op", "--out-like", "nope"], "--out-like"),
    (["my_op", "--msopgen", "/nonexistent/msopgen"], "no executable"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, run_opkit, args, message):
    out_dir = tmp_path / "out" / "project"
    code, output = run_opkit("new", *args, "-o", str(out_dir), "--no-verify")
    assert code == 2
    assert message in output
    assert len(output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_an_existing_directory_is_written_only_when_it_is_an_opkit_project(tmp_path, run_opkit):
    target = tmp_path / "proj"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    for extra in ((), ("--force",)):  # --force updates only a project opkit made: nothing suggests it here
        code, output = run_opkit("new", "my_op", "-o", str(target), "--no-verify", "--msopgen", "builtin", *extra)
        assert code == 2 and "is not an opkit project: it has no opkit.json" in output, output
        assert "use --force" not in output and len(output.splitlines()) == 1
        assert os.listdir(target) == ["keep.txt"] and (target / "keep.txt").read_text() == "mine"
        assert os.listdir(tmp_path) == ["proj"]

    assert run_opkit("new", "my_op", "-o", str(tmp_path / "p2"), "--no-verify", "--msopgen", "builtin")[0] == 0
    code, output = run_opkit("new", "my_op", "-o", str(tmp_path / "p2"), "--no-verify", "--msopgen", "builtin")
    assert code == 2 and "is an opkit project; use --force to update it" in output


def test_force_keeps_user_files_and_edits_and_lists_only_them(tmp_path, run_opkit):
    target = tmp_path / "proj"
    args = ("new", "my_op", "-o", str(target), "--no-verify", "--msopgen", "builtin")
    assert run_opkit(*args)[0] == 0
    (target / "reference.py").write_text("def my_op(x):\n    return x\n")
    kernel = target / "MyOp" / "op_kernel" / "my_op.cpp"
    kernel.write_text(kernel.read_text() + "// my kernel body\n")
    untouched = (target / "opkit.json").read_text()

    for _ in range(2):  # a second --force loses nothing either
        code, output = run_opkit(*args, "--force")
        assert code == 0, output
        assert (target / "reference.py").read_text() == "def my_op(x):\n    return x\n"
        assert kernel.read_text().endswith("// my kernel body\n")  # the user's kernel survives
        assert (target / "opkit.json").read_text() == untouched
        assert "kept 1 of your files: reference.py\n" in output  # no generated file the user never edited, no repeats
        assert "merged with the new generation: MyOp/op_kernel/my_op.cpp\n" in output
        assert sorted(os.listdir(tmp_path)) == ["proj"]


def test_empty_existing_target_is_used(tmp_path, run_opkit):
    (tmp_path / "proj").mkdir()
    code, output = run_opkit("new", "my_op", "-o", str(tmp_path / "proj"), "--no-verify", "--msopgen", "builtin")
    assert code == 0, output


def test_interrupted_run_leaves_nothing(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(project_module, "_swap_into_place", interrupted)
    with pytest.raises(KeyboardInterrupt):
        project_module.generate_project(make_spec("my_op"), tmp_path / "a" / "b", msopgen_mode="builtin")
    assert os.listdir(tmp_path) == []


def test_opkit_new_does_not_import_torch(tmp_path):
    code = (
        "import sys\n"
        "from opkit.cli import main\n"
        "try:\n"
        f"    main(['new', 'my_op', '-o', {str(tmp_path / 'p')!r}, '--no-verify', '--msopgen', 'builtin'])\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout + done.stderr
    assert (tmp_path / "p" / "opkit.json").is_file()


def test_cli_names_the_ascend_c_project_directory(tmp_path, run_opkit):
    target = tmp_path / "scale_"
    code, output = run_opkit("new", "scale_", "--inplace", "--style", "custom-op", "-o", str(target), "--no-verify", "--msopgen", "builtin")
    assert code == 0, output
    assert f"built-in msOpGen 26.0.0 tree in {target / 'Scale'}" in output
    assert (target / "Scale" / "op_host" / "scale.cpp").is_file()


def test_written_documents_are_checked_against_the_json_schemas(tmp_path):
    from opkit.generate.project import check_written_documents
    from opkit.generate.schemas import SchemaViolation

    spec = make_spec("my_op")
    project = project_module.generate_project(spec, tmp_path / "p", msopgen_mode="builtin").path
    check_written_documents(project, spec)  # what opkit wrote is valid
    prototype = project / "msopgen" / "my_op.json"
    prototype.write_text(prototype.read_text().replace('"required"', '"sometimes"', 1))
    with pytest.raises(SchemaViolation, match="0/input_desc/0/param_type"):
        check_written_documents(project, spec)


@pytest.mark.parametrize("where", ["a_file/proj", "/proc/opkit-cannot-write-here"], ids=["under-a-file", "unwritable"])
def test_a_target_that_cannot_be_created_is_one_message(tmp_path, run_opkit, where, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("not a directory")
    code, output = run_opkit("new", "my_op", "-o", where, "--no-verify", "--msopgen", "builtin")
    assert code == 2 and output.startswith("opkit new: cannot create") and len(output.strip().splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == ["a_file"]
