"""The readers and the schema rules stay linear in their input: 20 times the input costs about 20 times
the CPU, under a generous bound (60: a reader that rescans per statement or per OpDef costs ~400).
CPU time of this process, the best of a few runs, so other work on the machine does not count."""

from __future__ import annotations

import time

from opkit.formats.opdef_cpp import load_opdef_cpp
from opkit.formats.schema_site import SchemaSite
from opkit.lint.rules.schema.default_before_required import default_before_required
from opkit.signature import Dialect

BOUND = 60


def _cpu(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


def opdef_file(ops: int, inputs: int = 30) -> str:
    out = ['#include "register/op_def_registry.h"', "namespace ops {"]
    for k in range(ops):
        out += [f"class Op{k} : public OpDef {{", "public:", f"    explicit Op{k}(const char* name) : OpDef(name)", "    {"]
        out += [f'        this->Input("x{i}").ParamType(REQUIRED).DataType({{ge::DT_FLOAT16, ge::DT_FLOAT}}).Format({{ge::FORMAT_ND, ge::FORMAT_ND}});  // {i}' for i in range(inputs)]
        out += ['        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});', '        this->AICore().AddConfig("ascend910b");', "    }", "};", f"OP_ADD(Op{k});"]
    return "\n".join(out + ["}"]) + "\n"


def test_an_opdef_file_reads_in_time_linear_in_its_size():
    small, large = opdef_file(10), opdef_file(200)
    assert len(load_opdef_cpp("small.cpp", small).ops) == 10 and len(load_opdef_cpp("large.cpp", large).ops) == 200
    ratio = _cpu(lambda: load_opdef_cpp("large.cpp", large), repeat=2) / _cpu(lambda: load_opdef_cpp("small.cpp", small))
    assert ratio < BOUND, f"20x the OpDefs cost {ratio:.0f}x"


def test_one_long_statement_reads_in_time_linear_in_its_length():
    def chained(calls: int) -> str:
        chain = "".join("\n            .AutoContiguous()" for _ in range(calls))
        return opdef_file(1, 1).replace('.Format({ge::FORMAT_ND, ge::FORMAT_ND});  // 0', ".Format({ge::FORMAT_ND, ge::FORMAT_ND})" + chain + ";")
    small, large = chained(500), chained(10_000)
    ratio = _cpu(lambda: load_opdef_cpp("large.cpp", large), repeat=2) / _cpu(lambda: load_opdef_cpp("small.cpp", small))
    assert ratio < BOUND, f"20x the calls cost {ratio:.0f}x"


def test_the_default_before_required_rule_is_linear_in_the_argument_count():
    def site(n: int) -> SchemaSite:
        s = SchemaSite("my_op(" + ", ".join(f"float f{i}=1." for i in range(n)) + ", int[] last) -> Tensor", "<schema>", 1, 1, Dialect.OP_PLUGIN)
        assert s.signature is not None and len(s.signature.arguments) == n + 1
        return s
    small, large = site(4000), site(80_000)
    assert [v.message for v in default_before_required(large)] == ["'f0' has a default but 'last' after it has none: the default is never used"]
    ratio = _cpu(lambda: list(default_before_required(large)), repeat=2) / _cpu(lambda: list(default_before_required(small)))
    assert ratio < BOUND, f"20x the arguments cost {ratio:.0f}x"


# --- Hardening III: the audit's inputs, each reader linear in them or cut off by a hard bound -------------------

from opkit.formats.cpp_constants import CppConstants  # noqa: E402
from opkit.formats.cpp_registrations import MAX_CONDITIONAL_DEPTH, CppReadError, load_cpp_registrations, macro_definitions, read_cpp_registrations  # noqa: E402
from opkit.formats.cpp_text import CppText  # noqa: E402
from opkit.formats.files import InputError  # noqa: E402
from opkit.formats.kernel_launches import load_kernel_launch_file  # noqa: E402
from opkit.formats.python_registrations import load_registration_file  # noqa: E402


def _linear(build, read, small: int, large: int) -> None:
    """``read(build(n))`` costs at most BOUND times more for 20x the ``n``."""
    assert large == 20 * small
    a, b = build(small), build(large)
    ratio = _cpu(lambda: read(b), repeat=2) / _cpu(lambda: read(a))
    assert ratio < BOUND, f"20x the input cost {ratio:.0f}x"


def test_a_run_of_const_reads_in_linear_time():
    _linear(lambda n: "const " * n + "\n", lambda code: CppConstants(CppText(code)), 400, 8000)


def test_a_define_with_blanks_and_a_trailing_backslash_reads_in_linear_time():
    _linear(lambda n: "#define X" + " " * n + "\\", lambda code: CppConstants(CppText(code)), 1000, 20_000)


def test_nested_calls_in_a_class_body_read_in_linear_time():
    def opdef(n: int) -> str:
        return opdef_file(1, 1).replace("public:", "public:\n    " + "Foo(" * n)

    _linear(opdef, lambda text: _refused_or_read(lambda: load_opdef_cpp("x.cpp", text)), 400, 8000)


def _refused_or_read(read):
    try:
        return read()
    except (ValueError, InputError):  # refused with a message: as good as read, for the time it takes
        return None


def test_unclosed_launches_read_in_linear_time():
    def asc(n: int) -> str:
        return "__global__ void k(int x) {}\nvoid f() {\n" + "k<<<" * n + "\n}\n"

    _linear(asc, lambda text: load_kernel_launch_file("x.asc", text), 200, 4000)


def test_a_define_string_full_of_escapes_reads_in_linear_time():
    def py(n: int) -> str:
        return 'import torch\nlib = torch.library.Library("my", "DEF")\nlib.define("f(Tensor x) -> Tensor ' + "\\\\" * n + '")\n'

    _linear(py, lambda text: load_registration_file("x.py", text), 500, 10_000)


def test_a_cpp_def_string_full_of_escapes_reads_in_linear_time():
    def cpp(n: int) -> str:
        return 'TORCH_LIBRARY(my, m) {\n  m.def("f(Tensor x) -> Tensor ' + '\\"' * n + '");\n}\n'

    _linear(cpp, lambda text: load_cpp_registrations("x.cpp", text, macro_definitions("x.cpp", text)), 500, 10_000)


def test_a_literal_for_loop_around_many_impl_calls_reads_in_linear_time():
    def py(n: int) -> str:
        items = ", ".join(f'"op{i}"' for i in range(n))
        calls = "".join(f'    lib.impl(name, f{i}, "CPU")\n' for i in range(n))
        return f'import torch\nlib = torch.library.Library("my", "IMPL")\nfor name in [{items}]:\n{calls}'

    _linear(py, lambda text: load_registration_file("x.py", text), 100, 2000)


def test_a_macro_that_expands_to_a_billion_tokens_is_not_expanded():
    def chain(levels: int) -> str:
        lines = ["#define A0 x"] + [f"#define A{i + 1} " + " ".join([f"A{i}"] * 10) for i in range(levels)]
        return "\n".join(lines + [f'TORCH_LIBRARY(A{levels}, m) {{ m.def("f(Tensor x) -> Tensor"); }}']) + "\n"

    text = chain(9)  # 10^9 tokens, about 450 bytes
    assert len(text.encode()) < 600
    records = load_cpp_registrations("x.cpp", text, macro_definitions("x.cpp", text))
    assert [d.namespace for d in records.defs] == ["A9"]  # taken as written, not expanded
    ratio = _cpu(lambda: load_cpp_registrations("x.cpp", chain(9), macro_definitions("x.cpp", chain(9)))) / _cpu(lambda: load_cpp_registrations("x.cpp", chain(2), macro_definitions("x.cpp", chain(2))))
    assert ratio < BOUND


def test_fifteen_thousand_unclosed_ifdefs_are_refused_at_the_depth_bound():
    text = "#ifdef X\n" * 15_000 + 'TORCH_LIBRARY(my, m) { m.def("f(Tensor x) -> Tensor"); }\n'
    try:
        read_cpp_registrations("x.cpp", text)
    except CppReadError as exc:
        assert (exc.line, exc.message) == (MAX_CONDITIONAL_DEPTH + 1, f"#if blocks nested more than {MAX_CONDITIONAL_DEPTH} deep: opkit does not read this file")
    else:
        raise AssertionError("not refused")
    ok = "#ifdef X\n" * MAX_CONDITIONAL_DEPTH + 'TORCH_LIBRARY(my, m) { m.def("f(Tensor x) -> Tensor"); }\n' + "#endif\n" * MAX_CONDITIONAL_DEPTH
    assert len(read_cpp_registrations("x.cpp", ok).defs[0].conditions) == MAX_CONDITIONAL_DEPTH


def test_an_opkit_json_with_a_long_schema_reads_in_linear_time(tmp_path):
    import json

    from opkit.generate.spec import load_spec

    def project(n: int) -> str:
        directory = tmp_path / f"p{n}"
        directory.mkdir()
        schema = "my_op(" + ", ".join(f"Tensor x{i}" for i in range(n)) + ") -> Tensor"
        spec = {"name": "my_op", "schema": schema, "style": "op-plugin", "namespace": "npu", "dtypes": ["float"], "formats": ["ND"],
                "soc": ["ascend910b1"], "out_like": "x0", "vendor": "my_op", "opkit_version": "0.1.0"}  # fmt: skip
        (directory / "opkit.json").write_text(json.dumps(spec))
        return str(directory)

    _linear(project, lambda directory: _refused_or_read(lambda: load_spec(directory)), 1500, 30_000)
