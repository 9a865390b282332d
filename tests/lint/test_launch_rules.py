"""The kernel-launch rules (K) on host C++ written here in the patterns real launchers use.

Eight launchers, one per launch mode TorchAir's kernel-launch example documents: exactly modes 4, 5 and 7
are wrong, and exactly K001, K002 and K003 fire, at their launches; also with every comment stripped, with
the functions renamed, and with comments that say the opposite of the code.
"""

from __future__ import annotations

import re

import pytest

from opkit.formats.kernel_launches import DRAINED, NO_DRAIN, NPU_STREAM, read_kernel_launches
from opkit.lint import Selection, lint

KERNEL = """\
#include "kernel_operator.h"
__global__ __vector__ void scale_kernel(GM_ADDR src, GM_ADDR dst, uint32_t n)
{
    // the body is irrelevant to the launch rules
}
"""

# mode -> (launcher body, whether it is wrong). Every launcher writes `out` from `x` with scale_kernel.
PREAMBLE = """\
    uint32_t n = static_cast<uint32_t>(x.numel());
    auto src = static_cast<uint8_t *>(x.mutable_data_ptr());
"""
MODES = {
    1: ("""\
    auto s = c10_npu::getCurrentNPUStream();  // the NPUStream object: <<<>>> drains the queue
    at::Tensor out = at::empty_like(x);
{pre}    auto dst = static_cast<uint8_t *>(out.mutable_data_ptr());
    scale_kernel<<<8, nullptr, s>>>(src, dst, n);
    return out;
""", False),
    2: ("""\
    auto s = c10_npu::getCurrentNPUStream().stream(true);
    at::Tensor out = at::empty_like(x);
{pre}    auto dst = static_cast<uint8_t *>(out.mutable_data_ptr());
    scale_kernel<<<8, nullptr, s>>>(src, dst, n);
    return out;
""", False),
    3: ("""\
    auto s = c10_npu::getCurrentNPUStream().stream(false);
    at::Tensor out = at::empty_like(x);
{pre}    auto dst = static_cast<uint8_t *>(out.mutable_data_ptr());
    auto call = [=]() -> int {
        scale_kernel<<<8, nullptr, s>>>(src, dst, n);
        return 0;
    };
    at_npu::native::OpCommand::RunOpApiV2("scale", call);
    return out;
""", False),
    4: ("""\
    auto s = c10_npu::getCurrentNPUStream().stream(false);
    at::Tensor out = at::empty_like(x);
{pre}    auto dst = static_cast<uint8_t *>(out.mutable_data_ptr());
    /* queued through OpCommand::RunOpApiV2 (this comment is wrong) */
    scale_kernel<<<8, nullptr, s>>>(src, dst, n);
    return out;
""", True),
    5: ("""\
    c10_npu::NPUStream s = c10_npu::getCurrentNPUStream();
    at::Tensor out = at::empty_like(x);
{pre}    auto dst = static_cast<uint8_t *>(out.mutable_data_ptr());
    at_npu::native::OpCommand::RunOpApiV2("scale", [=]() -> int {
        scale_kernel<<<8, nullptr, s>>>(src, dst, n);  // stream(false)
        return 0;
    });
    return out;
""", True),
    6: ("""\
    auto s = c10_npu::getCurrentNPUStream().stream(true);
    at::Tensor out = at::zeros_like(x);
{pre}    auto dst = static_cast<uint8_t *>(out.mutable_data_ptr());
    auto call = [=]() -> int {
        scale_kernel<<<8, nullptr, s>>>(src, dst, n);
        return 0;
    };
    at_npu::native::OpCommand::RunOpApiV2("scale", call);
    return out;
""", False),
    7: ("""\
    auto s = c10_npu::getCurrentNPUStream().stream(true);
    at::Tensor out = at::zeros_like(x);
{pre}    auto dst = static_cast<uint8_t *>(out.mutable_data_ptr());
    scale_kernel<<<8, nullptr, s>>>(src, dst, n);
    return out;
""", True),
    8: ("""\
    auto s = c10_npu::getCurrentNPUStream().stream();
    at::Tensor out = at::empty_like(x);
{pre}    auto dst = static_cast<uint8_t *>(out.mutable_data_ptr());
    scale_kernel<<<8, nullptr, s>>>(src, dst, n);
    return out;
""", False),
}
WRONG = {4: "K001", 5: "K002", 7: "K003"}


