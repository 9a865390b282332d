"""Hardening III: what `opkit check` lets the compiler read."""

from __future__ import annotations

from tests.check.conftest import needs_compiler

LIST_OP = "list_op(Tensor x, int[] sizes=[1,1]) -> Tensor"


@needs_compiler
def test_include_of_dev_zero_is_refused_not_read(generated, run_opkit, cann_include):
    project = generated("list_op", LIST_OP)
    source = project / "ListOp" / "op_kernel" / "list_op.cpp"
    source.write_text('#include "/dev/zero"\n' + source.read_text())
    code, output = run_opkit("check", str(project), "--cann", str(cann_include))
    assert code == 1, output
    assert "ListOp/op_kernel/list_op.cpp:1:1: error: #include '/dev/zero' names something that is not a plain file" in output


@needs_compiler
def test_include_of_a_fifo_through_a_project_header_is_refused(generated, run_opkit, cann_include):
    import os

    project = generated("list_op", LIST_OP)
    kernel = project / "ListOp" / "op_kernel"
    os.mkfifo(kernel / "pipe.h")
    (kernel / "wrapper.h").write_text('#pragma once\n#include "pipe.h"\n')
    source = kernel / "list_op.cpp"
    source.write_text('#include "wrapper.h"\n' + source.read_text())
    code, output = run_opkit("check", str(project), "--cann", str(cann_include))
    assert code == 1, output
    assert "wrapper.h:2:1: error: #include 'pipe.h' names something that is not a plain file" in output
