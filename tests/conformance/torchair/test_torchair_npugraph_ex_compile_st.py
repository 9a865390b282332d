"""Cases of github:Ascend/torchair tests/st/torchair_npugraph_ex_compile_st.py through opkit's verify.

TorchAir asserts on npugraph_ex's DEBUG logs (the graph after its passes, "needs to be recaptured"),
its counters and its option checks; opkit's report carries the same evidence: the graph after the
passes, captures, recaptures for moved inputs, replays, fallbacks and swallowed pass failures.
"""

from __future__ import annotations

import pytest
import torch
from tair_check import after, assert_pass, checks, entry

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("npugraph_ex_wheel")]

tair = torch.ops.tair


class TwoLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = torch.nn.Linear(2, 2)
        self.linear2 = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear1(x) + self.linear2(x)


class Linear(torch.nn.Module):
    def __init__(self, n: int = 2):
        super().__init__()
        self.linear = torch.nn.Linear(n, n)

    def forward(self, x):
        return self.linear(x)


def test_aclgraph_capture_and_replay():
    # torchair_npugraph_ex_compile_st.py:104: two linears, clone_input=False: captured once, replayed
    report = entry(TwoLinear(), (torch.randn([3, 2]),), options={"clone_input": False})
    assert_pass(report)
    assert report.npugraph_ex.captures == 1
    assert report.npugraph_ex.replays >= 1


def test_aclgraph_dynamic_sym_in_tensor():
    # torchair_npugraph_ex_compile_st.py:275: dynamic=True, shapes [4, 3] then [5, 3]: one compiled model
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear1 = torch.nn.Linear(3, 3)
            self.linear2 = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.linear1(x) + self.linear2(x)

    report = entry(Model(), (torch.randn([4, 3]),), options={"clone_input": False, "input_inplace_pass": True}, dynamic=True)
    assert_pass(report)
    assert report.graph_count == 1 and report.npugraph_ex.captures >= 2


def test_aclgraph_dynamic_sym_in_scale_and_tensor():
    # torchair_npugraph_ex_compile_st.py:298: a Python scalar input under dynamic=True: each new graph key
    # (the scalar, the shape) is captured, one FX graph. As TorchAir calls it: scale 4, then 5 ("No find
    # captured AclGraph": a capture), then 4 again ("Find captured AclGraph": a replay), then new shapes
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear1 = torch.nn.Linear(2, 2)
            self.linear2 = torch.nn.Linear(2, 2)

        def forward(self, x, s):
            return self.linear1(x), torch.add(self.linear2(x), s)

    options = {"clone_input": False, "input_inplace_pass": True, "clone_output": True}
    report = entry(Model(), (torch.randn([5, 2]), 4), options=options, dynamic=True)
    assert_pass(report)
    run = report.npugraph_ex
    assert run.calls[:3] == ("shape 1", "shape 1, scalars moved by one", "shape 1, scalars as at first")
    # shape 1 with 4, with 5, then three new shapes: five graph keys; the return to 4 replays, it captures nothing
    assert report.graph_count == 1 and run.captures == 2 + (len(run.calls) - 3), run
    assert all(c.ok for c in report.comparisons)


@pytest.mark.parametrize("shape", [[2, 3, 4, 5], [4, 4, 2, 3]], ids=["formula_reaches_1", "duck_sized"])
def test_custom_infer_dynamic(shape):
    # torchair_st_stub_aclgraph_utils.py:423-433 (custom_infer, a Meta shape formula) compiled dynamic=True as
    # the st files compile: the model is one graph; Dynamo's recompiles for opkit's own sweep shapes (equal
    # sizes duck-sized, (d1*d1)//d0 reaching 1) are said in a note, not counted as graphs or breaks
    report = entry(lambda d, o: tair.custom_infer(d, o), (torch.randn(shape), torch.randn(2)), dynamic=True)
    assert_pass(report)
    assert report.graph_count == 1 and report.graph_break_count == 0


def test_keep_inference_input_mutations_true():
    # torchair_npugraph_ex_compile_st.py:156: x.mul_(2) on the input: a new input address recaptures
    class Model(torch.nn.Module):
        def forward(self, x):
            x.mul_(2)
            return x + 1

    report = entry(Model(), (torch.randn([3, 2]),), options={"clone_input": False})
    assert_pass(report)
    assert report.npugraph_ex.recaptures_for_moved_inputs >= 1
    assert report.npugraph_ex.mutated_user_inputs


