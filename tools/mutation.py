"""Mutation-test one core module: ``python tools/mutation.py opkit/yamlio.py`` (mutmut 3, ``pip install -e ".[mutation]"``).

mutmut reads one configuration per directory, and a module is worth testing only against the tests
that exercise it, so each run works in a scratch copy of the repository (build/mutation/<module>/)
with its own ``[mutmut]`` section: the module (a file or a package folder) and its test subset from
SUITES. The score printed at the end is killed / (all - equivalent); EQUIVALENT lists, per mutant
name, why it cannot be killed (CONTRIBUTING.md, "Mutation testing").
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

RULES = "opkit/lint/rules/"
COPY_IGNORE = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.egg-info")  # what the scratch copy leaves out
CATALOGUE = "tests/lint/test_catalogue.py"


def catalogue(family: str) -> list[str]:
    """The catalogue cases of one rule family: each of its rules' example and fixed twin, and the reviewed snapshot
    of every example's findings (which also shows a rule firing on another family's example). The catalogue's other
    cases lint other families' examples: run for every project-scope mutant, they made a family's run hours long."""
    codes = sorted(c for path in (REPO / RULES / family).glob("*.py") for c in re.findall(r'@rule\(\s*"([A-Z]\d{3})"', path.read_text()))
    return [f"{CATALOGUE}::test_example_fires_exactly_its_rule_and_the_fixed_twin_is_silent[{c}]" for c in codes] + [
        f"{CATALOGUE}::test_example_findings_match_the_reviewed_snapshot"
    ]


# module (path prefix) -> the tests that exercise it (files or node ids); the first matching prefix wins.
SUITES = {
    # a rule family: its catalogue cases and its own rule tests (unit tests on hand-written inputs)
    RULES + "schema/": [*catalogue("schema"), *(f"{CATALOGUE}::{t}" for t in ("test_s102_alias_set_shared_by_a_written_argument",
                        "test_s103_return_alias_matching_no_argument", "test_s105_out_named_keyword_tensor_without_write_annotation",
                        "test_s106_names_the_repeated_argument_once", "test_s002_a_type_torchgen_dropped_is_judged_by_the_versions_that_build_the_entry",
                        "test_s002_suggests_the_nearest_type_only_when_one_is_near", "test_s204_names_each_reason_and_only_for_new_ops")),
                        "tests/lint/test_schema_rules.py"],
    RULES + "op_plugin_yaml/": [*catalogue("op_plugin_yaml"), "tests/lint/test_yaml_rules.py"],
    RULES + "msopgen/": [*catalogue("msopgen"), "tests/lint/test_msopgen_rules.py"],
    RULES + "registrations/": [*catalogue("registrations"), "tests/lint/test_registration_rules.py"],
    RULES + "opdef/": [*catalogue("opdef"), "tests/lint/test_opdef_rules.py"],  # not tests/adopt/test_lint_opdef.py: it generates projects
    RULES: ["tests/lint/test_catalogue.py", "tests/lint/test_yaml_rules.py", "tests/lint/test_msopgen_rules.py",
                          "tests/lint/test_registration_rules.py", "tests/lint/test_cli.py"],
    "opkit/lint/": ["tests/lint"],
    "opkit/yamlio.py": ["tests/io/test_yamlio.py", "tests/lint/test_bad_input.py", "tests/lint/test_yaml_rules.py", "tests/lint/test_catalogue.py",
                        "tests/generate/test_yaml_add.py"],
    "opkit/naming.py": ["tests/signature/test_naming.py", "tests/signature/test_signature.py"],
    "opkit/msopgen.py": ["tests/generate/test_msopgen_units.py", "tests/generate/test_artifacts_literal.py"],
    "opkit/signature/fastpath.py": ["tests/signature/test_fastpath_units.py", "tests/signature/test_signature_units.py"],
    "opkit/signature/": ["tests/signature/test_signature.py", "tests/signature/test_naming.py", "tests/signature/test_torch_agreement.py::test_odd_cases",
                           "tests/signature/test_torch_agreement.py::test_op_plugin_dialect_refuses_names_its_codegen_cannot_write",
                           "tests/signature/test_signature_units.py", "tests/generate/test_artifacts_literal.py"],
    "opkit/torch_lexer.py": ["tests/signature/test_torch_lexer_units.py", "tests/signature/test_signature_units.py",
                             "tests/signature/test_torch_agreement.py::test_odd_cases"],
    "opkit/generate/spec.py": ["tests/generate/test_spec_units.py"],
    "opkit/generate/model.py": ["tests/generate/test_model_units.py"],
    "opkit/generate/outputs.py": ["tests/generate/test_outputs_units.py"],
    "opkit/generate/refusals.py": ["tests/generate/test_refusals_units.py"],
    "opkit/generate/yaml_edit.py": ["tests/generate/test_yaml_edit_units.py"],
    "opkit/generate/merge.py": ["tests/generate/test_merge_units.py"],
    "opkit/jsonio.py": ["tests/io/test_jsonio.py", "tests/lint/test_bad_input.py", "tests/lint/test_msopgen_rules.py", "tests/lint/test_catalogue.py"],
    "opkit/verify/graphs.py": ["tests/verify/test_graphs_units.py"],
    "opkit/verify/diagnose.py": ["tests/verify/test_diagnose_units.py"],
    "opkit/verify/npugraph_ex/checks.py": ["tests/verify/test_npugraph_ex_checks_units.py"],
    "opkit/torch_npu_wheel.py": ["tests/verify/test_npugraph_ex_wheel_units.py"],
    "opkit/verify/assertions.py": ["tests/verify/test_assertions_units.py"],
    "opkit/verify/check.py": ["tests/verify/test_verify_broken_ops.py", "tests/verify/test_stage_units.py", "tests/verify/test_assertions_units.py"],
    "opkit/verify/backends.py": ["tests/verify/test_backends_units.py", "tests/verify/test_stage_units.py"],
    "opkit/verify/report.py": ["tests/verify/test_verify_report.py"],
    "opkit/verify/stages/": ["tests/verify/test_stage_units.py"],
}  # fmt: skip

# Imported once by mutmut's fork server, so that each mutant's process starts with them loaded.
PRELOAD = ("torch", "torchgen.model", "torch._dynamo", "ruamel.yaml", "yaml", "jinja2", "cookiecutter.main",
           "hypothesis", "hypothesis.strategies", "pytest", "xdist")  # fmt: skip

# Mutants that change nothing observable, with the reason (mutmut's names: module.x_function__mutmut_N).
EQUIVALENT: dict[str, str] = {
    "opkit.jsonio.x__position__mutmut_26": "count('\\n', None, start): None and 0 both start at the beginning",
    "opkit.jsonio.x__position__mutmut_38": "rfind('\\n', None, start): None and 0 both start at the beginning",
    "opkit.yamlio.x_nesting_bound__mutmut_5": "'XX[{XX': the match is one of []{}, never X",
    "opkit.yamlio.x_nesting_bound__mutmut_19": "max(..., default=None): text.split('\\n') is never empty, the default is unused",
    "opkit.yamlio.x_nesting_bound__mutmut_21": "max(...) without default: as above",
    "opkit.yamlio.x_nesting_bound__mutmut_25": "max(..., default=1): as above",
    "opkit.yamlio.x_expanded_size__mutmut_8": "yaml.parse without the C loader: the same events, only slower",
    "opkit.yamlio.x_expanded_size__mutmut_22": "a scalar anchor's weight is 1, the same as the default for an unknown anchor",
    "opkit.yamlio.x_compose__mutmut_5": "yaml.compose with the pure-Python Loader: the same resolver, the same nodes, only slower",
    "opkit.yamlio.x_compose_all__mutmut_6": "as above, for compose_all",
    "opkit.msopgen.x_attr_default__mutmut_24": "'XXaeiouXX': no attr type's name (int, SymInt, float, bool, str, ScalarType) starts with X",
    "opkit.generate.outputs.x__items__mutmut_6": "body + 'XX,XX': the item ending at that comma slices body past its end, i.e. the same last item",
    "opkit.generate.outputs.x_parse_rule__mutmut_21": "count('[') >= count(']') in the unbalanced branch: the counts differ there, so >= is >",
    "opkit.generate.refusals.x_library_suggestion__mutmut_6": "parse_schema(schema, None): every dialect but OP_PLUGIN parses as torch.library, and only success is read",
    "opkit.generate.refusals.x_corrected__mutmut_1": "changed = None: only read as `if not changed`, where None is False",
    "opkit.generate.refusals.x_corrected__mutmut_49": "overload=None: the corrected signature prints the same without an overload, and is parsed back from that text",
    "opkit.generate.spec.x_op_types_beside__mutmut_16": "read_text(encoding='UTF-8'): the same codec as 'utf-8'",
    "opkit.generate.spec.x_validate_spec__mutmut_3": "schema.encode('UTF-8'): the same codec as 'utf-8'",
    "opkit.generate.spec.x_parse_dtypes__mutmut_3": "default = None: only read as `default or DEFAULT_DTYPES`, where None is () (both false)",
    "opkit.generate.spec.x__entry_text__mutmut_14": "json.dumps(ensure_ascii=None): json only tests its truth, None is False",
    "opkit.generate.spec.x__checked_signature__mutmut_14":
        "library_suggestion(..., style=None): the style only short-cuts 'library', whose schema failed torch.library's parse just before,"
        " so the suggestion's own torch.library parse fails as well and adds ''",
    "opkit.generate.spec.x__check_lint_clean__mutmut_7":
        "lint without Selection(select=('S',)): the other families' rules read yaml, Python, msOpGen JSON or OpDef files, and only a"
        " --schema string is linted (measured: 604 schemas from tests/ in both dialects, the same findings)",
    "opkit.generate.spec.x__check_lint_clean__mutmut_8": "Selection(select=None): every rule, as above",
    "opkit.generate.spec.x__check_lint_clean__mutmut_10": "Selection(select=('s',)): --select matches codes case-insensitively (registry.matches)",
    "opkit.generate.yaml_edit.xǁ_FileTextǁencode__mutmut_7": "text.encode('UTF-8'): the same codec as 'utf-8'",
    "opkit.generate.yaml_edit.x_check_entry__mutmut_11": "parse_schema(func, ): the default dialect is OP_PLUGIN, the one passed",
    "opkit.generate.yaml_edit.x_emit_entry__mutmut_2": "YAML(typ=None): ruamel's default typ is 'rt'",
    "opkit.generate.yaml_edit.x_plan_add__mutmut_22": "parse_schema(func, ): the default dialect is OP_PLUGIN, the one passed",
    "opkit.generate.yaml_edit.x_plan_add__mutmut_112": "'or': an empty value on another line than its key (custom:\n  []) is refused by the load-back check either way, with the same message",
    "opkit.generate.yaml_edit.x_plan_add__mutmut_115": "end.column >= start.column: equal marks (a bare 'custom:') cut an empty range, changing nothing",
    "opkit.generate.yaml_edit.x_plan_add__mutmut_119": "rstrip(None): YAML separates a key from its value by spaces and tabs only",
    "opkit.generate.yaml_edit.x_plan_add__mutmut_121": "rstrip('XX \tXX'): the text before the value ends in ':' after the spaces, never X",
    "opkit.lint.rules.schema.unknown_type.x_unknown_type__mutmut_20": "get_close_matches without n=1: only near[0], the best match, is read",
    "opkit.lint.rules.schema.unknown_type.x_unknown_type__mutmut_21": "get_close_matches without cutoff=0.6: 0.6 is difflib's default",
    "opkit.lint.rules.schema.unknown_type.x_unknown_type__mutmut_22": "get_close_matches(n=2): only near[0], the best match, is read",
    "opkit.lint.rules.schema.rejected_by_torch_library.x_rejected_by_torch_library__mutmut_7":
        "check_schema(..., text=None): the text only goes into the SchemaError, of which the rule reads message, column and hint",
    "opkit.lint.rules.msopgen.column_count_mismatch.x_column_count_mismatch__mutmut_8":
        "most_common(None)[0]: the same first element as most_common(1)[0] (both order ties by first occurrence)",
    "opkit.lint.rules.msopgen.column_count_mismatch.x_column_count_mismatch__mutmut_10": "most_common(2)[0]: as above",
    "opkit.generate.merge.x__git_merge__mutmut_1": "TemporaryDirectory(prefix=None): the name of a directory nothing else reads, removed after the merge",
    "opkit.generate.merge.x__git_merge__mutmut_2": "prefix='XXopkit-merge-XX': as above",
    "opkit.generate.merge.x__git_merge__mutmut_3": "prefix='OPKIT-MERGE-': as above",
    **{f"opkit.generate.merge.x__git_merge__mutmut_{n}": "another name of a file in the temporary directory: git merge-file is given"
       " its labels with -L, so the names appear nowhere in what it writes" for n in range(9, 15)},
    "opkit.generate.merge.x__git_merge__mutmut_26": "stdin=None: git merge-file given three paths never reads its standard input",
    "opkit.generate.merge.x__git_merge__mutmut_30": "no stdin=: as above",
    "opkit.generate.merge.x__matched__mutmut_4": "SequenceMatcher(autojunk=None): difflib only tests its truth, None is False",
    "opkit.generate.merge.x__line_end__mutmut_7": "return -2 for -1 ('cannot tell'): _crlf_needed reads it only as true (if needs_cr) and as not 1",
    "opkit.torch_npu_wheel.x_torch_npu_version__mutmut_5": "metadata.version('TORCH'): importlib.metadata finds a distribution by its normalised name, case-insensitively",
    **{f"opkit.torch_npu_wheel.x_{fn}__mutmut_{n}": "split('+') or split('+', 2) for split('+', 1): element [0] is the text before the first '+' either way"
       for fn, ns in (("torch_npu_version", (9, 12)), ("_version_of_tree", (22, 35)), ("_from_path", (11, 17))) for n in ns},
    **{f"opkit.torch_npu_wheel.x__version_of_tree__mutmut_{n}": "read_text without encoding='utf-8' (the locale's, UTF-8 here): every locale"
       " encoding agrees with UTF-8 on ASCII, only the ASCII __version__ line is read, and errors='replace' keeps any other byte harmless" for n in (8, 10)},
    "opkit.torch_npu_wheel.x__version_of_tree__mutmut_13": "read_text(encoding='UTF-8'): the same codec as 'utf-8'",
    **{f"opkit.torch_npu_wheel.x__unpack__mutmut_{n}": "another prefix of the temporary sibling: mkdtemp makes its name unique either way,"
       " and it is renamed to dest or removed, so the name is read nowhere" for n in (9, 11, 14)},
    **{f"opkit.torch_npu_wheel.x__unpack__mutmut_{n}": "rmtree(tmp) without ignore_errors: tmp is the fresh directory _unpack made, holding only"
       " what it extracted, and its owner removes it without error" for n in (35, 37, 38)},
    **{f"opkit.torch_npu_wheel.x__download__mutmut_{n}": "another prefix of pip's temporary download folder: only the wheel inside is read"
       " (a glob of torch_npu-*.whl), never the folder's name" for n in (1, 2, 3)},
    "opkit.signature.fastpath.x__type__mutmut_2": "_types.get(None, False): the memo never answers, each type is read again, the same",
    "opkit.signature.fastpath.x__argument__mutmut_2": "_arguments.get(None, False): as above, for argument pieces",
    "opkit.signature.fastpath.x_parse_simple__mutmut_60":
        "annotated also for an argument without alias: torchgen's checks then run for schemas without aliases too, where each"
        " holds (no mutated argument, no mutable return; a trailing '_' runs them anyway): the same answer",
    "opkit.signature.fastpath.x_parse_simple__mutmut_120": "as above, for a return without alias",
    "opkit.torch_lexer.x_blank_out__mutmut_20": "string_end(...) <= 0: it returns -1 or an index past a string of two or more characters, never 0",
    "opkit.torch_lexer.x_blank_out__mutmut_21": "string_end(...) < 1: as above, never 0",
    "opkit.torch_lexer.x_blank_out__mutmut_50": "find('\\n', i) <= 0 for < 0: from the '#' at i it returns -1 or an index past i",
    "opkit.torch_lexer.x_blank_out__mutmut_51": "find('\\n', i) < 1: as above",
    "opkit.torch_lexer.x_string_value__mutmut_11": "literal[:3] == literal[1] * 3: either equality makes literal[0] == literal[1] == literal[2]",
    "opkit.torch_lexer.x_number_value__mutmut_49": "float('INF'): float() reads 'inf' in any case",
    "opkit.torch_lexer.x_number_value__mutmut_52": "float('-INF'): as above",
    "opkit.torch_lexer.x_number_value__mutmut_84": "int(text) without base 10: 10 is int()'s default",
    "opkit.naming.x_msopgen_snake__mutmut_17": "the character after the last: 'XXXX'.islower() is False, as ''.islower() is",
    "opkit.verify.graphs.x__node_op__mutmut_7": "getattr(target, '__name__') without a default: every call_function target (OpOverload, function, higher-order op) has one",
    "opkit.verify.stages.opcheck.x__aot_dispatch_dynamic__mutmut_7": "check_gradients=None: the inputs are detached clones (clone_tree),"
                                                                      " so 'auto' finds none requiring grad and checks no gradients, as a falsy None does",
    "opkit.verify.stages.opcheck.x_run_opcheck__mutmut_4": "direct = None: every op through opcheck, whose test_aot_dispatch_dynamic is the same"
                                                           " aot_autograd_check(dynamic=True, check_gradients='auto') after cloning the inputs, which an op"
                                                           " that writes nothing does not need: the same verdict, only slower (the reason for the direct call)",
    "opkit.verify.stages.opcheck.x_run_opcheck__mutmut_20": "opcheck(raise_exception=None): torch reads it only as `if raise_exception:`, where None is False",
    "opkit.verify.stages.opcheck.x_run_opcheck__mutmut_47": "the key of a result not in tests (+1 for -1): only 'opcheck', which is then raw's only item",
    "opkit.verify.stages.opcheck.x_run_opcheck__mutmut_48": "as above (-2 for -1)",
    "opkit.verify.stages.calls.x_run_compiled__mutmut_4": "inputs = '' before the first call: its maker ignores the previous inputs"
                                                          " (capture: a clone of the given ones; dynamic: fresh ones)",
    "opkit.verify.stages.calls.x_run_compiled__mutmut_43": "device != 'XXcpuXX': a CPU backend then calls torch.cpu.synchronize(), which exists and does nothing",
    "opkit.verify.stages.calls.x_run_compiled__mutmut_44": "device != 'CPU': as above",
    "opkit.verify.stages.meta.x_check_fake_vs_real__mutmut_84": "split('::')[+1]: a qualified op name has exactly one '::', so [1] is [-1]",
    "opkit.verify.stages.context.x_signature_of__mutmut_3": "rpartition('::'): a qualified op name has exactly one '::'",
    "opkit.verify.stages.context.x_has_fake_impl__mutmut_3": "rpartition('::'): as above",
    "opkit.verify.stages.context.x_signature_of__mutmut_23": "parse_schema(text, None): every dialect but OP_PLUGIN parses as torch.library,"
                                                            " and the result says TORCH_LIBRARY either way",
    "opkit.verify.stages.context.x_has_fake_impl__mutmut_32": "break for continue after a TorchScript-only overload: no later overload lacks a"
                                                             " Meta kernel in any aten op of torch 2.13 (all checked), and torch.library cannot"
                                                             " define a TorchScript-only overload for a custom op",
    "opkit.verify.stages.registration.x_check_registration__mutmut_4": "rpartition('::'): a qualified op name has exactly one '::'",
    "opkit.verify.stages.registration.x_graphs_meta_hint__mutmut_4": "split('::')[+1]: a qualified op name has exactly one '::', so [1] is [-1]",
    "opkit.signature.model.x__type_str__mutmut_10": "rindex(']') for index(']'): a type prints at most one ']' (nested lists are refused)",
    "opkit.signature.parse.x__parse_op_plugin__mutmut_129": "rsplit('::')[-1] for rsplit('::', 1)[-1]: the last part is the same",
    "opkit.signature.parse.x__parse_op_plugin__mutmut_133": "rsplit('::', 2)[-1] for rsplit('::', 1)[-1]: the last part is the same",
    "opkit.signature.model.x_parse_default__mutmut_30": "text[:1] not in 'XX[XX': 'X' is a letter, which the next test sends to the same refusal",
    "opkit.lint.rules.registrations.common.x_written_parameters__mutmut_18":
        "targets = [...] for targets += [...] in the Assign branch: each node starts with targets = [], and only the Call branch adds before",
    "opkit.lint.rules.registrations.custom_op_rejected.x_custom_op_rejected__mutmut_2":
        "'... and schema= given or mutates_args is a tuple': without schema= the schema is inferred with exactly mutates_args as"
        " Tensor(a!) (a name that is no tensor parameter is schema_problem, and then there is no schema to parse), so it agrees",
    "opkit.lint.rules.registrations.custom_op_rejected.x_custom_op_rejected__mutmut_8":
        "parse_schema(schema, None): every dialect but OP_PLUGIN parses as torch.library, the one passed",
    **{f"opkit.lint.rules.registrations.custom_op_schema_mismatch.x_custom_op_schema_mismatch__mutmut_{n}":
       "the probe Registration's style, function, line or column: Index.declaring reads only its namespace and op (name, overload)"
       for n in (14, 15, 16, 17, 24, 25)},
    "opkit.signature.parse.x__parse_op_plugin__mutmut_10": "the search for an argument's printing starts at the name's last character instead of after '(':"
                                                     " a printing ('Type name') never starts with one character and then '('",
    "opkit.lint.rules.op_plugin_yaml.common.x__signature__mutmut_5": "parse_schema(func, ): the default dialect is OP_PLUGIN, the one passed",
    "opkit.lint.rules.op_plugin_yaml.aclnn_name_convention.x__squash__mutmut_1": "upper() for lower(): squashed names are only compared with squashed names, so either case folding gives the same answer",
    "opkit.lint.rules.op_plugin_yaml.aclnn_name_convention.x_follows_cann_convention__mutmut_27": "replace('backward', 'GRAD'): the result is squashed, i.e. lower-cased, as 'grad' is",
    "opkit.lint.rules.op_plugin_yaml.unknown_entry_field.x_unknown_entry_field__mutmut_10": "get_close_matches without n=1: only near[0], the best match, is read",
    "opkit.lint.rules.op_plugin_yaml.unknown_entry_field.x_unknown_entry_field__mutmut_12": "get_close_matches(n=2): only near[0], the best match, is read",
    "opkit.lint.rules.op_plugin_yaml.invalid_device_check.x_invalid_device_check__mutmut_15": "get_close_matches without n=1: only near[0], the best match, is read",
    "opkit.lint.rules.op_plugin_yaml.invalid_device_check.x_invalid_device_check__mutmut_17": "get_close_matches(n=2): only near[0], the best match, is read",
    "opkit.lint.rules.op_plugin_yaml.gen_opapi_bad_inherit.x_gen_opapi_bad_inherit__mutmut_25": "problem = '': only read as `if problem`, where '' is false as None is",
    "opkit.lint.rules.op_plugin_yaml.missing_section.x_missing_section__mutmut_28": "line=None: the engine places a yaml-scope violation without a line at line 1, the one given",
    "opkit.lint.rules.op_plugin_yaml.missing_section.x_missing_section__mutmut_29": "column=None: the engine places a yaml-scope violation without a column at column 1, the one given",
    "opkit.lint.rules.op_plugin_yaml.missing_section.x_missing_section__mutmut_32": "line omitted: as line=None",
    "opkit.lint.rules.op_plugin_yaml.missing_section.x_missing_section__mutmut_33": "column omitted: as column=None",
    "opkit.signature.parse.x__unquoted__mutmut_4": "range(end) for range(start, end): resume starts at start, so the indices before it are"
                                              " skipped (continue) either way; only slower",
    "opkit.signature.parse.x__matching_paren__mutmut_22": "return -2 for 'not found': both callers (_layout) test < 0 or compare with an index >= 0",
    "opkit.signature.parse.x__layout__mutmut_35": "close_at <= 0: the ')' found closes the '(' at open_at >= 0, so close_at >= 1 whenever it is found",
    "opkit.signature.parse.x__layout__mutmut_36": "close_at < 1: as above",
    "opkit.signature.parse.x__unsupported_type__mutmut_14": "name 'XXXX' for a type that starts with no letter: like '' it is in none of the name sets and"
                                                      " does not start lowercase, and the branches that print name are not taken",
    "opkit.signature.parse.x_check_schema__mutmut_1": "seen_default = None: only read as `elif seen_default and ...`, where None is False",
    "opkit.signature.parse.x__parse_uncached__mutmut_22": "fast = None: every op-plugin schema goes to torchgen, whose OpSignature equals the fast path's"
                                                    " (==, columns, printing) wherever the fast path answers"
                                                    " (tests/signature/test_fastpath_differential.py, on every real schema); only slower",
}


# The wall-clock limit is (tests' clean time + timeout_constant) * 15: with the default constant of 1 s a fast
# test's mutant got 16 s, which a loaded machine exceeds, and a spurious "timeout" counted as a survivor. 10 s
# gives it two and a half minutes, in which a hung test (niced, on a loaded machine) reaches HUNG_CPU_S.
TIMEOUT = "timeout_constant = 10\n"

# mutmut puts its mutated copy first itself; bytecode is written (the scratch copy is ours), so a
# mutant's process reads compiled modules instead of compiling them again.
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
ENV["OPKIT_NO_CACHE"] = "1"  # lint's on-disk caches would answer for the mutant too
# Added for one module's runs (path prefix -> variables). wheel.py: tests/conftest.py's session fixture obtains the real
# torch-npu wheel unless OPKIT_TORCH_NPU is set, which in a mutant's process would call the mutated obtain() (pip download
# from the index); the wheel's unit tests set or unset OPKIT_TORCH_NPU themselves, and PIP_NO_INDEX keeps any pip offline.
MODULE_ENV = {"opkit/torch_npu_wheel.py": {"OPKIT_TORCH_NPU": os.devnull, "PIP_NO_INDEX": "1"}}


def env_for(module: str) -> dict[str, str]:
    return {**ENV, **next((extra for prefix, extra in MODULE_ENV.items() if module.startswith(prefix)), {})}


# The console script, not `python -m mutmut`: that would put the unmutated copy first on sys.path.
MUTMUT = shutil.which("mutmut") or ""

# Registering decorators: lint's rules and verify's stage units.
REGISTRARS = ("rule", "stage_unit")


# A pytest plugin (-p) for every run: each test starts with the parsers' memos empty. mutmut maps a
# mutated function to the tests that call it in the clean run; a test that parses a schema an earlier
# test already parsed got the memo's answer and was not mapped, so it never ran against the mutants.
#
# It also fails a test that has used HUNG_CPU_S (10 s) of CPU: a mutant that stops a loop advancing (i += 1 made i = 1) hangs,
# and mutmut's limits (wall clock (clean time + timeout_constant) * 15, CPU twice that) end it as a "timeout",
# which this script does not count as killed. A test of these suites takes well under a CPU-second; the limit is
# CPU time (ITIMER_PROF), so a loaded machine does not make a slow but correct test fail.
FRESH_MEMOS_PLUGIN = """import signal
import sys

