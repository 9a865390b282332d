"""Unit tests of opkit.verify.backends: the registry, which backend a name resolves to here (a CPU-only machine
without torch_npu), and the wrapper that records what torch.compile hands a backend."""

import json
import os
import subprocess
import sys
import time

import pytest
import torch

import opkit
from opkit.verify import npugraph_ex
from opkit.verify.backends import BACKENDS, EMULATED_NPUGRAPH_EX, GraphCapture, auto_fallback_note, backend, backend_names, resolve_backend

NO_NPU = "npugraph_ex needs an Ascend NPU: torch_npu is not installed (on an Ascend machine with CANN: pip install torch-npu==<your torch's version>)"


@pytest.mark.parametrize(
    "name, device, sees_aot_graph",
    [("aot_eager", "cpu", True), ("eager", "cpu", False), ("inductor", "cpu", True), ("npugraph_ex", "npu", False)],
)
def test_the_registry_states_each_backends_device_and_what_it_shows(name, device, sees_aot_graph):
    chosen = BACKENDS[name]
    assert (chosen.name, chosen.device, chosen.sees_aot_graph, chosen.emulated) == (name, device, sees_aot_graph, False)


def test_off_the_npu_only_the_real_npugraph_ex_is_unavailable():
    assert {name: b.unavailable() for name, b in BACKENDS.items()} == {
        "aot_eager": None, "eager": None, "inductor": None, "npugraph_ex": NO_NPU,
    }  # fmt: skip
    assert backend_names() == ["auto", "aot_eager", "eager", "inductor", "npugraph_ex"]
    assert (EMULATED_NPUGRAPH_EX.name, EMULATED_NPUGRAPH_EX.device, EMULATED_NPUGRAPH_EX.emulated) == ("npugraph_ex", "cpu", True)


@pytest.mark.parametrize("name", ["aot_eager", "eager", "inductor"])
def test_a_usable_name_is_its_own_backend(name):
    assert resolve_backend(name) is BACKENDS[name]


def test_an_unknown_name_lists_the_choices():
    with pytest.raises(ValueError) as err:
        resolve_backend("tvm")
    assert str(err.value) == "unknown backend 'tvm'; choose one of: auto, aot_eager, eager, inductor, npugraph_ex"


def test_npugraph_ex_and_auto_off_the_npu_are_the_emulation_when_the_wheel_can_be_had():
    reason = npugraph_ex.unavailable_reason()
    if reason is None:
        assert EMULATED_NPUGRAPH_EX.unavailable() is None
        assert resolve_backend("npugraph_ex") is EMULATED_NPUGRAPH_EX
        assert resolve_backend("auto") is EMULATED_NPUGRAPH_EX
        assert auto_fallback_note() is None
    else:
        assert EMULATED_NPUGRAPH_EX.unavailable() == f"npugraph_ex cannot be emulated: {reason}"
        assert resolve_backend("auto") is BACKENDS["aot_eager"]
        assert auto_fallback_note() == f"backend auto ran aot_eager: npugraph_ex cannot be emulated: {reason}"


def test_without_a_wheel_auto_is_aot_eager_and_npugraph_ex_says_both_reasons(tmp_path):
    # A fresh process: the wheel is looked up once per process. A missing OPKIT_TORCH_NPU path is refused
    # before the cache or the package index is tried.
    missing = tmp_path / "no-such-wheel.whl"
    # Called here as well: mutation testing runs a test against the mutants of the functions it calls in-process.
    in_process = (resolve_backend("eager"), auto_fallback_note(), EMULATED_NPUGRAPH_EX.unavailable())
    assert in_process[0] is BACKENDS["eager"]
    script = (
        "import json\n"
        "from opkit.verify.backends import resolve_backend, auto_fallback_note, EMULATED_NPUGRAPH_EX\n"
        "try:\n    resolve_backend('npugraph_ex'); error = None\nexcept ValueError as e:\n    error = str(e)\n"
        "print(json.dumps([resolve_backend('auto').name, auto_fallback_note(), EMULATED_NPUGRAPH_EX.unavailable(), error]))\n"
    )
    # The child imports the opkit this process runs (the mutated copy under mutation testing).
    root = os.path.dirname(os.path.dirname(opkit.__file__))
    env = {**os.environ, "OPKIT_TORCH_NPU": str(missing), "OPKIT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": root}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    auto, note, emulated, error = json.loads(out)
    assert emulated == f"npugraph_ex cannot be emulated: OPKIT_TORCH_NPU={missing}: no such wheel file or directory"
    assert (auto, note) == ("aot_eager", f"backend auto ran aot_eager: {emulated}")
    assert error == f"{NO_NPU}; {emulated}"