def test_keep_inference_input_mutations_false():
    # torchair_npugraph_ex_compile_st.py:185: x.div_(2) with inplace_pass: no warning logged
    class Model(torch.nn.Module):
        def forward(self, x):
            x.div_(2)
            return x - 1

    report = entry(Model(), (torch.randn([3, 2]),), options={"inplace_pass": True, "clone_input": False})
    assert_pass(report)
    assert not report.npugraph_ex.skipped_passes


def test_default_enable_reinplace_pass():
    # torchair_npugraph_ex_compile_st.py:379: the graph after the passes holds add_ and mul_
    class Model(torch.nn.Module):
        def forward(self, x, y):
            a = x.clone()
            b = a.add(1)
            y.mul_(2)
            return b, y

    report = entry(Model(), (torch.randn([8, 8]), torch.randn([8, 8])), options={"clone_input": False, "remove_noop_ops": False})
    assert_pass(report)
    code = after(report)
    assert "aten.add_.Tensor" in code and "aten.mul_.Tensor" in code, code


@pytest.mark.parametrize("add, mul", [(5, 7), (1, 3)], ids=["line408_reinplace_pass_with_slice", "line432_mutated_input_pass_with_slice"])
def test_input_inplace_pass_with_slice(add, mul):
    # torchair_npugraph_ex_compile_st.py:408 and :432: add_/mul_ through a slice of the input
    class Model(torch.nn.Module):
        def forward(self, x):
            x = x[:2]
            x.add_(add)
            x.mul_(mul)
            return x

    report = entry(Model(), (torch.randn([8, 8]),), options={"clone_input": False, "input_inplace_pass": True})
    assert_pass(report)
    assert report.npugraph_ex.mutated_user_inputs


def test_disable_reinplace_mutated_input():
    # torchair_npugraph_ex_compile_st.py:456: y.mul(3) is not in-place: add_ after the passes, no copy_
    class Model(torch.nn.Module):
        def forward(self, x, y):
            a = x.clone()
            b = a.add(1)
            y.mul(3)
            return b, y

    options = {"clone_input": False, "input_inplace_pass": True, "remove_noop_ops": False}
    report = entry(Model(), (torch.randn([8, 8]), torch.randn([8, 8])), options=options)
    assert_pass(report)
    code = after(report)
    assert "aten.add_.Tensor" in code and "aten.copy_.default" not in code, code


def test_disable_reinplace_inplaceable_ops():
    # torchair_npugraph_ex_compile_st.py:487: mul_ then add_ on the input: add_ re-inplaced. TorchAir's
    # master keeps mul functional and a copy_ into x ("cannot erase copy_ node in this case", accepted);
    # the torch-npu 2.13.0 wheel re-inplaces mul_ too and drops the copy_. Either way the model passes.
    class Model(torch.nn.Module):
        def forward(self, x):
            x.mul_(2)
            x.add_(1)
            return x

    report = entry(Model(), (torch.randn([5, 8]),), options={"clone_input": False, "input_inplace_pass": True})
    assert "aten.add_.Tensor" in after(report)
    assert_pass(report)


def test_keep_inference_input_mutations_false_enable_reinplace_ops():
    # torchair_npugraph_ex_compile_st.py:524: a = x.clone(); a.add_(1) with input_inplace_pass=False
    class Model(torch.nn.Module):
        def forward(self, x, y):
            a = x.clone()
            b = a.add_(1)
            y.mul(5)
            return b, x

    options = {"clone_input": False, "input_inplace_pass": False, "remove_noop_ops": False}
    report = entry(Model(), (torch.randn([8, 8]), torch.randn([8, 8])), options=options)
    assert_pass(report)
    assert "aten.add_.Tensor" in after(report)


def test_keep_inference_input_mutations_false_disable_reinplace_ops():
    # torchair_npugraph_ex_compile_st.py:548: x.add_(1) on the input, returned twice
    class Model(torch.nn.Module):
        def forward(self, x, y):
            x.clone()
            b = x.add_(1)
            y.mul(6)
            return b, x

    report = entry(Model(), (torch.randn([8, 8]), torch.randn([8, 8])), options={"clone_input": False, "inplace_pass": True})
    assert_pass(report)
    assert "aten.add_.Tensor" in after(report)


