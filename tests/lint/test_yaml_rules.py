"""op_plugin_functions.yaml rules (Y): each fires on a small yaml and stays silent on its fixed twin."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from opkit.lint import RULES, Selection, Severity, lint, load_rules

HEADER = """\
all_version: [v2.1, v2.2, v2.3, v2.10]
official: []
autograd: []
symint: []
quant: []
"""


def findings(tmp_path: Path, text: str, code: str, *, name: str = "op_plugin_functions.yaml"):
    """Findings of rule ``code`` on ``text`` (dedented), written to a file."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    result = lint([str(path)], selection=Selection(select=(code,)))
    assert not result.has_fatal, result.findings
    return [f for f in result.findings if f.code == code]


def full(custom: str) -> str:
    """A whole file (all_version and every section) whose custom: section is ``custom``."""
    return HEADER + "custom:\n" + textwrap.indent(textwrap.dedent(custom), "  ")


def seen(tmp_path: Path, text: str, *codes: str) -> list[tuple]:
    """What a user reads of rules ``codes`` on ``text`` (not dedented): code, line, column, message, hint and op."""
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text(text)
    result = lint([str(path)], selection=Selection(select=codes), use_cache=False)
    assert not result.has_fatal, result.findings
    return [(f.code, f.line, f.column, f.message, f.hint, f.op) for f in result.findings if f.code in codes]


def only(found, line: int, *needles: str):
    assert len(found) == 1, found
    f = found[0]
    assert f.line == line, f
    for needle in needles:
        assert needle in f.message, f.message
    return f


# -- Y001 missing-section ---------------------------------------------------------------------------


def test_y001_missing_sections_reported(tmp_path):
    found = findings(tmp_path, "all_version: [v2.1]\nofficial: []\ncustom: []\n", "Y001")
    only(found, 1, "autograd", "symint", "quant")


def test_y001_null_section_reported_at_its_key(tmp_path):
    text = HEADER.replace("quant: []", "quant:") + "custom: []\n"
    f = only(findings(tmp_path, text, "Y001"), 5, "'quant' is empty")
    assert f.column == 1 and f.severity is Severity.ERROR


def test_y001_all_version_not_a_list(tmp_path):
    text = HEADER.replace("all_version: [v2.1, v2.2, v2.3, v2.10]", "all_version: v2.1") + "custom: []\n"
    only(findings(tmp_path, text, "Y001"), 1, "all_version must be")


def test_y001_complete_file_and_fragment_are_clean(tmp_path):
    assert findings(tmp_path, HEADER + "custom: []\n", "Y001") == []
    # a fragment (no all_version), as `opkit new` writes: only custom:, not a whole config
    assert findings(tmp_path, "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n", "Y001") == []


@pytest.mark.parametrize("versions", ["[]", "[v2.1, 2]", "[v2.1, [v2.2]]"])
def test_y001_all_version_empty_or_not_all_strings(tmp_path, versions):
    # all_version on line 2, so the finding's own position is not the file-level default (line 1, column 1)
    text = f"official: []\nall_version: {versions}\nautograd: []\nsymint: []\nquant: []\ncustom: []\n"
    assert seen(tmp_path, text, "Y001") == [
        ("Y001", 2, 14, "all_version must be a non-empty list of version strings such as [v2.1, v2.2]", None, None),
    ]


def test_y001_null_section_in_a_flow_mapping_is_reported_at_its_key(tmp_path):
    text = "{all_version: [v2.1], official: [], autograd: [], symint: [], custom: [], quant: }\n"
    assert seen(tmp_path, text, "Y001") == [
        ("Y001", 1, 75, "section 'quant' is empty (null): the codegen cannot iterate it", "write quant: []", None),
    ]


# -- Y002 unknown-entry-field -----------------------------------------------------------------------


def test_y002_unknown_field_with_suggestion(tmp_path):
    text = full(
        """\
        - func: my_op(Tensor x) -> Tensor
          op_apl: all_version
        """
    )
    f = only(findings(tmp_path, text, "Y002"), 8, "'op_apl'")
    assert f.column == 5 and f.hint == "did you mean 'op_api'?" and f.op == "my_op"


def test_y002_every_known_field_is_accepted(tmp_path):
    text = full(
        """\
        - func: my_op(Tensor x) -> Tensor
          op_api: all_version
          acl_op: all_version
          exposed: all_version
          internal_format_opapi: all_version
          dvm: all_version
          sparse: all_version
          device_check: NoCheck
          tags: nondeterministic_seeded
          dispatch: {CompositeExplicitAutograd: my_op}
          structured: false
          structured_delegate: my_op.out
          use_const_ref_for_mutable_tensors: true
          gen_opapi: {out: {size: x, dtype: x}, exec: aclnnMyOp}
        """
    )
    assert findings(tmp_path, text, "Y002") == []


