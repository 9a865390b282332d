"""`opkit yaml add`'s editing, called directly: the exact bytes of the edited file for each layout, the line it
reports, refusals with their place, fragments, and the write (mode kept, ``--check`` writes nothing).

Expectations are written from docs/new.md (`opkit yaml add`: every other byte unchanged, BOM and LF/CRLF/CR kept,
a second run changes nothing, an op whose name.overload is declared is exit 2 naming that entry's line, a
custom entry whose exec calls the same aclnn<OpType> is a warning) and op-plugin-yaml.md (the five sections,
the entry fields, `exec: aclnnX, ...`).
"""

from __future__ import annotations

import os
import stat

import pytest

from opkit.generate.yaml_edit import (
    YamlEdit,
    YamlEditError,
    add_entry,
    check_entry,
    emit_entry,
    load_fragment,
    plan_add,
)
from opkit.generate.yaml_edit import _lines, _newline, _op_name

ENTRY = {"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version"}
ADDED = b"  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n"
GEN = {"func": "npu_s(Tensor x) -> Tensor", "op_api": "all_version", "gen_opapi": {"out": {"size": "x", "dtype": "x"}, "exec": "aclnnS"}}
SHADOW = "one OpType, two kernels, and the package installed last shadows the other; give one --op-type"


def _plan(tmp_path, data: bytes, entry=ENTRY) -> YamlEdit:
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_bytes(data)
    return plan_add(path, entry)