def test_timed_records_each_graph_counts_compiles_and_times_them():
    capture = GraphCapture()
    seen = []

    def slow_compile(gm, example_inputs, **kwargs):
        seen.append(kwargs)
        time.sleep(0.02)
        return gm.forward

    fn = torch.compile(lambda x: x * 2 + 1, backend=capture.timed(slow_compile), fullgraph=True, dynamic=False)
    torch._dynamo.reset()
    assert torch.equal(fn(torch.ones(3)), torch.full((3,), 3.0))
    assert (len(capture.dynamo_graphs), capture.compiled, seen) == (1, 1, [{}])
    assert 0.02 <= capture.backend_compile_s < 5
    assert isinstance(capture.dynamo_graphs[0], torch.fx.GraphModule)


@pytest.fixture
def probe_backend():
    """A backend registered for one test, as a plugin would add one: usable or not, by its own reason."""

    def register(unavailable, make=lambda capture: capture.timed(lambda gm, example_inputs: gm.forward)):
        assert backend("probe", device="meta", sees_aot_graph=True, unavailable=unavailable)(make) is make
        return BACKENDS["probe"]

    yield register
    BACKENDS.pop("probe", None)


def test_a_registered_backend_keeps_what_it_was_given(probe_backend):
    def make(capture):
        return capture.timed(lambda gm, example_inputs: gm.forward)

    probe = probe_backend(lambda: None, make)
    assert (probe.name, probe.make, probe.device, probe.sees_aot_graph, probe.unavailable(), probe.emulated) == ("probe", make, "meta", True, None, False)
    assert resolve_backend("probe") is probe
    assert backend_names() == ["auto", "aot_eager", "eager", "inductor", "npugraph_ex", "probe"]


def test_an_unusable_backend_other_than_npugraph_ex_says_why_and_is_never_the_emulation(probe_backend):
    probe_backend(lambda: "probe needs a TPU")
    with pytest.raises(ValueError) as err:
        resolve_backend("probe")
    assert str(err.value) == "probe needs a TPU"


def test_timed_adds_up_several_compiles():
    capture = GraphCapture()

    def slow_compile(gm, example_inputs):
        time.sleep(0.02)
        return gm

    wrapped = capture.timed(slow_compile)
    assert [wrapped("g1", []), wrapped("g2", [])] == ["g1", "g2"]
    assert (capture.dynamo_graphs, capture.compiled) == (["g1", "g2"], 2)
    assert capture.backend_compile_s >= 0.04


def test_timed_keeps_the_time_of_a_failing_compile_and_counts_no_success():
    capture = GraphCapture()

    def failing(gm, example_inputs, **kwargs):
        time.sleep(0.02)
        raise RuntimeError("no kernel")

    wrapped = capture.timed(failing)
    with pytest.raises(RuntimeError, match="no kernel"):
        wrapped("graph", [], mode="x")
    assert (capture.dynamo_graphs, capture.compiled) == (["graph"], 0)
    assert capture.backend_compile_s >= 0.02


def test_timed_passes_options_on_and_record_aot_returns_the_graph():
    capture = GraphCapture()
    wrapped = capture.timed(lambda gm, example_inputs, **kwargs: (gm, example_inputs, kwargs))
    assert wrapped("g", ["i"], mode="reduce-overhead") == ("g", ["i"], {"mode": "reduce-overhead"})
    assert capture.record_aot("aot", ["i"]) == "aot"
    assert capture.record_aot("aot2") == "aot2"
    assert capture.aot_graphs == ["aot", "aot2"]


def test_the_emulated_npugraph_ex_compiles_inside_its_session():
    if (reason := npugraph_ex.unavailable_reason()) is not None:
        pytest.skip(reason)
    capture = GraphCapture()
    with EMULATED_NPUGRAPH_EX.session(capture):
        fn = torch.compile(lambda x: x * 2 + 1, backend=EMULATED_NPUGRAPH_EX.make(capture), fullgraph=True, dynamic=False)
        torch._dynamo.reset()
        assert torch.equal(fn(torch.ones(3)), torch.full((3,), 3.0))
    assert (len(capture.dynamo_graphs), capture.compiled, len(capture.aot_graphs)) == (1, 1, 1)
    assert capture.observation is not None
