"""Cases of github:Ascend/torchair tests/st/torchair_aclgraph_reinplace_st.py through opkit's verify.

TorchAir builds some of these graphs by hand (make_fx of an ``auto_functionalized_v2`` call) and runs one
pass; here each is the model whose functionalized graph has that shape, run end to end. Each test names
its source line. TorchAir's tests assert on graph structure only (their capture and replay are no-ops);
opkit also compares every call with eager.
"""

from __future__ import annotations

import pytest
import torch
from tair_check import after, assert_pass, assert_reinplaced, checks, entry

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("npugraph_ex_wheel")]

SRC = "tests/st/torchair_aclgraph_reinplace_st.py"
tair = torch.ops.tair


def test_view_inplaced_functionalize_v2():
    # torchair_aclgraph_reinplace_st.py:208: a view taken but unused, then boo on the whole input: re-inplaced
    def f(x):
        x.select(0, 0)
        tair.boo(x)

    report = entry(f, (torch.randn(3),))
    assert_pass(report)
    assert_reinplaced(report, "tair.boo.default")
    assert report.npugraph_ex.mutated_user_inputs


def test_view_inplaced2_functionalize_v2():
    # torchair_aclgraph_reinplace_st.py:258: another view of the input returned: still re-inplaced
    def f(x):
        x.select(0, 0)
        another = x[2]
        tair.boo(x)
        return another

    report = entry(f, (torch.randn(3),))
    assert_pass(report)
    assert_reinplaced(report, "tair.boo.default")


def test_views_not_inplaced_functionalize_v2():
    # torchair_aclgraph_reinplace_st.py:311: a view of the input read after the op. In TorchAir's hand-built
    # graph the view predates the mutation and the clone stays; traced from Python the view is taken again
    # from the mutated input, so the op is re-inplaced and the model still equals eager.
    def f(x):
        another = x[2]
        tair.boo(x)
        return another * 10

    report = entry(f, (torch.randn(3),))
    assert_pass(report)
    assert_reinplaced(report, "tair.boo.default")


def test_views_not_inplaced2_functionalize_v2():
    # torchair_aclgraph_reinplace_st.py:370: the mutation's result unused and nothing returned
    def f(x):
        x.select(0, 0)
        _ = x[2]
        tair.boo(x)

    report = entry(f, (torch.randn(3),))
    assert_pass(report)


def test_views_not_inplaced3_functionalize_v2():
    # torchair_aclgraph_reinplace_st.py:423: boo on a view of an intermediate (ones(10)[2]): the intermediate
    # is not a graph input, so no input is mutated; the clone TorchAir expects may stay
    def f(x):
        a = torch.ones(10)
        another = a[2]
        tair.boo(a[2])
        return another + x.sum()

    report = entry(f, (torch.randn(3),))
    assert_pass(report)
    assert not report.npugraph_ex.mutated_user_inputs


def test_multiple_mutations():
    # torchair_aclgraph_reinplace_st.py:476: sin(x, out); sin(out, out) twice: no reinplacing failure
    def f(x, out):
        tair.sin.default(x, out)
        tair.sin.default(out, out)
        tair.sin.default(out, out)
        return out

    report = entry(f, (torch.randn(3), torch.randn(3)))
    assert_pass(report)
    assert_reinplaced(report, "tair.sin.default")
    assert "undeclared_mutation" not in checks(report)


def test_multiple_intermediate():
    # torchair_aclgraph_reinplace_st.py:496: the same on an empty_like intermediate
    def f(x):
        out = torch.empty_like(x)
        tair.sin(x, out)
        tair.sin(out, out)
        tair.sin(out, out)
        return out

    report = entry(f, (torch.randn(3),))
    assert_pass(report)
    assert_reinplaced(report, "tair.sin.default")


def test_multi_output_intermediate():
    # torchair_aclgraph_reinplace_st.py:516: sin_cos into two empty_like outputs, no missed bytes
    def f(x):
        out1 = torch.empty_like(x)
        out2 = torch.empty_like(x)
        tair.sin_cos.default(x, out1, out2)
        return out1, out2, x**2

    report = entry(f, (torch.randn(3),))
    assert_pass(report)
    assert_reinplaced(report, "tair.sin_cos.default")


def _mutate_two_views(b):
    tair.mutate_op.default([b[0], b[1]])


def test_lists_functionalize_v2():
    # torchair_aclgraph_reinplace_st.py:536: mutate_op on two views of one input ([b[0], b[1]]): "we can
    # inplace the base y, no clones emitted"; eager turns [0.3, 0.4] into [2.3, 3.4], so does every replay
    import torch._inductor.config as inductor_config

    with inductor_config.patch({"enable_auto_functionalized_v2": True}):
        report = entry(_mutate_two_views, (torch.tensor([0.3, 0.4]),))
    assert_pass(report)
    assert "clone" not in after(report)
    assert report.npugraph_ex.mutated_user_inputs