def launcher_file(name_of=lambda mode: f"scale{mode}") -> str:
    parts = [KERNEL, "namespace my_ops {\n"]
    for mode, (body, _) in MODES.items():
        filled = body.replace("{pre}", PREAMBLE)
        parts.append(f"\nat::Tensor {name_of(mode)}(const at::Tensor &x)\n{{\n{filled}}}\n")
    parts.append("\n}  // namespace my_ops\n")
    return "".join(parts)


def strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text), flags=re.S)


def launch_lines(text: str) -> dict[int, int]:
    """mode -> line of its launch."""
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if "scale_kernel<<<" in line]
    return dict(zip(MODES, lines))


def k_findings(tmp_path, text: str, name: str = "launchers.asc"):
    path = tmp_path / name
    path.write_text(text)
    return [f for f in lint([str(path)], use_cache=False, selection=Selection(select=("K",))).findings]


VARIANTS = {
    "as written": launcher_file(),
    "comments stripped": strip_comments(launcher_file()),
    "functions renamed": launcher_file(lambda mode: f"op_{(mode * 7) % 9}_impl"),
    "names swapped": launcher_file(lambda mode: f"ascendc_add{9 - mode}"),
}


@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
def test_exactly_the_three_wrong_launch_modes_fire(tmp_path, variant):
    text = VARIANTS[variant]
    lines = launch_lines(text)
    got = sorted((f.code, f.line) for f in k_findings(tmp_path, text))
    assert got == sorted((code, lines[mode]) for mode, code in WRONG.items())


def test_the_reader_classifies_each_modes_stream_and_queue(tmp_path):
    launches = read_kernel_launches("x.asc", launcher_file()).launches
    assert [(launch.origin.kind, launch.queued) for launch in launches] == [
        (NPU_STREAM, False), (DRAINED, False), (NO_DRAIN, True), (NO_DRAIN, False),
        (NPU_STREAM, True), (DRAINED, True), (DRAINED, False), (DRAINED, False),
    ]  # fmt: skip
    assert [w.text for w in launches[6].queued_work] == ["at::zeros_like(x)"] and launches[1].queued_work == ()
    assert {launch.function for launch in launches} == {f"scale{m}" for m in MODES}


def test_messages_name_the_launch_the_stream_and_the_fix(tmp_path):
    by_code = {f.code: f for f in k_findings(tmp_path, launcher_file())}
    assert by_code["K001"].message.startswith("scale_kernel<<<8, nullptr, s>>> launches on a stream(false) stream (line ")
    assert "OpCommand::RunOpApiV2" in by_code["K001"].hint
    assert "deadlock" in by_code["K002"].message
    assert "after at::zeros_like(x) (line " in by_code["K003"].message


def test_a_launch_in_a_dispatch_lambda_inside_a_queued_lambda_is_queued(tmp_path):
    """A templated kernel launched per dtype from AT_DISPATCH lambdas, all inside the lambda OpCommand queues."""
    text = """\
at::Tensor add_npu(const at::Tensor &x, const at::Tensor &y)
{
    auto z = at::empty_like(x);
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    auto call = [=]() -> int {
        AT_DISPATCH_SWITCH(x.scalar_type(), "add", AT_DISPATCH_CASE(at::kFloat, [&] {
            add_kernel<float><<<8, nullptr, stream>>>(x.data_ptr(), y.data_ptr(), z.data_ptr());
        }));
        return 0;
    };
    at_npu::native::OpCommand::RunOpApi("Add", call);
    return z;
}
"""
    assert k_findings(tmp_path, text) == []
    assert k_findings(tmp_path, text.replace('at_npu::native::OpCommand::RunOpApi("Add", call);', "call();")) != []


