"""The stand-in kernel_operator.h declares what a normal vector kernel uses, and --host-only leaves a .asc's kernel
bodies out: a kernel written against the real Ascend C API compiles in `opkit check`."""

from __future__ import annotations

import os
import subprocess

import pytest

from opkit.check import find_compiler
from opkit.check.compile import BASE_FLAGS, KERNEL_FLAGS, STAND_IN_INCLUDE
from opkit.check.launcher import EMPTIED_BODY, without_kernel_bodies
from tests.check.conftest import needs_compiler
from tests.check.test_check import MY_OP

# A kernel of my own in the shape of the Ascend C samples: half in, float compute, half out.
HALF_KERNEL = """
class KernelScale {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t n)
    {
        xGm.SetGlobalBuffer((__gm__ half *)x + n * AscendC::GetBlockIdx(), n);
        yGm.SetGlobalBuffer((__gm__ half *)y + n * AscendC::GetBlockIdx(), n);
        pipe.InitBuffer(inQueue, 2, n * sizeof(half));
        pipe.InitBuffer(outQueue, 2, n * sizeof(half));
        pipe.InitBuffer(work, n * sizeof(float));
        length = n;
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<half> x = inQueue.AllocTensor<half>();
        AscendC::DataCopyPad(x, xGm, AscendC::DataCopyExtParams(1, length * sizeof(half), 0, 0, 0), AscendC::DataCopyPadExtParams<half>(false, 0, 0, 0));
        inQueue.EnQue(x);
        AscendC::LocalTensor<half> in = inQueue.DeQue<half>();
        AscendC::LocalTensor<float> f = work.Get<float>();
        AscendC::Cast(f, in, AscendC::RoundMode::CAST_NONE, length);
        AscendC::Exp(f, f, length);
        AscendC::Muls(f, f, 0.5f, length);
        AscendC::Adds(f, f, 1.0f, length);
        AscendC::Mul(f, f, f, length);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::LocalTensor<half> out = outQueue.AllocTensor<half>();
        AscendC::Cast(out, f, AscendC::RoundMode::CAST_ROUND, length);
        AscendC::Duplicate(f, 0.0f, length);
        half one = 1.0f;
        bfloat16_t b = static_cast<float>(one);
        int8_t small = 1;
        (void)b; (void)small;
        outQueue.EnQue(out);
        inQueue.FreeTensor(in);
        AscendC::LocalTensor<half> done = outQueue.DeQue<half>();
        AscendC::DataCopy(yGm, done, length);
        outQueue.FreeTensor(done);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, 2> inQueue;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 2> outQueue;
    AscendC::TBuf<AscendC::TPosition::VECCALC> work;
    AscendC::GlobalTensor<half> xGm, yGm;
    uint32_t length = 0;
};

extern "C" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    KernelScale op;
    op.Init(x, y, 128);
    op.Process();
}
"""


def _compile(tmp_path, text: str) -> subprocess.CompletedProcess:
    source = tmp_path / "kernel.cpp"
    source.write_text('#include "kernel_operator.h"\n' + text)
    command = [find_compiler(), *BASE_FLAGS, *KERNEL_FLAGS, f"-I{STAND_IN_INCLUDE}", str(source)]
    return subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))  # plain quotes


@needs_compiler
def test_a_half_kernel_compiles_against_the_stand_in(tmp_path):
    done = _compile(tmp_path, HALF_KERNEL)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr


@needs_compiler
@pytest.mark.parametrize(
    "call, message",
    [
        ("AscendC::Exp(f, f);", "no matching function for call to 'Exp"),  # the argument count is still checked
        ("AscendC::Frobnicate(f, f, length);", "'Frobnicate' is not a member of 'AscendC'"),
        ("AscendC::PipeBarrier<PIPE_Q>();", "'PIPE_Q' was not declared"),
    ],
)
def test_a_wrong_call_still_fails(tmp_path, call, message):
    done = _compile(tmp_path, HALF_KERNEL.replace("AscendC::Exp(f, f, length);", call))
    assert done.returncode != 0 and message in done.stderr, done.stderr


@needs_compiler
def test_a_generated_kernel_using_half_passes_opkit_check(generated, run_opkit):
    project = generated("my_op", MY_OP)
    kernel = next(project.glob("*/op_kernel/my_op.cpp"))
    kernel.write_text(kernel.read_text() + "\n[[maybe_unused]] static AscendC::GlobalTensor<half> opkit_half_gm;\n[[maybe_unused]] static const half opkit_one = 1.0f;\n")
    code, output = run_opkit("check", str(project))
    assert code == 0 and "0 error(s)" in output, output


def test_without_kernel_bodies_keeps_every_line_in_place():
    text = (
        "class K {\n    __aicore__ inline float F(int a)\n    {\n        return Unknown(a);\n    }\n    __aicore__ void D(int);\n};\n"
        'extern "C" __global__ __aicore__ void k(GM_ADDR x) {\n    Micro::Reg r;\n}\n'
        "__global__ __vector__ void v(GM_ADDR x)\n{\n    Other::Api();\n}\nvoid host() { k<<<1, nullptr, s>>>(x); }\n"
    )
    out = without_kernel_bodies(text)
    assert out.count("\n") == text.count("\n")
    assert "Unknown" not in out and "Micro" not in out and "Other" not in out
    assert out.count(EMPTIED_BODY) == 3 and "__aicore__ void D(int);" in out
    assert out.splitlines()[-1] == "void host() { k<<<1, nullptr, s>>>(x); }"