LAYOUTS = [
    # (file, the file after the edit, the 1-based line the new entry starts on)
    (b"official: []\ncustom: ~\n", b"official: []\ncustom:\n" + ADDED, 3),
    (b"official: []\ncustom: null\n", b"official: []\ncustom:\n" + ADDED, 3),
    (b"official: []\ncustom: NULL  \n", b"official: []\ncustom:  \n" + ADDED, 3),
    (b"official: []\ncustom: []  # none yet\n", b"official: []\ncustom:  # none yet\n" + ADDED, 3),
    (b"custom: !!null ''\n", b"custom:\n" + ADDED, 2),
    (
        b"official:\n    - func: a(Tensor x) -> Tensor\n      op_api: all_version\ncustom:\n",
        b"official:\n    - func: a(Tensor x) -> Tensor\n      op_api: all_version\ncustom:\n    - func: my_op(Tensor x) -> Tensor\n      op_api: all_version\n",
        5,
    ),
    (
        b"official:\n    - func: a(Tensor x) -> Tensor\n      op_api: all_version\ncustom:",
        b"official:\n    - func: a(Tensor x) -> Tensor\n      op_api: all_version\ncustom:\n    - func: my_op(Tensor x) -> Tensor\n      op_api: all_version\n",
        5,
    ),
    (
        b"official:\n    -   func: a(Tensor x) -> Tensor\nsymint: []\ncustom:\n",
        b"official:\n    -   func: a(Tensor x) -> Tensor\nsymint: []\ncustom:\n    -   func: my_op(Tensor x) -> Tensor\n        op_api: all_version\n",
        5,
    ),
    (b"official: []\nsymint: [a]\ncustom:\n", b"official: []\nsymint: [a]\ncustom:\n" + ADDED, 4),
    # an indented top level: the dash sits as far from its section key as in the first block list
    (
        b"  official:\n      - func: a(Tensor x) -> Tensor\n  custom:\n",
        b"  official:\n      - func: a(Tensor x) -> Tensor\n  custom:\n      - func: my_op(Tensor x) -> Tensor\n        op_api: all_version\n",
        4,
    ),
    (
        b"custom:\n    - func: b(Tensor x) -> Tensor\n      op_api: all_version\n",
        b"custom:\n    - func: b(Tensor x) -> Tensor\n      op_api: all_version\n\n    - func: my_op(Tensor x) -> Tensor\n      op_api: all_version\n",
        5,
    ),
    (
        b"custom:\n  -   func: b(Tensor x) -> Tensor\n      op_api: all_version\n",
        b"custom:\n  -   func: b(Tensor x) -> Tensor\n      op_api: all_version\n\n  -   func: my_op(Tensor x) -> Tensor\n      op_api: all_version\n",
        5,
    ),
    (
        b"custom:\n- func: b(Tensor x) -> Tensor\n  op_api: all_version",
        b"custom:\n- func: b(Tensor x) -> Tensor\n  op_api: all_version\n\n- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n",
        5,
    ),
    (
        b"  custom:\n    - func: b(Tensor x) -> Tensor\n",
        b"  custom:\n    - func: b(Tensor x) -> Tensor\n\n    - func: my_op(Tensor x) -> Tensor\n      op_api: all_version\n",
        4,
    ),
    (
        b"custom:\n  - func: b(Tensor x) -> Tensor\n    op_api: all_version\n\n\nsymint:\n  - c\n",
        b"custom:\n  - func: b(Tensor x) -> Tensor\n    op_api: all_version\n\n" + ADDED + b"\n\nsymint:\n  - c\n",
        5,
    ),
    (
        b"custom:\n  - func: b(Tensor x) -> Tensor\n    gen_opapi:\n      out:\n        size: x\n      exec: aclnnS\n# end\n",
        b"custom:\n  - func: b(Tensor x) -> Tensor\n    gen_opapi:\n      out:\n        size: x\n      exec: aclnnS\n\n" + ADDED + b"# end\n",
        8,
    ),
    (
        b"custom:\n  - func: b(Tensor x) -> Tensor\n    tags: [a, b]\n  - [c]\n",
        b"custom:\n  - func: b(Tensor x) -> Tensor\n    tags: [a, b]\n  - [c]\n\n" + ADDED,
        6,
    ),
    # a block scalar ends at column 0 of the next line: the entry goes after its last line, before the next section
    (
        b"custom:\n  - func: b(Tensor x) -> Tensor\n    note: |\n      text\nsymint: []\n",
        b"custom:\n  - func: b(Tensor x) -> Tensor\n    note: |\n      text\n\n" + ADDED + b"symint: []\n",
        6,
    ),
    # a last line without its line break gets one, whatever it ends with
    (b"custom:", b"custom:\n" + ADDED, 2),
    (b"custom:\n  - func: b(Tensor x) -> Tensor  ", b"custom:\n  - func: b(Tensor x) -> Tensor  \n\n" + ADDED, 4),
    (b"custom:\n  - func: b(Tensor x) -> Tensor\n    tags: X", b"custom:\n  - func: b(Tensor x) -> Tensor\n    tags: X\n\n" + ADDED, 5),
    # the file's own line endings and BOM
    (
        b"\xef\xbb\xbfcustom:\r  - func: b(Tensor x) -> Tensor\r    op_api: all_version\r",
        b"\xef\xbb\xbfcustom:\r  - func: b(Tensor x) -> Tensor\r    op_api: all_version\r\r  - func: my_op(Tensor x) -> Tensor\r    op_api: all_version\r",
        5,
    ),
    (
        b"official: []\r\ncustom:\r\n  - func: b(Tensor x) -> Tensor\r\n    op_api: all_version\r\n",
        b"official: []\r\ncustom:\r\n  - func: b(Tensor x) -> Tensor\r\n    op_api: all_version\r\n\r\n  - func: my_op(Tensor x) -> Tensor\r\n    op_api: all_version\r\n",
        6,
    ),
    (
        b"official: []\r\ncustom: ~\r\n",
        b"official: []\r\ncustom:\r\n  - func: my_op(Tensor x) -> Tensor\r\n    op_api: all_version\r\n",
        3,
    ),
    (
        "custom:  # a\u2028# b\n  - func: b(Tensor x) -> Tensor\n".encode(),
        "custom:  # a\u2028# b\n  - func: b(Tensor x) -> Tensor\n\n".encode() + ADDED,
        5,
    ),
]


@pytest.mark.parametrize("original, expected, line", LAYOUTS)
def test_the_entry_is_spliced_in_and_every_other_byte_kept(tmp_path, original, expected, line):
    edit = _plan(tmp_path, original)
    assert (edit.status, edit.new_bytes, edit.line, edit.func, edit.clashes) == ("added", expected, line, "my_op(Tensor x) -> Tensor", ())
    assert edit.path == tmp_path / "op_plugin_functions.yaml"
    # a second run changes nothing
    again = _plan(tmp_path, expected)
    assert (again.status, again.new_bytes, again.line, again.path, again.func) == ("present", expected, line, tmp_path / "op_plugin_functions.yaml", "my_op(Tensor x) -> Tensor")


def test_a_generated_entry_with_gen_opapi_is_emitted_in_the_files_layout(tmp_path):
    edit = _plan(tmp_path, b"custom:\n    -   func: b(Tensor x) -> Tensor\n", GEN)
    assert edit.new_bytes == (
        b"custom:\n    -   func: b(Tensor x) -> Tensor\n\n"
        b"    -   func: npu_s(Tensor x) -> Tensor\n        op_api: all_version\n        gen_opapi:\n          out:\n            size: x\n            dtype: x\n          exec: aclnnS\n"
    )


