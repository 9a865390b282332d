"""The ``opkit`` pytest plugin (entry point ``pytest11``), loaded in every pytest run where opkit is installed.

* ``@pytest.mark.npu``: the test needs an Ascend NPU with torch_npu; elsewhere it is skipped with the
  reason (torch_npu missing, not importable, or no device visible).
* ``assert_enters_graph`` fixture: the helper of ``opkit.verify.assert_enters_graph``.
* pytest-xdist: npugraph_ex drives one NPU per process, so under ``pytest -n N`` with
  ``ASCEND_RT_VISIBLE_DEVICES=0,1,...`` each worker keeps only device ``devices[worker % len(devices)]``
  (set before torch_npu initialises). ``OPKIT_NO_DEVICE_PINNING=1`` turns this off.

Nothing here imports torch until a test needs it: the plugin is loaded by suites that never touch torch.
"""

from __future__ import annotations

import os
import sys

import pytest

NPU_MARKER = "npu"
ALL_DEVICES_ENV = "OPKIT_ASCEND_ALL_DEVICES"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{NPU_MARKER}: needs an Ascend NPU with torch_npu and CANN; skipped elsewhere with the reason"
    )
    pin_worker_to_one_device()


def pin_worker_to_one_device(environ=os.environ) -> str | None:
    """Give this xdist worker one NPU out of ASCEND_RT_VISIBLE_DEVICES; return the device kept, or None."""
    worker = environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or environ.get("OPKIT_NO_DEVICE_PINNING") == "1" or "torch_npu" in sys.modules:
        return None
    devices = [d.strip() for d in environ.get(ALL_DEVICES_ENV, environ.get("ASCEND_RT_VISIBLE_DEVICES", "")).split(",") if d.strip()]
    if len(devices) < 2:
        return None
    environ[ALL_DEVICES_ENV] = ",".join(devices)
    kept = devices[int(worker[2:] or 0) % len(devices)]
    environ["ASCEND_RT_VISIBLE_DEVICES"] = kept
    return kept


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker(NPU_MARKER) is None:
        return
    from opkit.verify.device import npu_unavailable_reason

    reason = npu_unavailable_reason()
    if reason is not None:
        pytest.skip(f"needs an Ascend NPU for npugraph_ex: {reason}")


@pytest.fixture
def assert_enters_graph():
    """``assert_enters_graph(fn_or_op, args, kwargs=None, *, backend="auto", ...)`` → the report, or AssertionError."""
    from opkit.verify.assertions import assert_enters_graph as helper

    return helper