def test_static_capture_size_limit_default():
    # torchair_npugraph_ex_compile_st.py:890 (first half): dynamic=True, each new shape captured, no fallback
    report = entry(Linear(), (torch.randn([3, 2]),), options={"clone_input": False, "input_inplace_pass": True}, dynamic=True)
    assert_pass(report)
    assert report.npugraph_ex.captures >= 3
    assert report.npugraph_ex.fell_back_to_eager is None


def test_static_capture_size_limit_one():
    # torchair_npugraph_ex_compile_st.py:890 (second half): capture_limit=1: the second shape logs
    # "capture_limit reached" and the graph runs eagerly for good
    options = {"clone_input": False, "input_inplace_pass": True, "capture_limit": 1}
    report = entry(Linear(), (torch.randn([3, 2]),), options=options, dynamic=True)
    assert "capture_limit reached" in (report.npugraph_ex.fell_back_to_eager or "")
    assert "fallback_to_eager" in checks(report)
    assert not report.ok


def test_recapture_non_mutated_input_with_address_change():
    # torchair_npugraph_ex_compile_st.py:934: x + 1 with a new input address: no recapture
    class Model(torch.nn.Module):
        def forward(self, x):
            return x + 1

    report = entry(Model(), (torch.randn([3, 2]),), options={"input_inplace_pass": True, "clone_input": False}, dynamic=True)
    assert_pass(report)
    assert report.npugraph_ex.recaptures_for_moved_inputs == 0


def test_recapture_mutated_input_with_address_change():
    # torchair_npugraph_ex_compile_st.py:965: x.mul_(2) under dynamic=True, new address: recaptured
    class Model(torch.nn.Module):
        def forward(self, x):
            x.mul_(2)
            return x + 1

    report = entry(Model(), (torch.randn([3, 2]),), options={"clone_input": False, "input_inplace_pass": True}, dynamic=True)
    assert_pass(report)
    assert report.npugraph_ex.mutated_user_inputs


def test_recapture_multi_graph_with_address_change():
    # torchair_npugraph_ex_compile_st.py:989: shapes [3,2], [4,2], [2,1] each captured ("No find captured")
    class Model(torch.nn.Module):
        def forward(self, x):
            x.mul_(2)
            return x + 1

    report = entry(Model(), (torch.ones([3, 2]),), options={"input_inplace_pass": True, "clone_input": False}, dynamic=True)
    assert_pass(report)
    assert report.npugraph_ex.captures >= 3


def test_recapture_with_parameter_address_change():
    # torchair_npugraph_ex_compile_st.py:1022: a parameter is not a mutated input: no recapture for it
    report = entry(Linear(), (torch.randn([3, 2]),), options={"input_inplace_pass": True, "clone_input": False}, dynamic=True)
    assert_pass(report)
    assert report.npugraph_ex.recaptures_for_moved_inputs == 0


def test_recapture_with_parameter_address_change_with_frozen_parameter():
    # torchair_npugraph_ex_compile_st.py:1055: frozen_parameter=True: no recapture
    options = {"frozen_parameter": True, "input_inplace_pass": True, "clone_input": False}
    report = entry(Linear(), (torch.randn([3, 2]),), options=options, dynamic=True)
    assert_pass(report)
    assert report.npugraph_ex.recaptures_for_moved_inputs == 0


def test_enable_remove_noop_ops_slice():
    # torchair_npugraph_ex_compile_st.py:1142: x[:] + y[:] with dynamic=True on [2, 2]: no slice is left
    class Model(torch.nn.Module):
        def forward(self, x, y):
            return x[:] + y[:]

    report = entry(Model(), (torch.randn([2, 2]), torch.randn([2, 2])), options={"inplace_pass": True}, dynamic=True)
    assert "aten.slice" not in after(report)
    assert_pass(report)


@pytest.mark.parametrize("remove", [True, False], ids=["line1179_enable", "line1213_disable"])
def test_remove_noop_ops_and_eliminate_dead_code(remove):
    # torchair_npugraph_ex_compile_st.py:1179 and :1213: zeros_like(x).copy_(x) + 1: zeros_like gone
    # with remove_noop_ops (its default), kept without
    class Model(torch.nn.Module):
        def forward(self, x):
            zeros = torch.zeros_like(x)
            return zeros.copy_(x) + 1

    options = {"clone_input": False} if remove else {"clone_input": False, "remove_noop_ops": False}
    report = entry(Model(), (torch.randn([2, 2]),), options=options, dynamic=True)
    assert ("aten.zeros_like" in after(report)) is not remove, after(report)
    assert_pass(report)