@pytest.mark.parametrize(
    "dash, key, text",
    [
        (2, 4, "  - func: npu_s(Tensor x) -> Tensor\n    op_api: all_version\n    gen_opapi:\n      out:\n        size: x\n        dtype: x\n      exec: aclnnS\n"),
        (0, 2, "- func: npu_s(Tensor x) -> Tensor\n  op_api: all_version\n  gen_opapi:\n    out:\n      size: x\n      dtype: x\n    exec: aclnnS\n"),
        (0, 4, "-   func: npu_s(Tensor x) -> Tensor\n    op_api: all_version\n    gen_opapi:\n      out:\n        size: x\n        dtype: x\n      exec: aclnnS\n"),
        (1, 3, " - func: npu_s(Tensor x) -> Tensor\n   op_api: all_version\n   gen_opapi:\n     out:\n       size: x\n       dtype: x\n     exec: aclnnS\n"),
    ],
)
def test_emit_entry(dash, key, text):
    assert emit_entry(GEN, dash=dash, key=key) == text


def test_an_entry_only_the_op_plugin_dialect_parses_is_added(tmp_path):
    entry = {"func": "my_op(Tensor x, int d=Sum) -> Tensor", "op_api": "all_version"}  # torch.library rejects Sum
    assert _plan(tmp_path, b"custom: []\n", entry).new_bytes == b"custom:\n  - func: my_op(Tensor x, int d=Sum) -> Tensor\n    op_api: all_version\n"


def test_a_long_func_is_never_folded():
    func = "my_op(" + ", ".join(f"Tensor x{i}" for i in range(40)) + ") -> Tensor"
    assert emit_entry({"func": func}, dash=2, key=4) == f"  - func: {func}\n"


def test_an_entry_whose_optype_another_custom_op_calls_is_added_with_a_warning(tmp_path):
    original = b"official:\n  - func: o(Tensor x) -> Tensor\n    gen_opapi:\n      exec: aclnnS\ncustom:\n  - func: s(Tensor x) -> Tensor\n    gen_opapi:\n      exec: aclnnS, x\n  - 3\n  - func: t(Tensor x) -> Tensor\n  - func: u.ov(Tensor x) -> Tensor\n    gen_opapi:\n      exec: aclnnS\n  - func: v(Tensor x) -> Tensor\n    gen_opapi: [exec]\n  - gen_opapi:\n      exec: aclnnS\n  - func: w(Tensor x) -> Tensor\n    gen_opapi:\n      exec: [aclnnS]\n  - func: [s2]\n    gen_opapi:\n      exec: aclnnS\n  - func: s3(Tensor x) -> Tensor\n    gen_opapi:\n      out: {}\n"
    path = tmp_path / "op_plugin_functions.yaml"
    edit = _plan(tmp_path, original, GEN)
    assert edit.clashes == (f"OpType S is also the OpType of s ({path}:6): {SHADOW}", f"OpType S is also the OpType of u ({path}:11): {SHADOW}")
    assert edit.line == 28  # 26 lines, a blank one, then the entry
    # another op of the same name (an overload) does not clash with itself; an entry without gen_opapi has no OpType
    assert _plan(tmp_path, original, {**GEN, "func": "s.two(Tensor x) -> Tensor"}).clashes == (f"OpType S is also the OpType of u ({path}:11): {SHADOW}",)
    assert _plan(tmp_path, original, ENTRY).clashes == ()
    assert _plan(tmp_path, original, {**GEN, "gen_opapi": {"exec": 3}}).clashes == ()
    assert _plan(tmp_path, original, {**GEN, "gen_opapi": ["exec"]}).clashes == ()


def test_a_file_with_two_custom_keys_warns_of_the_optypes_of_both(tmp_path):
    # op-plugin's codegen keeps only the last 'custom:' (PyYAML: the last key wins; lint reports Y004), and the entry
    # goes there; the OpTypes of both are named, as the duplicate-func check reads every section: the first one's
    # entries are most likely meant to be built too
    original = b"custom:\n  - func: s(Tensor x) -> Tensor\n    gen_opapi:\n      exec: aclnnS\ncustom:\n  - func: t(Tensor x) -> Tensor\n    gen_opapi:\n      exec: aclnnS\n"
    path = tmp_path / "op_plugin_functions.yaml"
    edit = _plan(tmp_path, original, GEN)
    assert edit.clashes == (f"OpType S is also the OpType of s ({path}:2): {SHADOW}", f"OpType S is also the OpType of t ({path}:6): {SHADOW}")
    assert edit.new_bytes == original + b"\n" + b"  - func: npu_s(Tensor x) -> Tensor\n    op_api: all_version\n    gen_opapi:\n      out:\n        size: x\n        dtype: x\n      exec: aclnnS\n"