import pytest

MEMOS = {"opkit.signature.model": (), "opkit.signature.parse": ("_RESULTS",), "opkit.signature.fastpath": ("_types", "_arguments")}
HUNG_CPU_S = 10


def _hung(signum, frame):
    raise TimeoutError(f"the test used {HUNG_CPU_S} s of CPU: a loop that does not advance")


@pytest.fixture(autouse=True)
def _fails_when_hung():
    previous = signal.signal(signal.SIGPROF, _hung)
    signal.setitimer(signal.ITIMER_PROF, HUNG_CPU_S)
    yield
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.signal(signal.SIGPROF, previous)


@pytest.fixture(autouse=True)
def _fresh_parser_memos():
    for name, dicts in MEMOS.items():
        module = sys.modules.get(name)
        if module is None:
            continue
        for attr in dicts:
            getattr(module, attr).clear()
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == name:
                value.cache_clear()
    yield
"""


def undecorate_rules(folder: Path) -> None:
    """mutmut 3 never mutates a decorated function, and every rule is one (``@rule(...)``), as is every
    stage unit (``@stage_unit(...)``). In the scratch copy each is registered after its ``def`` instead
    (``f = rule(...)(f)``): the same registration, of the function mutmut has wrapped."""
    for path in folder.rglob("*.py"):
        text = path.read_text()
        if not any(f"@{name}(" in text for name in REGISTRARS):
            continue
        lines = text.splitlines()
        moves = []
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                for deco in node.decorator_list:
                    if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) in REGISTRARS:
                        moves.append((deco.lineno, deco.end_lineno, node.end_lineno, node.name, ast.get_source_segment(text, deco)))
        for start, end, fn_end, name, call in sorted(moves, reverse=True):
            lines[fn_end:fn_end] = [f"{name} = {call}({name})"]
            del lines[start - 1 : end]
        path.write_text("\n".join(lines) + "\n")


def suite(module: str) -> list[str]:
    for prefix, tests in SUITES.items():
        if module.startswith(prefix):
            return [t for t in tests if (REPO / t.partition("::")[0]).exists()]
    raise SystemExit(f"no test subset for {module}: add it to SUITES in {__file__}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="a file or package folder under opkit/, e.g. opkit/yamlio.py or opkit/lint/rules/schema/")
    parser.add_argument("--max-children", default="2", help="parallel test processes (default 2)")
    parser.add_argument("--again", action="store_true",
                        help="in the last run's scratch copy: take the current tests/ and opkit/ and retest only its survivors "
                             "and the mutants of functions changed since (its other killed mutants stay killed)")
    args = parser.parse_args()
    if not MUTMUT:
        raise SystemExit("mutmut is not installed: pip install -e '.[mutation]'")
    module = args.module
    work = REPO / "build" / "mutation" / module.strip("/").replace("/", "_")
    if args.again:
        return again(work, module, args.max_children)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for name in ("opkit", "tests", "schemas", "cookiecutter-op"):
        shutil.copytree(REPO / name, work / name, symlinks=True, ignore=COPY_IGNORE)
    undecorate_rules(work / module if (work / module).is_dir() else (work / module).parent)
    # pytest settings only: without a [tool.mutmut] table mutmut reads setup.cfg.
    shutil.copy(REPO / "pyproject.toml", work / "pyproject.toml")
    tests = suite(module)
    (work / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = opkit\n"
        f"only_mutate = {module if module.endswith('.py') else module.rstrip('/') + '/*'}\n"
        "pytest_add_cli_args_test_selection =\n" + "".join(f"    {t}\n" for t in tests) +
        "also_copy =\n    schemas\n    cookiecutter-op\n    mutation_gc_freeze.py\n    mutation_fresh_memos.py\n"
        # --assert=plain and no unraisableexception plugin: a failing assert still fails, but each mutant's
        # pytest skips rewriting the test modules and the five gc.collect() passes over the preloaded torch
        # heap at session end: 3.1 CPU-s of fixed cost per mutant became 0.4 (measured on one small test).
        # mutation_fresh_memos: see FRESH_MEMOS_PLUGIN.
        "pytest_add_cli_args =\n    -q\n    --assert=plain\n    -p\n    no:unraisableexception\n    -pmutation_fresh_memos\n"
        # Each mutant's tests run in a process forked from a server that has imported only the heavy
        # third-party modules (PRELOAD), never opkit or a test module. mutmut's default forks every
        # mutant from the process that ran the clean suite, whose warm caches (parse results, project
        # models) and collection-time artifacts answer for the mutated code: killed mutants counted as
        # survivors (msopgen.py read 71 %).
        "process_isolation = forkserver\n"
        "forkserver_warmup = import\n"
        "preload_modules_file = preload.txt\n"
        + TIMEOUT
    )
    # Imported last: the preloaded modules' objects (torch's are millions) move to the permanent
    # generation, so the collections a mutant's process triggers do not walk them (~2 s each under load).
    (work / "mutation_gc_freeze.py").write_text("import gc\n\ngc.freeze()\n")
    (work / "preload.txt").write_text("\n".join(PRELOAD) + "\nmutation_gc_freeze\n")
    (work / "mutation_fresh_memos.py").write_text(FRESH_MEMOS_PLUGIN)
    subprocess.run([MUTMUT, "run", "--max-children", args.max_children], cwd=work, env=env_for(module), check=False)
    return report(work, module)


def results(work: Path) -> dict[str, str]:
    """mutant name -> mutmut's state (killed, survived, no tests, ...) in the scratch copy ``work``."""
    out = subprocess.run([MUTMUT, "results", "--all", "true"], cwd=work, env=ENV, capture_output=True, text=True, check=False).stdout
    status: dict[str, str] = {}
    for line in out.splitlines():
        name, _, state = line.strip().rpartition(": ")
        if name:
            status[name] = state
    return status