def test_y002_unknown_field_like_no_known_one_has_no_hint(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  zzz: 1\n")
    assert seen(tmp_path, text, "Y002") == [("Y002", 9, 5, "unknown entry field 'zzz' is ignored by the codegen", None, "my_op")]


# -- Y003 missing-func ------------------------------------------------------------------------------


def test_y003_entry_without_func(tmp_path):
    f = only(findings(tmp_path, full("- op_api: all_version\n"), "Y003"), 7, "entry 0 of 'custom' has no 'func'")
    assert f.column == 5


def test_y003_func_not_a_string(tmp_path):
    only(findings(tmp_path, full("- func: [my_op]\n  op_api: all_version\n"), "Y003"), 7, "func is a sequence")
    only(findings(tmp_path, full("- func:\n  op_api: all_version\n"), "Y003"), 7, "func is empty")


def test_y003_string_func_is_clean(tmp_path):
    assert findings(tmp_path, full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n"), "Y003") == []


# -- Y004 duplicate-key -----------------------------------------------------------------------------


def test_y004_duplicate_key_in_entry(tmp_path):
    text = full(
        """\
        - func: my_op(Tensor x) -> Tensor
          op_api: all_version
          op_api: [v2.2, newest]
        """
    )
    only(findings(tmp_path, text, "Y004"), 9, "'op_api' is written twice (first at line 8)")


def test_y004_duplicate_key_nested_and_top_level(tmp_path):
    text = full(
        """\
        - func: my_op(Tensor x) -> Tensor
          op_api: all_version
          gen_opapi:
            out: {size: x, dtype: x}
            exec: aclnnMyOp
            exec: aclnnMyOpV2
        """
    )
    only(findings(tmp_path, text, "Y004"), 12, "key 'exec' is written twice (first at line 11)")
    # a second custom: replaces the whole first one, entries and all
    only(findings(tmp_path, text + "custom: []\n", "Y004"), 13, "top-level key 'custom' is written twice (first at line 6)")


def test_y004_distinct_keys_are_clean(tmp_path):
    assert findings(tmp_path, full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  acl_op: all_version\n"), "Y004") == []


def test_y004_top_level_duplicate_in_a_flow_mapping_is_reported_at_its_key(tmp_path):
    text = "{custom: [], custom: []}\n"
    assert seen(tmp_path, text, "Y004") == [
        ("Y004", 1, 14, "top-level key 'custom' is written twice (first at line 1); the first is discarded", None, None),
    ]


def test_y004_duplicate_key_in_a_mapping_inside_a_list(tmp_path):
    # yaml.safe_load drops the first 'param' of the cpu_scalar_op item as it does anywhere else
    text = full(
        """\
        - func: my_op(Tensor x, Scalar other) -> Tensor
          op_api: all_version
          gen_opapi:
            out: {size: x, dtype: x}
            cpu_scalar_op:
              - param: other
                param: x
            exec: aclnnMyOp
        """
    )
    assert seen(tmp_path, text, "Y004") == [
        ("Y004", 13, 11, "key 'param' is written twice (first at line 12); only the last value is used", None, "my_op"),
    ]


# -- Y005 unknown-version ---------------------------------------------------------------------------


def test_y005_version_not_in_all_version(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: v9.9\n  acl_op: [v2.2, v2.4]\n  dvm: 'v2.1, v2.5'\n")
    found = findings(tmp_path, text, "Y005")
    assert [(f.line, f.column) for f in found] == [(8, 13), (9, 20), (10, 17)]
    assert "'v9.9' is not in all_version" in found[0].message and found[0].op == "my_op"
    assert "acl_op" in found[1].message and "'v2.5'" in found[2].message


def test_y005_suggests_a_version_only_for_a_misspelling(tmp_path):
    # all_version [v2.1, v2.2, v2.3, v2.10]: v2.9 is well formed, a version the file does not build; no neighbour
    # is what was meant (a spelling match picked v2.3). v2.2O is a misspelt v2.2.
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: v2.9\n  acl_op: v2.2O\n")
    assert seen(tmp_path, text, "Y005") == [
        ("Y005", 8, 13, "op_api: version 'v2.9' is not in all_version", "add it to all_version or fix the spelling", "my_op"),
        ("Y005", 9, 13, "acl_op: version 'v2.2O' is not in all_version", "did you mean 'v2.2'?", "my_op"),
    ]


def test_y005_known_versions_newest_and_fragments_are_clean(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: [v2.2, newest]\n  acl_op: 'v2.1, v2.10'\n  dvm: v2.3\n")
    assert findings(tmp_path, text, "Y005") == []
    # without all_version there is nothing to check membership against
    assert findings(tmp_path, "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: v9.9\n", "Y005") == []


def test_y005_suppressed_by_noqa_on_its_line(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: v9.9  # noqa: Y005\n  acl_op: v9.8\n")
    found = findings(tmp_path, text, "Y005")
    only(found, 9, "'v9.8'")
    # a noqa for another code does not hide it
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: v9.9  # noqa: Y006\n")
    only(findings(tmp_path, text, "Y005"), 8, "'v9.9'")


# -- Y006 malformed-version-spec --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("'v2.1,v2.2'", "must separate versions with ', '"),
        ("'v2.1, v2.2,v2.3'", "must separate versions with ', '"),
        ("[v2.1, v2.2, v2.3]", "found 3: the codegen reads only [v2.1, v2.2]"),
        ("[v2.1]", "needs [start, end], found 1"),
        ("2.1", "2.1 is not a version spec"),
        ("{v2.1: yes}", "is not a version spec"),
        ("[v2.1, 3]", "range item 3 is not a version string"),
        ("", "nothing is not a version spec"),
        ("false", "is a bool"),
    ],
)
def test_y006_malformed_specs(tmp_path, spec, needle):
    text = full(f"- func: my_op(Tensor x) -> Tensor\n  op_api: {spec}\n")
    f = only(findings(tmp_path, text, "Y006"), 8, needle)
    assert f.message.startswith("op_api: ")


@pytest.mark.parametrize("spec", ["all_version", "[v2.1, newest]", "v2.2", "'v2.1, v2.2, v2.3'", "[v2.1, v2.3]"])
def test_y006_valid_specs_are_clean(tmp_path, spec):
    assert findings(tmp_path, full(f"- func: my_op(Tensor x) -> Tensor\n  op_api: {spec}\n"), "Y006") == []


# -- Y007 empty-version-range -----------------------------------------------------------------------


def test_y007_end_before_start(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: [v2.10, v2.2]\n")
    f = only(findings(tmp_path, text, "Y007"), 8, "[v2.10, v2.2] ends before it starts")
    assert f.column == 21 and f.hint == "write [v2.2, v2.10]"


def test_y007_fragment_uses_version_numbers(tmp_path):
    # no all_version: v2.10 is still later than v2.9 (numbers, not strings)
    found = findings(tmp_path, "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: [v2.10, v2.9]\n", "Y007")
    only(found, 3, "ends before it starts")
    assert findings(tmp_path, "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: [v2.9, v2.10]\n", "Y007") == []


def test_y007_ordered_and_newest_ranges_are_clean(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: [v2.2, v2.10]\n  acl_op: [v2.10, newest]\n  dvm: [v2.2, v2.2]\n")
    assert findings(tmp_path, text, "Y007") == []


# -- Y008 gen-opapi-without-op-api ------------------------------------------------------------------


def test_y008_gen_opapi_without_op_api(tmp_path):
    text = full(
        """\
        - func: my_op(Tensor x) -> Tensor
          acl_op: all_version
          gen_opapi:
            out: {size: x, dtype: x}
            exec: aclnnMyOp
        """
    )
    f = only(findings(tmp_path, text, "Y008"), 9, "gen_opapi without op_api")
    assert f.column == 5


def test_y008_with_op_api_is_clean(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  gen_opapi: {out: {size: x, dtype: x}, exec: aclnnMyOp}\n")
    assert findings(tmp_path, text, "Y008") == []


# -- Y009 duplicate-func ----------------------------------------------------------------------------


def test_y009_overlapping_declarations(tmp_path):
    text = full(
        """\
        - func: my_op(Tensor x) -> Tensor
          op_api: [v2.1, v2.3]
        - func: my_op(Tensor x) -> Tensor
          acl_op: [v2.3, newest]
        """
    )
    f = only(findings(tmp_path, text, "Y009"), 9, "'my_op' is already declared in 'custom' at line 7", "(v2.3)")
    assert f.op == "my_op"


def test_y009_fragment_duplicates_overlap_on_all_version(tmp_path):
    text = "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n  - func: my_op(Tensor x) -> Tensor\n    acl_op: all_version\n"
    only(findings(tmp_path, text, "Y009"), 4, "'my_op' is already declared in 'custom' at line 2")


def test_y009_a_malformed_version_spec_shared_by_both_is_reported_not_a_crash(tmp_path):
    # found by test_robustness: the overlap holds a name outside the file's versions
    text = "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: my_op(Tensor x) -> Tensor\n  - func: my_op(Tensor x) -> Tensor\n    op_api: my_op(Tensor x) -> Tensor\n"
    only(findings(tmp_path, text, "Y009"), 4, "'my_op' is already declared in 'custom' at line 2", "(my_op(Tensor x) -> Tensor)")


def test_y009_disjoint_versions_or_sections_are_clean(tmp_path):
    # the real file splits _conv_depthwise2d.out this way
    text = full(
        """\
        - func: my_op(Tensor x) -> Tensor
          op_api: [v2.1, v2.2]
        - func: my_op(Tensor x) -> Tensor
          op_api: [v2.3, newest]
        """
    )
    assert findings(tmp_path, text, "Y009") == []
    text = HEADER.replace("symint: []", "symint:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version") + "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n"
    assert findings(tmp_path, text, "Y009") == []


def test_y009_every_duplicate_after_an_entry_without_func_with_the_versions_in_order(tmp_path):
    text = full(
        """\
        - op_api: all_version
        - func: my_op(Tensor x) -> Tensor
          op_api: all_version
        - func: my_op(Tensor x) -> Tensor
          acl_op: [v2.2, newest]
        - func: other(Tensor x) -> Tensor
          op_api: v2.1
        - func: other(Tensor x) -> Tensor
          op_api: 'v2.1, v2.3'
        """
    )
    hint = "merge the entries, or give them disjoint version ranges"
    # v2.2, v2.3, v2.10: all_version's order (a string sort would put v2.10 first)
    assert seen(tmp_path, text, "Y009") == [
        ("Y009", 10, 5, "'my_op' is already declared in 'custom' at line 8 for the same versions (v2.2, v2.3, v2.10)", hint, "my_op"),
        ("Y009", 14, 5, "'other' is already declared in 'custom' at line 12 for the same versions (v2.1)", hint, "other"),
    ]


# -- Y010 exposed-not-version -----------------------------------------------------------------------


def test_y010_exposed_true(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  exposed: true\n")
    f = only(findings(tmp_path, text, "Y010"), 9, "exposed: true is a bool")
    assert f.column == 14 and "all_version" in f.hint
    # and it is not reported a second time as a malformed spec
    assert findings(tmp_path, text, "Y006") == []


def test_y010_exposed_versions_are_clean(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  exposed: [v2.2, newest]\n")
    assert findings(tmp_path, text, "Y010") == []


# -- Y011 invalid-device-check ----------------------------------------------------------------------


def test_y011_invalid_device_check(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  device_check: NoChecks\n")
    f = only(findings(tmp_path, text, "Y011"), 9, "'NoChecks' is not one of NoCheck, ExactSame")
    assert f.hint == "did you mean 'NoCheck'?"


@pytest.mark.parametrize("value", ["NoCheck", "ExactSame"])
def test_y011_valid_device_check(tmp_path, value):
    assert findings(tmp_path, full(f"- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  device_check: {value}\n"), "Y011") == []


def test_y011_value_like_neither_check_has_no_hint(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  device_check: 5\n")
    assert seen(tmp_path, text, "Y011") == [("Y011", 9, 19, "device_check 5 is not one of NoCheck, ExactSame", None, "my_op")]


# -- Y012 gen-opapi-ignored-section -----------------------------------------------------------------


def test_y012_gen_opapi_outside_official_and_custom(tmp_path):
    text = HEADER.replace("symint: []", "symint:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n    gen_opapi: {exec: aclnnMyOp}") + "custom: []\n"
    f = only(findings(tmp_path, text, "Y012"), 7, "under 'symint' is never read")
    assert f.severity is Severity.WARNING


def test_y012_custom_gen_opapi_is_clean(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  gen_opapi: {out: {size: x, dtype: x}, exec: aclnnMyOp}\n")
    assert findings(tmp_path, text, "Y012") == []


# -- Y101 gen-opapi-outputs -------------------------------------------------------------------------


# an in-place op delegating to its out variant's gen_opapi (dedented: an argument of full())
IN_PLACE_DELEGATES = textwrap.dedent(
    """\
        - func: my_op_(Tensor(a!) self) -> Tensor(a!)
          op_api: all_version
          gen_opapi:
            structured_inherit: my_op.out
        - func: my_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          op_api: all_version
          gen_opapi:
            exec: aclnnMyOp
    """
)


def gen(func: str, block: str) -> str:
    """A whole file with one custom entry ``func`` whose gen_opapi is ``block`` (starting at line 10)."""
    return full(f"- func: {func}\n  op_api: all_version\n  gen_opapi:\n" + textwrap.indent(textwrap.dedent(block), "    "))


def test_y101_functional_result_count(tmp_path):
    text = gen("my_op(Tensor x) -> (Tensor, Tensor)", "out:\n  size: x\n  dtype: x\nexec: aclnnMyOp\n")
    f = only(findings(tmp_path, text, "Y101"), 9, "1 result key(s) (out) for 2 returned Tensor(s)")
    assert "out0, out1" in f.hint


def test_y101_functional_result_needs_size_and_dtype(tmp_path):
    text = gen("my_op(Tensor x) -> Tensor", "out:\n  size: x\nexec: aclnnMyOp\n")
    only(findings(tmp_path, text, "Y101"), 10, "result 'out' has no dtype")


def test_y101_out_variant_key_must_be_out_argument(tmp_path):
    text = gen("my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", "result:\n  size: x\nexec: aclnnMyOp\n")
    only(findings(tmp_path, text, "Y101"), 10, "'result' is not an out argument of my_op.out (out)")


def test_y101_unknown_result_field(tmp_path):
    text = gen("my_op(Tensor x) -> Tensor", "out:\n  size: x\n  dtype: x\n  sizes: x\nexec: aclnnMyOp\n")
    only(findings(tmp_path, text, "Y101"), 13, "unknown field 'sizes'")


def test_y101_valid_results_are_clean(tmp_path):
    cases = [
        ("my_op(Tensor x) -> (Tensor, Tensor)", "out0: {size: x, dtype: x}\nout1: {size: x, dtype: at::kFloat}\nexec: aclnnMyOp\n"),
        # an out variant's size/dtype default to the argument
        ("my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", "out:\n  size: x\nexec: aclnnMyOp\n"),
        ("my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", "exec: aclnnMyOp\n"),
        # in-place: nothing allocated; the real file's logical_and_ only propagates names
        ("my_op_(Tensor(a!) self, Tensor other) -> Tensor(a!)", "self:\n  name: self, other\nexec: aclnnInplaceMyOp\n"),
        ("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x, name: x}\ncpu_scalar_h2d: [x]\nexec: aclnnMyOp\n"),
    ]
    for func, block in cases:
        assert findings(tmp_path, gen(func, block), "Y101") == [], func


def test_y101_checks_an_inherited_block_against_the_inheritor(tmp_path):
    # the functional my_op uses my_op.out's block, whose result has no dtype (fine for out, not for my_op);
    # what is wrong in it is reported at my_op's structured_inherit, not in the other entry's block
    text = full(
        """\
        - func: my_op(Tensor x) -> Tensor
          op_api: all_version
          gen_opapi:
            structured_inherit: my_op.out
        - func: my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
          op_api: all_version
          gen_opapi:
            out:
              size: x
              shape: x
            exec: aclnnMyOp
        """
    )
    unknown = "result 'out' has unknown field 'shape' (expected size, dtype, name)"
    no_dtype = "result 'out' has no dtype: an allocated result needs both (only out and in-place results default to the argument)"
    assert seen(tmp_path, text, "Y101") == [
        ("Y101", 10, 27, no_dtype + " (inherited from my_op.out)", None, "my_op"),
        ("Y101", 10, 27, unknown + " (inherited from my_op.out)", None, "my_op"),
        ("Y101", 16, 9, unknown, None, "my_op.out"),
    ]


def test_y101_out_variant_names_every_out_argument(tmp_path):
    # exec first: the finding is at the result's own key, not at the block's first key
    func = "my_op.out(Tensor x, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))"
    assert seen(tmp_path, gen(func, "exec: aclnnMyOp\nresult: {size: x}\n"), "Y101") == [
        ("Y101", 11, 7, "'result' is not an out argument of my_op.out (values, indices)", None, "my_op.out"),
    ]


def test_y101_tensor_list_return_cannot_be_allocated(tmp_path):
    assert seen(tmp_path, gen("my_op(Tensor x) -> Tensor[]", "out: {size: x, dtype: x}\nexec: aclnnMyOp\n"), "Y101") == [
        ("Y101", 9, 5, "my_op returns Tensor[] or Tensor?, which gen_opapi cannot allocate", None, "my_op"),
    ]


@pytest.mark.parametrize(
    ("block", "shown"),
    [("exec: aclnnMyOp\n", "0 result key(s) (none)"), ("out0: {size: x, dtype: x}\nout1: {size: x, dtype: x}\nexec: aclnnMyOp\n", "2 result key(s) (out0, out1)")],
)
def test_y101_result_count_names_the_keys_or_none(tmp_path, block, shown):
    assert seen(tmp_path, gen("my_op(Tensor x) -> Tensor", block), "Y101") == [
        ("Y101", 9, 5, f"{shown} for 1 returned Tensor(s)", "one key per returned tensor, e.g. out", "my_op"),
    ]


def test_y101_each_result_is_judged_after_one_that_is_not_a_mapping(tmp_path):
    block = "out0: x\nout1:\n  name: x\nexec: aclnnMyOp\n"
    assert seen(tmp_path, gen("my_op(Tensor x) -> (Tensor, Tensor)", block), "Y101") == [
        ("Y101", 10, 7, "result 'out0' must map size/dtype, found 'x'", None, "my_op"),
        ("Y101", 11, 7, "result 'out1' has no size and no dtype: an allocated result needs both (only out and in-place results default to the argument)", None, "my_op"),
    ]


def test_y101_judges_each_entry_after_one_without_gen_opapi_or_inheriting_in_place(tmp_path):
    # in-place my_op_ delegates to the out kernel: its own block is not judged, the next entry's is
    other = """\
        - func: other(Tensor x) -> Tensor
          op_api: all_version
          gen_opapi:
            out: {size: x}
            exec: aclnnOther
        """
    text = full("- func: plain(Tensor x) -> Tensor\n  op_api: all_version\n" + IN_PLACE_DELEGATES + textwrap.dedent(other))
    assert seen(tmp_path, text, "Y101") == [
        ("Y101", 20, 7, "result 'out' has no dtype: an allocated result needs both (only out and in-place results default to the argument)", None, "other"),
    ]


def test_y_rules_leave_a_func_op_plugin_cannot_parse_to_the_s_rules(tmp_path):
    # torch.library would take the spaces in the default; op-plugin's codegen (torchgen) does not
    text = gen("my_op(Tensor x, int[2] pads=[1, 1]) -> Tensor", "out: {size: x}\nexec: aclnnMyOp\n")
    assert seen(tmp_path, text, "Y101", "Y102", "Y103", "Y104", "Y106") == []
    assert [f[0] for f in seen(tmp_path, text, "S001")] == ["S001"]


# -- Y102 gen-opapi-unknown-reference ---------------------------------------------------------------


def test_y102_bare_name_out_of_scope(tmp_path):
    text = gen("my_op(Tensor x) -> Tensor", "out:\n  size: y\n  dtype: x\nexec: aclnnMyOp\n")
    f = only(findings(tmp_path, text, "Y102"), 11, "out.size 'y' is neither an argument of my_op nor a new_params name")
    assert f.column == 15


def test_y102_arguments_new_params_and_expressions_are_clean(tmp_path):
    block = """\
        new_params:
          n: x.size(0)
        out:
          size: n
          dtype: 'half ? at::kFloat : x.scalar_type()'
          name: x
        exec: aclnnMyOp
        """
    assert findings(tmp_path, gen("my_op(Tensor x, bool half) -> Tensor", block), "Y102") == []
    block = "out:\n  size: op_infer::size(x, dim)\n  dtype: at::kBool\nexec: aclnnMyOp\n"
    assert findings(tmp_path, gen("my_op(Tensor x, int dim) -> Tensor", block), "Y102") == []


def test_y102_non_string_value_at_the_value(tmp_path):
    assert seen(tmp_path, gen("my_op(Tensor x) -> Tensor", "out: {size: 5, dtype: x}\nexec: aclnnMyOp\n"), "Y102") == [
        ("Y102", 10, 19, "out.size is 5, not a name or C++ expression", None, "my_op"),
    ]


def test_y102_each_field_and_result_after_an_absent_field_or_a_non_mapping(tmp_path):
    block = "out0: x\nout1: {dtype: y}\nexec: aclnnMyOp\n"
    assert seen(tmp_path, gen("my_op(Tensor x) -> (Tensor, Tensor)", block), "Y102") == [
        ("Y102", 11, 21, "out1.dtype 'y' is neither an argument of my_op nor a new_params name", "arguments: x", "my_op"),
    ]


# -- Y103 gen-opapi-exec-argument -------------------------------------------------------------------


def test_y103_unknown_exec_argument(tmp_path):
    text = gen("my_op(Tensor x, float alpha) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnMyOp, x, beta, out\n")
    f = only(findings(tmp_path, text, "Y103"), 11, "exec passes 'beta'")
    assert "alpha" in f.hint


def test_y103_arguments_new_params_results_are_clean(tmp_path):
    block = "new_params:\n  a: static_cast<float>(alpha)\nout: {size: x, dtype: x}\nexec: aclnnMyOp, x, a, out\n"
    assert findings(tmp_path, gen("my_op(Tensor x, float alpha) -> Tensor", block), "Y103") == []
    block = "exec: aclnnMyOp, x, out\n"
    assert findings(tmp_path, gen("my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", block), "Y103") == []


def test_y103_the_first_argument_and_an_empty_one(tmp_path):
    valid = "valid: out, x; define expressions under new_params"
    assert seen(tmp_path, gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnMyOp, beta\n"), "Y103") == [
        ("Y103", 11, 13, "exec passes 'beta', which is not an argument, a new_params name or a result", valid, "my_op"),
    ]
    assert seen(tmp_path, gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnMyOp, x, , out\n"), "Y103") == [
        ("Y103", 11, 13, "exec passes an empty argument, which is not an argument, a new_params name or a result", valid, "my_op"),
    ]


# -- Y104 gen-opapi-missing-exec --------------------------------------------------------------------


def test_y104_missing_exec(tmp_path):
    text = gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\n")
    f = only(findings(tmp_path, text, "Y104"), 9, "gen_opapi has no exec")
    assert f.hint == "add exec: aclnnMyOp"


def test_y104_non_string_exec(tmp_path):
    text = gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: [aclnnMyOp, x]\n")
    only(findings(tmp_path, text, "Y104"), 11, "exec must be a string")


def test_y104_gen_opapi_not_a_mapping(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  gen_opapi: aclnnMyOp\n")
    only(findings(tmp_path, text, "Y104"), 9, "gen_opapi must be a mapping")


def test_y104_exec_or_inherit_is_clean(tmp_path):
    assert findings(tmp_path, gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnMyOp\n"), "Y104") == []
    assert findings(tmp_path, full(IN_PLACE_DELEGATES), "Y104") == []


def test_y104_findings_name_their_op(tmp_path):
    assert seen(tmp_path, full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  gen_opapi: aclnnMyOp\n"), "Y104") == [
        ("Y104", 9, 16, "gen_opapi must be a mapping with exec (and results), found 'aclnnMyOp'", None, "my_op"),
    ]
    assert seen(tmp_path, gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: 5\n"), "Y104") == [
        ("Y104", 11, 13, "exec must be a string 'aclnnName[, arg, ...]', found 5", None, "my_op"),
    ]


# -- Y105 gen-opapi-bad-inherit ---------------------------------------------------------------------


def inherit(target_func: str, target_block: str = "exec: aclnnMyOp") -> str:
    return full(
        f"""\
        - func: my_op(Tensor self) -> Tensor
          op_api: all_version
          gen_opapi:
            structured_inherit: my_op.out
        - func: {target_func}
          op_api: all_version
          gen_opapi: {{{target_block}}}
        """
    )


def test_y105_missing_target(tmp_path):
    f = only(findings(tmp_path, inherit("my_op.outt(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"), "Y105"), 10, "'my_op.out' names no official/custom entry")
    assert f.column == 27


def test_y105_target_not_an_out_variant(tmp_path):
    only(findings(tmp_path, inherit("my_op.out(Tensor self) -> Tensor", "out: {size: self, dtype: self}, exec: aclnnMyOp"), "Y105"), 10, "is not an out variant (functional)")


def test_y105_valid_target_is_clean(tmp_path):
    assert findings(tmp_path, inherit("my_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "out: {size: self, dtype: self}, exec: aclnnMyOp"), "Y105") == []


def test_y105_target_that_inherits_in_turn(tmp_path):
    # my_op -> my_op.out -> my_op.out2: the codegen reads only the direct target's block, which has no exec
    text = inherit("my_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "structured_inherit: my_op.out2")
    text += "  - func: my_op.out2(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n    op_api: all_version\n    gen_opapi: {exec: aclnnMyOp}\n"
    assert seen(tmp_path, text, "Y101", "Y104", "Y105") == [
        ("Y105", 10, 27, "structured_inherit 'my_op.out' inherits in turn; point at the out variant itself", None, "my_op"),
    ]


def test_y105_target_block_not_a_mapping(tmp_path):
    text = inherit("my_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)").replace("gen_opapi: {exec: aclnnMyOp}", "gen_opapi: aclnnMyOp")
    assert seen(tmp_path, text, "Y101", "Y102", "Y103", "Y104", "Y105", "Y106") == [
        ("Y104", 13, 16, "gen_opapi must be a mapping with exec (and results), found 'aclnnMyOp'", None, "my_op.out"),
    ]


# -- Y106 aclnn-name-convention ---------------------------------------------------------------------


def test_y106_unconventional_aclnn_name_is_a_note(tmp_path):
    text = gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnMyOperator, x, out\n")
    f = only(findings(tmp_path, text, "Y106"), 11, "'aclnnMyOperator'", "'aclnnMyOp'")
    assert f.severity is Severity.INFO


def test_y106_conventional_name_is_clean(tmp_path):
    # the base name drops an in-place '_': my_op_ → aclnnMyOp
    assert findings(tmp_path, gen("my_op_(Tensor(a!) self) -> Tensor(a!)", "exec: aclnnMyOp\n"), "Y106") == []


@pytest.mark.parametrize(
    ("func", "block"),
    [
        # the real file's variations of CANN's naming (op_plugin_functions.yaml; spec: real-file conventions)
        ("npu_add_rms_norm(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnAddRmsNorm\n"),
        ("npu_moe_token_permute_grad_v2(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnMoeTokenPermuteGrad\n"),
        ("npu_swiglu_backward(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnSwiGluGrad\n"),
        ("gelu(Tensor self) -> Tensor", "out: {size: self, dtype: self}\nexec: aclnnGeluV2\n"),
        ("acos_(Tensor(a!) self) -> Tensor(a!)", "exec: aclnnInplaceAcos\n"),
        ("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", "out: {size: self, dtype: self}\nexec: aclnnPowTensorScalar\n"),
    ],
)
def test_y106_real_naming_variations_are_clean(tmp_path, func, block):
    assert findings(tmp_path, gen(func, block), "Y106") == []


def test_y106_exec_without_the_aclnn_prefix(tmp_path):
    assert seen(tmp_path, gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: MyOp\n"), "Y106") == [
        ("Y106", 11, 13, "exec calls 'MyOp', which follows no aclnn naming convention for 'my_op' (expected 'aclnnMyOp' or a variant)", None, "my_op"),
    ]


# -- what a user reads: every Y finding's line, column, message and hint on a hand-written file --------

DEFECTS_Y0 = """\
all_version: [v2.1, v2.2, v2.3, v2.10]
official:
  - func: abs(Tensor self) -> Tensor
    op_api: [v2.1, newest]
    gen_opapi:
      out:
        size: self
        dtype: self
      exec: aclnnAbs
  - func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
    op_api: all_version
autograd: []
symint:
  - func: my_op(Tensor x) -> Tensor
    gen_opapi:
      exec: aclnnMyOp
custom:
  - func: my_op(Tensor x) -> Tensor
    op_apl: v2.1
    op_api: v2.1
    op_api: 'v2.1,v2.2'
    acl_op: [v2.3, v2.1]
    exposed: true
    device_check: NoChecks
  - func: my_op(Tensor x) -> Tensor
    op_api: [v9.9, v2.2, v2.3]
    dvm: 'v2.1, v2.9'
  - op_api: all_version
  - func: 7
  - func: my_gen(Tensor x) -> Tensor
    gen_opapi:
      out:
        size: x
        dtype: x
      exec: aclnnMyGen
"""

DEFECTS_Y1 = """\
all_version: [v2.1, v2.2]
official:
  - func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
    op_api: all_version
    gen_opapi:
      out:
        size: self
        dtype: self
      exec: aclnnAbs
  - func: neg(Tensor self) -> Tensor
    op_api: all_version
    gen_opapi:
      out:
        size: self
        dtype: self
      exec: aclnnNeg
autograd: []
symint: []
quant: []
custom:
  - func: my_pair(Tensor x, float alpha) -> (Tensor, Tensor)
    op_api: all_version
    gen_opapi:
      out:
        size: y
        dtype: x
        shape: x
      exec: aclnnMyPair, x, beta, out
  - func: my_two(Tensor x) -> (Tensor y, Tensor rstd)
    op_api: all_version
    gen_opapi:
      y:
        size: x
      z:
        size: x
        dtype: x
      exec: aclnnMyTwoOps
  - func: my_res.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
    op_api: all_version
    gen_opapi:
      res:
        size: x
      exec: aclnnMyRes
  - func: my_none(Tensor x) -> Tensor
    op_api: all_version
    gen_opapi:
      out:
        size: x
        dtype: x
  - func: my_num(Tensor x) -> Tensor
    op_api: all_version
    gen_opapi:
      out:
        size: x
        dtype: x
      exec: 5
  - func: my_flat(Tensor x) -> Tensor
    op_api: all_version
    gen_opapi: aclnnMyFlat
  - func: my_abs(Tensor self) -> Tensor
    op_api: all_version
    gen_opapi:
      structured_inherit: abs.outt
  - func: my_neg(Tensor self) -> Tensor
    op_api: all_version
    gen_opapi:
      structured_inherit: neg
"""


def read_by_user(tmp_path: Path, text: str) -> list[tuple]:
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text(text)
    return [(f.code, f.line, f.column, f.message, f.hint) for f in lint([str(path)], use_cache=False).findings]


def test_every_y0xx_finding_as_the_user_reads_it(tmp_path):
    gen_without_op_api = ("gen_opapi without op_api: the codegen never generates this kernel", "add op_api with the versions the generated kernel serves")
    assert read_by_user(tmp_path, DEFECTS_Y0) == [
        ("Y001", 1, 1, "missing section(s): quant", "add each as an empty list, e.g. quant: []"),
        ("Y008", 15, 5, *gen_without_op_api),
        ("Y012", 15, 5, "gen_opapi under 'symint' is never read by the codegen", None),
        ("Y002", 19, 5, "unknown entry field 'op_apl' is ignored by the codegen", "did you mean 'op_api'?"),
        ("Y004", 21, 5, "key 'op_api' is written twice (first at line 20); only the last value is used", None),
        ("Y006", 21, 14, "op_api: comma list 'v2.1,v2.2' must separate versions with ', ' (comma and one space)", "write e.g. 'v2.6, v2.7', or a range [v2.6, v2.7]"),
        ("Y007", 22, 20, "acl_op: range [v2.3, v2.1] ends before it starts: it selects no version", "write [v2.1, v2.3]"),
        ("Y010", 23, 14, "exposed: true is a bool, not a version spec", "write exposed: all_version, or a version range such as [v2.6, newest]"),
        ("Y011", 24, 19, "device_check 'NoChecks' is not one of NoCheck, ExactSame", "did you mean 'NoCheck'?"),
        ("Y005", 26, 14, "op_api: version 'v9.9' is not in all_version", "add it to all_version or fix the spelling"),
        ("Y006", 26, 26, "op_api: a version range has 2 items, found 3: the codegen reads only [v9.9, v2.2]", "for a set of versions write a comma list string: 'v2.6, v2.8, v2.9'"),
        ("Y005", 27, 17, "dvm: version 'v2.9' is not in all_version", "add it to all_version or fix the spelling"),
        ("Y003", 28, 5, "entry 2 of 'custom' has no 'func'", None),
        ("Y003", 29, 11, "func is 7, not a schema string", None),
        ("Y008", 31, 5, *gen_without_op_api),
    ]  # fmt: skip


def test_every_y1xx_finding_as_the_user_reads_it(tmp_path):
    assert [f for f in read_by_user(tmp_path, DEFECTS_Y1) if f[0].startswith("Y")] == [
        ("Y101", 23, 5, "1 result key(s) (out) for 2 returned Tensor(s)", "one key per returned tensor, e.g. out0, out1"),
        ("Y102", 25, 15, "out.size 'y' is neither an argument of my_pair nor a new_params name", "arguments: x, alpha"),
        ("Y101", 27, 9, "result 'out' has unknown field 'shape' (expected size, dtype, name)", None),
        ("Y103", 28, 13, "exec passes 'beta', which is not an argument, a new_params name or a result", "valid: alpha, out, x; define expressions under new_params"),
        ("Y101", 32, 7, "result 'y' has no dtype: an allocated result needs both (only out and in-place results default to the argument)", None),
        ("Y106", 37, 13, "exec calls 'aclnnMyTwoOps', which follows no aclnn naming convention for 'my_two' (expected 'aclnnMyTwo' or a variant)", None),
        ("Y101", 41, 7, "'res' is not an out argument of my_res.out (out)", None),
        ("Y104", 46, 5, "gen_opapi has no exec", "add exec: aclnnMyNone"),
        ("Y104", 56, 13, "exec must be a string 'aclnnName[, arg, ...]', found 5", None),
        ("Y104", 59, 16, "gen_opapi must be a mapping with exec (and results), found 'aclnnMyFlat'", None),
        ("Y105", 63, 27, "structured_inherit 'abs.outt' names no official/custom entry with gen_opapi", None),
        ("Y105", 67, 27, "structured_inherit 'neg' is not an out variant (functional)", None),
    ]  # fmt: skip
