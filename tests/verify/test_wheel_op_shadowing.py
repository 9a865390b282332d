"""A user's file that defines, behind ``if not hasattr(...)``, an op that the torch-npu wheel's npugraph_ex
defines too: the user's registration is the one verified, and the report says so."""

from __future__ import annotations

import os
import textwrap

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("npugraph_ex_wheel"),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="checks run in a child process only where os.fork exists"),
]

# npugraph_ex defines npu_define::broadcast when it is imported (its hcom ops); ours has its own schema.
USER_FILE = """\
import torch
from torch.library import Library, impl

ours = Library("npu_define", "FRAGMENT")

if not hasattr(getattr(torch.ops, "npu_define"), "broadcast"):
    ours.define("broadcast(Tensor self, int times) -> Tensor")

    @impl(ours, "broadcast", "CompositeExplicitAutograd")
    def broadcast_kernel(self, times):
        return self.repeat(times, 1)

    @impl(ours, "broadcast", "Meta")
    def broadcast_meta(self, times):
        return self.new_empty({shape})
"""


@pytest.mark.parametrize(
    ("shape", "verdict"),
    [("(self.shape[0] * times, self.shape[1])", "PASS"), ("self.shape", "FAIL")],
    ids=["right Meta", "Meta that forgets times"],
)
def test_the_users_guarded_definition_is_verified_not_the_wheels(tmp_path, run_opkit, shape, verdict):
    loaded = tmp_path / "my_ops.py"
    loaded.write_text(textwrap.dedent(USER_FILE).replace("{shape}", shape))
    code, out = run_opkit(
        "verify", "--op", "npu_define::broadcast", "--load", str(loaded), "--backend", "npugraph_ex", "--example", "(torch.randn(2, 3), 2)"
    )
    assert out.startswith(verdict), out
    assert code == (0 if verdict == "PASS" else 1), out
    assert "npu_define::broadcast is " + str(loaded) + "'s registration" in out, out
    if verdict == "FAIL":
        assert "fake_vs_real" in out, out  # the user's Meta bug is seen