def refresh_sources(work: Path, module: str) -> list[str]:
    """Bring the scratch copy's opkit/ up to the current code, the module undecorated as in the first run; return
    the files that changed. A rewritten file is newer than its mutants: mutmut mutates it again and forgets the
    results of the functions whose text changed (mutmut 3 keeps them per function hash), which are then retested."""
    fresh = work / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.copytree(REPO / "opkit", fresh / "opkit", symlinks=True, ignore=COPY_IGNORE)
    undecorate_rules(fresh / module if (fresh / module).is_dir() else (fresh / module).parent)
    changed = []
    for path in sorted((fresh / "opkit").rglob("*.py")):
        target = work / path.relative_to(fresh)
        if not target.exists() or target.read_bytes() != path.read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)  # a new mtime
            changed.append(str(path.relative_to(fresh)))
    shutil.rmtree(fresh)
    return changed


def again(work: Path, module: str, max_children: str) -> int:
    """Retest the last run's survivors against the current tests (the test selection in setup.cfg stays as it was:
    a changed selection makes mutmut reset every result). New tests are found by mutmut's incremental stats.
    Where opkit/ changed since, the changed functions' mutants are tested again too (see refresh_sources)."""
    if not (work / "mutants").is_dir():
        raise SystemExit(f"no earlier run in {work}: run without --again first")
    for copy in (work / "tests", work / "mutants" / "tests"):
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(REPO / "tests", copy, symlinks=True, ignore=COPY_IGNORE)
    changed = refresh_sources(work, module)
    for path in changed:
        print(f"  changed since the last run: {path}")
    config = work / "setup.cfg"
    text = re.sub(r"timeout_constant = .*\n", "", config.read_text())
    config.write_text(text + TIMEOUT)  # a changed timeout only reclassifies timeouts, which are retested here anyway
    for folder in (work, work / "mutants"):  # as is the hung-test limit (mutmut runs in mutants/, with its copy)
        (folder / "mutation_fresh_memos.py").write_text(FRESH_MEMOS_PLUGIN)
    survivors = [n for n, s in results(work).items() if s != "killed" and n not in EQUIVALENT]
    mutated = [p for p in changed if p.startswith(module)]
    if not survivors and mutated:  # a run is what makes mutmut mutate the changed files again
        survivors = [p.removesuffix(".py").replace("/", ".") + ".*" for p in mutated]
    if survivors:
        subprocess.run([MUTMUT, "run", "--max-children", max_children, *survivors], cwd=work, env=env_for(module), check=False)
    if mutated:  # the changed functions' mutants, mutated again by that run
        unchecked = [n for n, s in results(work).items() if s == "not checked" and n not in EQUIVALENT]
        if unchecked:
            subprocess.run([MUTMUT, "run", "--max-children", max_children, *unchecked], cwd=work, env=env_for(module), check=False)
    return report(work, module)


