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


# -- Y005 unknown-version ---------------------------------------------------------------------------


def test_y005_version_not_in_all_version(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: v9.9\n  acl_op: [v2.2, v2.4]\n  dvm: 'v2.1, v2.5'\n")
    found = findings(tmp_path, text, "Y005")
    assert [(f.line, f.column) for f in found] == [(8, 13), (9, 20), (10, 17)]
    assert "'v9.9' is not in all_version" in found[0].message and found[0].op == "my_op"
    assert "acl_op" in found[1].message and "'v2.5'" in found[2].message


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


# -- Y012 gen-opapi-ignored-section -----------------------------------------------------------------


def test_y012_gen_opapi_outside_official_and_custom(tmp_path):
    text = HEADER.replace("symint: []", "symint:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n    gen_opapi: {exec: aclnnMyOp}") + "custom: []\n"
    f = only(findings(tmp_path, text, "Y012"), 7, "under 'symint' is never read")
    assert f.severity is Severity.WARNING


def test_y012_custom_gen_opapi_is_clean(tmp_path):
    text = full("- func: my_op(Tensor x) -> Tensor\n  op_api: all_version\n  gen_opapi: {out: {size: x, dtype: x}, exec: aclnnMyOp}\n")
    assert findings(tmp_path, text, "Y012") == []


# -- Y101 gen-opapi-outputs -------------------------------------------------------------------------


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
    # the functional my_op uses my_op.out's block, whose result has no dtype (fine for out, not for my_op)
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
            exec: aclnnMyOp
        """
    )
    f = only(findings(tmp_path, text, "Y101"), 10, "has no dtype", "(inherited from my_op.out)")
    assert f.op == "my_op"


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
    text = full(
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
    assert findings(tmp_path, text, "Y104") == []


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


# -- Y106 aclnn-name-convention ---------------------------------------------------------------------


def test_y106_unconventional_aclnn_name_is_a_note(tmp_path):
    text = gen("my_op(Tensor x) -> Tensor", "out: {size: x, dtype: x}\nexec: aclnnMyOperator, x, out\n")
    f = only(findings(tmp_path, text, "Y106"), 11, "'aclnnMyOperator'", "'aclnnMyOp'")
    assert f.severity is Severity.INFO


def test_y106_conventional_name_is_clean(tmp_path):
    # the base name drops an in-place '_': my_op_ → aclnnMyOp
    assert findings(tmp_path, gen("my_op_(Tensor(a!) self) -> Tensor(a!)", "exec: aclnnMyOp\n"), "Y106") == []


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
        ("Y005", 27, 17, "dvm: version 'v2.9' is not in all_version", "did you mean 'v2.3'?"),
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