def test_a_cann_builtin_optype_is_not_a_clash_here(tmp_path):
    assert _plan(tmp_path, b"custom: []\n", {**GEN, "gen_opapi": {"exec": "aclnnScale"}}).clashes == ()


@pytest.mark.parametrize(
    "original, message",
    [
        (b"custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: [v2.1, newest]\n", "{path}:2: func 'my_op(Tensor x) -> Tensor' is already declared in 'custom:' with different fields; remove or rename one of them"),
        (b"official:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\ncustom: []\n", "{path}:2: func 'my_op(Tensor x) -> Tensor' is already declared in 'official:'; remove or rename one of them"),
        (b"custom:\n  - a\n  - func: my_op(Tensor x, Tensor y) -> Tensor\n", "{path}:3: op 'my_op' is already declared in 'custom:' as 'my_op(Tensor x, Tensor y) -> Tensor', and no generation of this project wrote that entry; give the new op another name or overload, or take the old one out: opkit yaml remove {path} my_op"),
        (b"official:\n  - func: my_op (Tensor y) -> Tensor\ncustom: []\n", "{path}:2: op 'my_op' is already declared in 'official:' as 'my_op (Tensor y) -> Tensor', and no generation of this project wrote that entry; give the new op another name or overload"),
        # the op's name is what precedes the first '(': an alias annotation's '(' is not the end of it
        (b"custom:\n  - func: my_op(Tensor(a!) x) -> ()\n", "{path}:2: op 'my_op' is already declared in 'custom:' as 'my_op(Tensor(a!) x) -> ()', and no generation of this project wrote that entry; give the new op another name or overload, or take the old one out: opkit yaml remove {path} my_op"),
        # composed fine, but not constructed: the file itself is refused, with its place
        (b"custom: []\nx: !!python/name:os.system\n", "{path}:2:4: not valid YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:python/name:os.system'"),
        (b"official: []\n", "{path} has no 'custom:' section (op-plugin's codegen needs all five sections)"),
        (b"official: []\ncustom:\n  a: 1\n", "{path}: 'custom:' is not a block list of entries; add the entry by hand"),
        (b"- a\n", "{path} is not an op_plugin_functions.yaml: the top level is not a mapping"),
        (b"custom: [{func: b(Tensor x) -> Tensor}]\n", "{path}: 'custom:' is not a block list of entries; add the entry by hand"),
        (b"custom: 3\n", "{path}: 'custom:' is not a block list of entries; add the entry by hand"),
        (b"custom: '~'\n", "{path}: 'custom:' is not a block list of entries; add the entry by hand"),
        (b"custom: ''\n", "{path}: 'custom:' is not a block list of entries; add the entry by hand"),
        (b"custom: !!str ~\n", "{path}: 'custom:' is not a block list of entries; add the entry by hand"),
        (
            b"custom:\n  - func: b(Tensor x) -> Tensor\n    note: |+\n      text\n",
            "{path}: opkit cannot make this edit in this layout without changing the rest of the document; nothing was written (edit it by hand, and please report the file)",
        ),
        (b"custom: " + b"[" * 1000 + b"]" * 1000 + b"\n", "{path}: nested more than 500 levels deep"),
        (b"\x00\x01", "{path}: binary file (contains NUL bytes)"),
        (b"custom: caf\xe9\n", "{path}: not UTF-8 (byte 0xe9 at offset 11)"),
        (b"custom: []\n# caf\xe9\n", "{path}:2: not UTF-8 (byte 0xe9 at offset 16)"),
        (b"custom: [\n", "{path}:2:1: not valid YAML: did not find expected node content"),
        (
            b"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
            b"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
            b"g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\ncustom: []\n",
            "{path}: aliases expand to more than 1,000,000 nodes",
        ),
    ],
)
def test_refusals_name_the_file_and_the_place(tmp_path, original, message):
    with pytest.raises(YamlEditError) as err:
        _plan(tmp_path, original)
    assert str(err.value) == message.format(path=tmp_path / "op_plugin_functions.yaml")


