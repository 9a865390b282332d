"""`opkit lint` on the real op_plugin_functions.yaml (1514 entries), read in place.

The counts are pinned per code and severity so that a new false positive, or a lost true one, shows.
Every error is a real defect of the file as seen by the torchgen of the versions each entry is built
for and by PyTorch's automatic functionalization; the Y rules add no error or warning: the file is
consistent as far as op-plugin's codegen reads it.
"""

from __future__ import annotations

import functools
import json
from collections import Counter

import pytest

from opkit.lint import Severity, lint
from opkit.formats.op_plugin_yaml import load_op_plugin_yaml
from opkit.signature import SchemaError

PINNED_ERRORS = {
    # The 8 custom ops that return their mutated input and have no functional twin (npu_dtype_cast_,
    # one_, npu_view_copy, npu_scatter_pa_cache.value, ...): automatic functionalization rejects custom ops
    # whose outputs carry alias annotations, and op-plugin's codegen generates no Functionalize kernel for
    # them, so none can enter an npugraph_ex graph. True errors. The other 12 (npu_silu_, scatter_update_,
    # npu_scatter_nd_update_, ...) have a twin with the same torchgen signature(): the codegen's
    # Functionalize kernel serves them.
    "S101": 8,
}
PINNED_WARNINGS = {
    # The 13 `.out` overloads in ATen's out= convention (`*, Tensor(a!) out) -> Tensor(a!)`) without a
    # generated Functionalize kernel: graph code calls their functional overload, so a warning, not an
    # error (op-plugin-yaml.md). The other 9 (npu_conv2d.out, npu_slice.out, ...) have their twin in custom:.
    "S108": 13,
    "S201": 33,  # custom ops with a tensor after an attribute (msOpGen lists inputs first)
    "S202": 34,  # custom op names that do not survive msOpGen's snake_case round trip
    # custom op arguments msOpGen cannot declare: npu_dropout_gen_mask's Layout? and Device? (its Generator? is
    # S204's); Scalar, ScalarType, str? and int? ... have a mapping since opkit new models them (docs/new.md, "Type mapping").
    "S203": 2,
    "S204": 18,  # custom ops tagged nondeterministic_seeded
}
PINNED_INFOS = {
    # exec names that follow none of CANN's conventions (npu_ dropped, Inplace, V2, acronym casing,
    # Grad for backward, operand-kind suffixes): 331 of the 354 own execs follow one; these 23 call
    # another kernel (aclnnDot for vdot, aclnnBatchNorm for native_batch_norm, aclnnIm2colBackward
    # for col2im, aclnnNsaSelectedAttention for npu_nsa_select_attention ...).
    "Y106": 23,
}
# The 29 Dimname entries (27 official, 2 custom) that torch 2.13's torchgen rejects: all gated to
# [v2.1, v2.12], so no torchgen that builds them rejects them.
GATED_DIMNAME_ENTRIES = 29


def _counts(findings, severity: Severity) -> dict[str, int]:
    return dict(Counter(f["code"] for f in findings if f["severity"] == str(severity)))


@functools.lru_cache(maxsize=1)
def _lint_once(path: str):
    return lint([path])


@pytest.fixture
def corpus_result(corpus_yaml):
    """(path, LintResult): linted once per session, the tests only read it."""
    return corpus_yaml, _lint_once(str(corpus_yaml))


def test_cli_counts_are_pinned(corpus_yaml, run_opkit):
    code, output = run_opkit("lint", str(corpus_yaml), "--format", "json")
    findings = json.loads(output)
    assert code == 1  # errors present
    assert _counts(findings, Severity.ERROR) == PINNED_ERRORS
    assert _counts(findings, Severity.WARNING) == PINNED_WARNINGS
    assert _counts(findings, Severity.INFO) == PINNED_INFOS
    assert not any(f["severity"] == "fatal" for f in findings)


def test_library_agrees_with_cli(corpus_yaml, corpus_result, run_opkit):
    _, result = corpus_result
    _, output = run_opkit("lint", str(corpus_yaml), "--format", "json")
    assert [f.to_dict() for f in result.findings] == json.loads(output)
    assert result.files == 1 and result.exit_code() == 1


def test_no_y_error_or_warning_on_the_real_file(corpus_result):
    _, result = corpus_result
    y = [f for f in result.findings if f.code.startswith("Y") and f.severity >= Severity.WARNING]
    assert y == []
    # ...while every yaml rule did run: the notes prove the gen_opapi blocks were read
    assert sum(f.code == "Y106" for f in result.findings) == PINNED_INFOS["Y106"]
    assert all(f.op for f in result.findings if f.code == "Y106")


