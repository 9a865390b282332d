"""The pytest plugin, `opkit doctor`, and the promise that importing opkit.verify stays cheap."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from opkit.verify.pytest_plugin import pin_worker_to_one_device

pytest_plugins = ["pytester"]


def test_npu_marker_skips_off_npu_with_the_reason_and_fixture_works(pytester):
    pytester.makepyfile(
        """
        import pytest, torch

        @pytest.mark.npu
        def test_on_npu():
            raise AssertionError("must not run without an NPU")

        def test_fixture(assert_enters_graph):
            report = assert_enters_graph(torch.relu, (torch.randn(3),), backend="aot_eager")
            assert report.graph_count == 1

        def test_fixture_fails_loudly(assert_enters_graph):
            def model(x):
                if x.sum().item() > 0:
                    return x
                return -x
            with pytest.raises(AssertionError, match="graph_break_count=1"):
                assert_enters_graph(model, (torch.randn(3),), backend="aot_eager")
        """
    )
    from opkit.verify.device import npu_available

    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    if npu_available():
        result.assert_outcomes(passed=2, failed=1)
    else:
        result.assert_outcomes(passed=2, skipped=1)
        result.stdout.fnmatch_lines(["*needs an Ascend NPU for npugraph_ex: *"])


@pytest.mark.parametrize(
    ("env", "kept"),
    [
        ({"PYTEST_XDIST_WORKER": "gw0", "ASCEND_RT_VISIBLE_DEVICES": "4,5,6,7"}, "4"),
        ({"PYTEST_XDIST_WORKER": "gw5", "ASCEND_RT_VISIBLE_DEVICES": "4,5,6,7"}, "5"),
        ({"PYTEST_XDIST_WORKER": "gw1", "ASCEND_RT_VISIBLE_DEVICES": "3"}, None),
        ({"ASCEND_RT_VISIBLE_DEVICES": "0,1"}, None),  # not an xdist worker
        ({"PYTEST_XDIST_WORKER": "gw1", "ASCEND_RT_VISIBLE_DEVICES": "0,1", "OPKIT_NO_DEVICE_PINNING": "1"}, None),
    ],
)
def test_each_xdist_worker_keeps_one_npu(env, kept, monkeypatch):
    monkeypatch.delitem(sys.modules, "torch_npu", raising=False)
    env = dict(env)
    assert pin_worker_to_one_device(env) == kept
    if kept is not None:
        assert env["ASCEND_RT_VISIBLE_DEVICES"] == kept


def test_doctor_never_crashes(run_opkit):
    code, out = run_opkit("doctor")
    assert code in (0, 1)
    assert "torch" in out and "CANN" in out
    code, out = run_opkit("doctor", "--format", "json")
    data = json.loads(out)
    assert {f["name"] for f in data["findings"]} >= {"python", "torch (installed)", "import torch", "CANN", "msopgen"}


def test_doctor_survives_a_broken_probe(monkeypatch):
    from opkit.verify import doctor

    monkeypatch.setattr(doctor, "_probe", lambda *a, **k: (None, "exit 1: ImportError: libhccl.so: cannot open shared object"))
    monkeypatch.setattr(doctor, "_dist_version", lambda name: "2.13.0" if name in ("torch", "torch-npu") else None)
    findings = {f.name: f for f in doctor.diagnose_environment().findings}
    assert findings["import torch"].status == "fail"

    def boom():
        raise RuntimeError("unexpected")

    monkeypatch.setattr(doctor, "_cann", boom)
    assert any(f.status == "warn" and "could not check" in f.detail for f in doctor.diagnose_environment().findings)


def test_doctor_names_the_version_mismatch(monkeypatch):
    from opkit.verify import doctor

    monkeypatch.setattr(doctor, "_dist_version", lambda name: {"torch": "2.13.0", "torch-npu": "2.6.0.post3"}.get(name))
    names = {f.name: f for f in doctor._packages()}
    assert names["torch/torch_npu versions"].status == "fail"
    assert "torch-npu==2.13.0" in names["torch/torch_npu versions"].detail


def test_importing_opkit_verify_and_lint_does_not_import_torch():
    code = (
        "import sys, opkit.verify, opkit.verify.report, opkit.verify.pytest_plugin, opkit.cli.verify;"
        "from opkit.cli import main;"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_doctor_looks_for_cann_where_opkit_check_does(tmp_path, monkeypatch):
    from opkit.check import toolchain
    from opkit.verify import doctor

    standard = tmp_path / "standard"
    standard.mkdir()
    (standard / "version.cfg").write_text("version=8.5.0\n")
    for var in toolchain.CANN_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(toolchain, "STANDARD_CANN_ROOTS", (str(tmp_path / "absent"), str(standard)))
    (finding,) = doctor._cann()
    assert (finding.status, finding.detail) == ("ok", f"8.5.0 at {standard}")
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(tmp_path))
    assert doctor._cann()[0].detail.endswith(f"at {tmp_path}")