def test_a_missing_file():
    with pytest.raises(YamlEditError, match=r"^/nonexistent/x\.yaml: cannot read: No such file or directory$"):
        plan_add("/nonexistent/x.yaml", ENTRY)


@pytest.mark.parametrize(
    "fragment, message",
    [
        (b"custom: []\n", "{path} is not an opkit fragment: expected 'custom:' holding exactly one entry"),
        (b"custom:\n  - a\n", "{path} is not an opkit fragment: expected 'custom:' holding exactly one entry"),
        (b"- 1\n", "{path} is not an opkit fragment: expected 'custom:' holding exactly one entry"),
        (b"other: []\n", "{path} is not an opkit fragment: expected 'custom:' holding exactly one entry"),
        (b"custom:\n  - func: a(Tensor x) -> Tensor\n  - func: b(Tensor x) -> Tensor\n", "{path} is not an opkit fragment: expected 'custom:' holding exactly one entry"),
        (b"custom:\n  - func: my_op(Tensor x\n", "{path}: func does not parse: unbalanced '(' in the argument list [op-plugin schema, column 6]"),
        (b"custom:\n  - func: 3\n", "{path}: func: 3 is not of type 'string'"),
        (b"custom:\n  - func: a(Tensor x) -> Tensor\n    bogus: 1\n", "{path}: (top level): Additional properties are not allowed ('bogus' was unexpected)"),
        (b"custom: [\n", "{path}:2:1: not valid YAML: did not find expected node content"),
    ],
)
def test_bad_fragments(tmp_path, fragment, message):
    path = tmp_path / "fragment.yaml"
    path.write_bytes(fragment)
    with pytest.raises(YamlEditError) as err:
        load_fragment(path)
    assert str(err.value) == message.format(path=path)


def test_a_fragment_is_read_from_a_project_or_a_file(tmp_path):
    (tmp_path / "op_plugin").mkdir()
    path = tmp_path / "op_plugin" / "op_plugin_functions.yaml"
    path.write_bytes(b"custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n")
    assert load_fragment(tmp_path) == ENTRY
    assert load_fragment(str(path)) == ENTRY


def test_check_entry_names_where():
    check_entry(ENTRY, where="W")
    with pytest.raises(YamlEditError, match=r"^W: func does not parse: "):
        check_entry({"func": "my_op(Tensor x"}, where="W")
    with pytest.raises(YamlEditError, match=r"^W: \(top level\): 'func' is a required property$"):
        check_entry({}, where="W")


def test_add_entry_writes_keeping_the_mode_and_check_writes_nothing(tmp_path):
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_bytes(b"custom: ~\n")
    os.chmod(path, 0o640)
    edit = add_entry(path, ENTRY, write=False)
    assert edit.status == "added" and edit.new_bytes == b"custom:\n" + ADDED
    assert path.read_bytes() == b"custom: ~\n"
    edit = add_entry(path, ENTRY)
    assert path.read_bytes() == b"custom:\n" + ADDED == edit.new_bytes
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    again = add_entry(str(path), ENTRY)
    assert (again.status, again.line) == ("present", 2)
    assert path.read_bytes() == b"custom:\n" + ADDED


def test_add_entry_refuses_what_it_cannot_write(tmp_path):
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_bytes(b"custom: ~\n")
    os.chmod(path, 0o444)
    with pytest.raises(YamlEditError) as err:
        add_entry(path, ENTRY)
    assert str(err.value) == f"{path} is read-only; make it writable (chmod u+w) to add the entry"
    assert path.read_bytes() == b"custom: ~\n"
    with pytest.raises(YamlEditError) as err:
        add_entry(tmp_path, ENTRY)
    assert str(err.value) == f"{tmp_path} is not a regular file (a directory)"


def test_line_helpers():
    assert _lines("a\nb\r\nc\rd\x85e\u2028f\u2029g") == ["a\n", "b\r\n", "c\r", "d\x85", "e\u2028", "f\u2029", "g"]
    assert _lines("") == []
    assert _newline("a\r\nb\rc\r") == "\r"
    assert _newline("a\r\nb\r\nc\n") == "\r\n"
    assert _newline("a\nb\r\nc\n") == "\n"
    assert _newline("a") == "\n"
    assert _op_name(" my_op . ov (Tensor x) -> Tensor") == "my_op.ov"
    assert _op_name("my_op(Tensor x)") == "my_op"