def test_lists_old_functionalize():
    # torchair_aclgraph_reinplace_st.py:567: the same under auto_functionalized (v1). TorchAir asserts no
    # reinplacing failure (it never calls the compiled model). Run, the wheel decomposes v1 with a clone of
    # each view and copies back into the input; the values equal eager, so opkit passes it as TorchAir does
    # and says so in a warning.
    import torch._inductor.config as inductor_config

    with inductor_config.patch({"enable_auto_functionalized_v2": False}):
        report = entry(_mutate_two_views, (torch.tensor([0.3, 0.4]),))
    assert "clone" in after(report)
    assert_pass(report)
    assert [w.check for w in report.warnings] == ["v1_list_copy_back"], str(report)
    assert all(c.ok for c in report.comparisons)




@pytest.mark.usefixtures("sin_cos_reinplaceable")
def test_multi_reinplace_intermediate_no_later_usage():
    # torchair_aclgraph_reinplace_st.py:597: the Functionalize kernel renames sin_cos_inplace to
    # sin_cos_functional; npugraph_ex's pass turns it back into sin_cos_inplace (dynamic=True)
    def f(x):
        a = torch.empty_like(x)
        b = torch.empty_like(x)
        return tair.sin_cos_inplace(x, a, b)

    report = entry(f, (torch.randn([3]),), dynamic=True)
    code = after(report)
    assert "tair.sin_cos_inplace.default" in code and "tair.sin_cos_functional" not in code, code
    assert "op_not_in_graph" not in checks(report)
    # The returned result is then read as getitem 0 of an empty_like (the pass rewires the functional op's
    # outputs onto its arguments): the compiler's defect, which opkit names.
    assert "backend_defect" in checks(report), str(report)


@pytest.mark.usefixtures("sin_cos_reinplaceable")
def test_multi_reinplace_intermediate_has_later_usage():
    # torchair_aclgraph_reinplace_st.py:656: b used later; multi-inplace ops skip the usage check, so the
    # functional op is still replaced, and its outputs are rewired onto indexing the empty_like buffers
    # (getitem on a tensor): the compiler's own defect; opkit's values differ from eager and it names it.
    def f(x):
        a = torch.empty_like(x)
        b = torch.empty_like(x)
        ret = tair.sin_cos_inplace(x, a, b)
        return ret, b + 1.0

    report = entry(f, (torch.randn([3]),), dynamic=True)
    code = after(report)
    assert "tair.sin_cos_inplace.default" in code and "tair.sin_cos_functional" not in code, code
    assert "op_not_in_graph" not in checks(report)
    assert "backend_defect" in checks(report), str(report)


def _stream_switch_enter(tag: str, priority: int) -> None:
    # What TorchAir's torchair.scope.npu_stream_switch(tag, priority) puts in the graph: npugraph_ex's own
    # scope op with the user-stream keys, which its passes read as a stream region (and on one host its
    # tagged event record/wait run in order)
    torch.ops.npugraph_ex.scope_enter(["_user_stream_label", "_user_stream_priority", "_enable_inner_parallel"], [tag, str(priority), "True"])


@pytest.mark.usefixtures("sin_cos_reinplaceable")
@pytest.mark.parametrize("across_streams", [True, False], ids=["a used on stream 1", "a used on the same stream"])
def test_multi_reinplace_intermediate_cross_stream_fail(across_streams):
    # torchair_aclgraph_reinplace_st.py:719: a used inside npu_stream_switch('1', 3): re-inplacing is refused
    # (cross-stream use), so the functional op stays and nothing fails. Ported with zeros_like where TorchAir
    # writes empty_like: the kernel takes sin of the buffer, and an empty one's contents differ from run to
    # run (TorchAir's test never compares values; opkit does).
    def f(x):
        a = torch.zeros_like(x)
        b = torch.zeros_like(x)
        ret = tair.sin_cos_inplace(x, a, b)
        if across_streams:
            _stream_switch_enter("1", 3)
        a_use = a + 1.0
        if across_streams:
            torch.ops.npugraph_ex.scope_exit()
        return ret, a_use

    report = entry(f, (torch.randn([3]),), dynamic=True)
    code = after(report)
    if across_streams:
        assert "tair.sin_cos_functional.default" in code and "tair.sin_cos_inplace" not in code, code
        assert "npugraph_ex.tagged_event_wait" in code, code  # the stream region's ordering, emulated in order
        assert_pass(report)
    else:  # the counterpart: on one stream the pass re-inplaces, with the tuple-index defect named above
        assert "tair.sin_cos_inplace.default" in code and "tair.sin_cos_functional" not in code, code
        assert "backend_defect" in checks(report), str(report)


def test_self_copy_no_crash():
    # torchair_aclgraph_reinplace_st.py:773: copy_(x, x) does not crash the pass, and the self-copy stays
    def f(x):
        x.copy_(x)
        return x

    report = entry(f, (torch.randn(3),))
    assert_pass(report)
    assert "copy_back" not in checks(report)