class SelfCopy(torch.nn.Module):
    def forward(self, x):
        x.copy_(x)
        return x


class SelfCopyChain(torch.nn.Module):
    def forward(self, x):
        y = x.copy_(x)
        y.copy_(y)


class NormalCopy(torch.nn.Module):
    def forward(self, x):
        y = torch.zeros_like(x)
        y.copy_(x)


class SelfCopyArithmetic(torch.nn.Module):
    def forward(self, x):
        x.copy_(x)
        return x + 1


class SelfCopyDifferentAlias(torch.nn.Module):
    def forward(self, x):
        x.copy_(x)
        return x - 1


class SelfCopyDecompose(torch.nn.Module):
    def forward(self, x):
        tair.sin_inplace(torch.zeros_like(x), x)


@pytest.mark.parametrize(
    "model",
    [SelfCopy, SelfCopyChain, NormalCopy, SelfCopyArithmetic, SelfCopyDifferentAlias, SelfCopyDecompose],
    ids=["line1636_no_crash", "line1661_user_write_chain", "line1676_preserves_normal_copy", "line1693_with_arithmetic",
         "line1707_return_different_alias", "line1721_with_decompose"],
)
def test_self_copy(model):
    # torchair_npugraph_ex_compile_st.py:1636-1746: copy_(x, x) eliminated, results equal eager
    report = entry(model(), (torch.randn([3]),), options={"clone_input": False, "input_inplace_pass": True})
    assert_pass(report)
    assert "copy_back" not in checks(report)


def test_capture_and_recapture_cnt():
    # torchair_npugraph_ex_compile_st.py:1779: y.add_(1) with capture_limit=3: captured once, a moved
    # mutated input recaptures (recapture_due_to_mutated_input_change counted)
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(32, 32)

        def forward(self, x, y):
            z = self.linear(x)
            y.add_(1)
            return z

    report = entry(Model(), (torch.randn([10, 32]), torch.randn([10, 32])), options={"capture_limit": 3})
    assert_pass(report)
    run = report.npugraph_ex
    assert run.captures == 1 + run.recaptures_for_moved_inputs
    assert run.recaptures_for_moved_inputs >= 1


def test_process_kwargs_options_invalid_option():
    # torchair_npugraph_ex_compile_st.py:2136: a non-bool inplace_pass is refused by the config:
    # "(type: <class 'str'>) not in optional list [True, False]"; not an AOT functionalization failure
    report = entry(Linear(), (torch.randn([3, 2]),), options={"inplace_pass": "test"})
    assert not report.ok
    assert "not in optional list [True, False]" in " ".join(p.message + (p.detail or "") for p in report.problems)
    assert report.failed_stage is not None and report.failed_stage.value == "backend", str(report)


@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
def test_capture_error_mode_option(mode):
    # torchair_npugraph_ex_compile_st.py:2235: each capture_error_mode captures
    report = entry(lambda x: x + 1, (torch.randn([2, 2]),), options={"capture_error_mode": mode})
    assert_pass(report)
    assert report.npugraph_ex.captures == 1


def test_capture_error_mode_invalid():
    # torchair_npugraph_ex_compile_st.py:2262: another mode: "not in optional list ['global', 'thread_local', 'relaxed']"
    report = entry(lambda x: x + 1, (torch.randn([2, 2]),), options={"capture_error_mode": "xxxxx"})
    assert not report.ok
    assert "not in optional list" in " ".join(p.message + (p.detail or "") for p in report.problems)
    assert report.failed_stage.value == "backend", str(report)


def test_input_inplace_pass_false_with_custom_inplace_op():
    # torchair_npugraph_ex_compile_st.py:524's options (input_inplace_pass=False) on the in-place custom op
    # of torchair_aclgraph_reinplace_st.py:66: npugraph_ex serialises the graph for its cache and cannot
    # pickle auto_functionalized's op. That is the compiler's defect (on an NPU too): opkit names it so.
    def f(x, out):
        tair.sin(x, out)
        return out + 1

    report = entry(f, (torch.randn(3), torch.randn(3)), options={"input_inplace_pass": False})
    assert not report.ok
    assert "backend_defect" in checks(report), str(report)
    assert "meta_returns" not in checks(report)