def test_a_stream_taken_inline_and_a_cpp_file_are_judged_too(tmp_path):
    text = "void f(const at::Tensor &x)\n{\n    k<<<4, nullptr, c10_npu::getCurrentNPUStream().stream(false)>>>(x.data_ptr());\n}\n"
    (finding,) = k_findings(tmp_path, text, "launch.cpp")
    assert (finding.code, finding.line, finding.column) == ("K001", 3, 5)


def test_a_stream_of_unknown_origin_and_strings_are_not_judged(tmp_path):
    text = """\
void run(aclrtStream stream, const at::Tensor &x)
{
    const char *doc = "k<<<1, nullptr, c10_npu::getCurrentNPUStream().stream(false)>>>()";
    k<<<1, nullptr, stream>>>(x.data_ptr());
}
"""
    assert k_findings(tmp_path, text) == []


HOST_WAITS = {
    "K101": "    float scale = s.item<float>();\n",
    "K102": "    auto host = s.to(at::kCPU);\n",
    "K103": "    aclrtSynchronizeStream(stream);\n",
    "K104": "    int64_t rows = s.data_ptr<int64_t>()[0];\n",
}


@pytest.mark.parametrize("code", HOST_WAITS)
def test_host_work_that_waits_for_the_device_in_an_op_launcher(tmp_path, code):
    body = "    auto stream = c10_npu::getCurrentNPUStream();\n" + HOST_WAITS[code] + "    k<<<8, nullptr, stream>>>(x.data_ptr());\n    return x;\n"
    text = f"at::Tensor op(const at::Tensor &x, const at::Tensor &s)\n{{\n{body}}}\n"
    (finding,) = k_findings(tmp_path, text)
    assert (finding.code, finding.line) == (code, 4)
    # the same host code in a test program's main(), which no graph captures, is not judged
    program = text.replace("at::Tensor op(const at::Tensor &x, const at::Tensor &s)", "int main()").replace("return x;", "return 0;")
    assert k_findings(tmp_path, program, "main.asc") == []


def test_a_pointer_handed_to_the_kernel_is_no_host_read(tmp_path):
    text = "at::Tensor op(const at::Tensor &x)\n{\n    auto p = static_cast<uint8_t *>(x.data_ptr());\n    auto n = *x.sizes().begin();\n    k<<<8, nullptr, c10_npu::getCurrentNPUStream()>>>(p, n);\n    return x;\n}\n"
    assert k_findings(tmp_path, text) == []


def test_noqa_and_unreadable_host_code(tmp_path):
    text = "void f(const at::Tensor &x)\n{\n    k<<<4, nullptr, c10_npu::getCurrentNPUStream().stream(false)>>>(x.data_ptr());  // noqa: K001\n}\n"
    assert k_findings(tmp_path, text) == []
    path = tmp_path / "broken.asc"
    path.write_text('void f() { k<<<1, nullptr, s>>>("unterminated); }\n')
    (finding,) = lint([str(path)], use_cache=False).findings
    assert finding.code == "E002" and finding.line == 1 and "unterminated string" in finding.message


def test_a_directory_walk_reads_asc_files_and_cpp_files_that_launch(tmp_path):
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "a.asc").write_text(launcher_file())
    (tmp_path / "csrc" / "b.cpp").write_text("void f(const at::Tensor &x)\n{\n    k<<<4, nullptr, c10_npu::getCurrentNPUStream().stream(false)>>>(x.data_ptr());\n}\n")
    (tmp_path / "csrc" / "tiling.cpp").write_text("int tiling() { return 1 << 3; }\n")  # neither an OpDef nor a launch: skipped
    result = lint([str(tmp_path)], use_cache=False)
    assert sorted((f.path.rsplit("/", 1)[-1], f.code) for f in result.findings) == [("a.asc", "K001"), ("a.asc", "K002"), ("a.asc", "K003"), ("b.cpp", "K001")]
    assert result.files == 2