def test_version_gated_entries_are_not_errors(corpus_result):
    corpus, result = corpus_result
    source = load_op_plugin_yaml(str(corpus))
    failures = [site for site in source.schema_sites() if isinstance(site.parsed, SchemaError)]
    # The installed torchgen rejects exactly the Dimname entries, every one of them gated to v2.12...
    assert len(failures) == GATED_DIMNAME_ENTRIES
    assert all("Dimname" in site.text and max(site.versions, key=lambda v: int(v.split(".")[1])) == "v2.12" for site in failures)
    # ...so none of them is reported.
    assert [f for f in result.findings if f.code in ("S001", "S002", "S003")] == []


def test_the_same_entry_active_in_v2_13_is_an_error(corpus_yaml, tmp_path):
    text = corpus_yaml.read_text()
    line = next(line for line in text.splitlines() if "Dimname" in line and "func:" in line)
    index = text.index(line)
    gate = text.index("[v2.1, v2.12]", index)
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text(text[:gate] + "[v2.1, newest]" + text[gate + len("[v2.1, v2.12]") :])
    (finding,) = [f for f in lint([str(path)], use_cache=False).findings if f.code == "S002"]
    assert "active in v2.13, v2.14, v2.15" in finding.message and "end its op_api/acl_op range at v2.12" in finding.hint


def test_in_place_ops_returning_their_input_stay_errors_and_out_overloads_are_warnings(corpus_result):
    corpus, result = corpus_result
    source = load_op_plugin_yaml(str(corpus))
    text_at = {site.line: site.text for site in source.schema_sites()}
    section_at = {site.line: site.section for site in source.schema_sites()}
    s101 = [f for f in result.findings if f.code == "S101"]
    s108 = [f for f in result.findings if f.code == "S108"]
    assert {section_at[f.line] for f in s101 + s108} == {"custom"}
    # Every S101 writes an input and returns it, and is no out= overload: 5 in-place `name_` ops,
    # npu_view_copy, and two cache updates writing a keyword-only cache (npu_scatter_pa_cache.value,
    # npu_nsa_compress_infer.cache), none with a functional twin...
    assert all("(a!)" in text_at[f.line].split(" -> ")[1] and not f.op.endswith(".out") for f in s101)
    assert sum(f.op.endswith("_") for f in s101) == 5
    # ...while the 12 whose twin makes the codegen generate a Functionalize kernel are silent (torch_npu's
    # test/custom_ops/test_functionalization.py runs four of them in graphs).
    assert not {"npu_silu_", "scatter_update_", "npu_scatter_nd_update_", "npu_quant_scatter_"} & {f.op for f in s101}
    # ...every S108 a `.out` overload; with the 21 served by a generated Functionalize kernel they are the
    # spec's 42 custom entries returning a mutated input.
    assert all(f.op.endswith(".out") for f in s108)
    assert len(s101) + len(s108) == 42 - 21
    assert all(f.severity is Severity.WARNING for f in s108)


def test_no_y106_on_cann_convention_exec_names(corpus_result):
    _, result = corpus_result
    reported = {f.message.split("'")[1] for f in result.findings if f.code == "Y106"}
    for convention in ("aclnnAddRmsNorm", "aclnnSwiGlu", "aclnnInplaceAddRelu", "aclnnGeluV2", "aclnnGridSampler2D", "aclnnIsClose"):
        assert convention not in reported


def test_every_entry_is_loaded_with_positions(corpus_yaml):
    source = load_op_plugin_yaml(str(corpus_yaml))
    assert len(source.entries) == 1514
    assert Counter(e.section for e in source.entries) == {"official": 1057, "custom": 418, "symint": 29, "quant": 9, "autograd": 1}
    assert not source.is_fragment and source.versions[0] == "v2.1" and source.versions[-1] == "v2.15"
    # the one op declared twice (disjoint versions, not a Y009) sits where the file has it
    lines = [e.line for e in source.entries if e.func and e.func.startswith("_conv_depthwise2d.out(")]
    assert lines == [171, 176]


def test_statistics_summarise_the_corpus_by_code(corpus_yaml, run_opkit):
    code, out = run_opkit("lint", "--statistics", str(corpus_yaml))
    assert code == 1
    lines = [line.split() for line in out.splitlines()]
    counts = {row[1]: int(row[0]) for row in lines}
    assert counts == PINNED_ERRORS | PINNED_WARNINGS | PINNED_INFOS
    assert [int(row[0]) for row in lines] == sorted((int(row[0]) for row in lines), reverse=True)
    assert ["8", "S101", "error", "returns-mutated-input"] in lines