def unimportable(work: Path) -> set[str]:
    """Mutants under which the test modules could not be imported (a stage unit's registration, which runs at
    import, raising): pytest found no test for the node ids (exit 4), mutmut's runner raised and its worker
    exited 255, which ``mutmut results`` calls "timeout" (a real timeout is a signal: SIGXCPU). The suite
    failed on them: they count as killed, and are printed as such."""
    names: set[str] = set()
    for meta in (work / "mutants").rglob("*.meta"):
        codes = json.loads(meta.read_text()).get("exit_code_by_key", {})
        names.update(name for name, code in codes.items() if code == 255)
    return names


def report(work: Path, module: str) -> int:
    status = results(work)
    if not status:
        print(f"{module}: mutmut reported no mutants (see its output above)", file=sys.stderr)
        return 1
    for name in sorted(unimportable(work) & status.keys()):
        print(f"  killed (the tests could not be imported under it): {name}")
        status[name] = "killed"
    equivalent = {n for n in status if n in EQUIVALENT}
    for name in sorted(n for n in equivalent if status[n] == "killed"):
        print(f"  listed as equivalent but killed (a renumbered mutant? remove it from EQUIVALENT): {name}")
    killed = sum(1 for n, s in status.items() if s == "killed" and n not in equivalent)
    counted = len(status) - len(equivalent)
    survivors = sorted(n for n, s in status.items() if s != "killed" and n not in equivalent)
    for name in survivors:
        print(f"  {status[name]:>10}  {name}")
    score = 100 * killed / counted if counted else 100.0
    print(f"{module}: {killed} killed of {counted} ({len(equivalent)} equivalent excluded): {score:.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
