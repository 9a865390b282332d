"""Hardening III, part 6: the checked code cannot forge verify's verdict, stop its timeout, or break its JSON."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from opkit.verify import check_graph_entry
from tests.verify.test_verify_isolation import define_op  # noqa: F401 (a fixture)

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="checks run in a child process only where os.fork exists")


def _pass_report() -> dict:
    """A real passing report, as the forger would copy it."""
    lib_op = torch.ops.aten.sin.default
    report = check_graph_entry(lib_op, (torch.randn(3),), backend="aot_eager", isolate=False, opcheck=False)
    assert report.ok
    return report.to_dict()


def _forging_meta(forged_line: bytes, inherited: int):
    def meta(x):
        from opkit.verify import isolation

        # the channel itself, and a pipe the child inherited (not every descriptor: pytest-xdist talks over some)
        for fd in (isolation._channel, inherited):
            try:
                os.write(fd, forged_line)
            except (OSError, TypeError):
                pass
        return torch.empty(x.shape[0] + 1)  # a wrong Meta: the true verdict is FAIL

    return meta


@needs_fork
@pytest.mark.parametrize("framing", ["plain", "with-a-made-up-mac"])
def test_a_meta_function_cannot_forge_pass_on_the_report_channel(define_op, framing):
    payload = json.dumps({"report": _pass_report()}).encode()
    line = (payload if framing == "plain" else b"0" * 64 + b" " + payload) + b"\n"
    read_end, write_end = os.pipe()
    try:
        op = define_op(lambda x: x.clone(), _forging_meta(line, write_end))
        report = check_graph_entry(op, (torch.randn(3),), backend="aot_eager", opcheck=False, isolate=True)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert not report.ok
    assert [p.check for p in report.problems] == ["forged_report"]
    assert "did not come from opkit" in report.problems[0].message


@needs_fork
def test_a_sigstop_to_the_parent_ends_in_a_timeout_not_a_hang(define_op):
    def stop_the_parent(x):
        os.kill(os.getppid(), signal.SIGSTOP)
        import time

        time.sleep(3600)
        return torch.empty_like(x)

    op = define_op(lambda x: x.clone(), stop_the_parent)
    report = check_graph_entry(op, (torch.randn(3),), backend="aot_eager", opcheck=False, isolate=True, timeout=3)
    assert not report.ok
    assert [p.check for p in report.problems] == ["timeout"] and "within 3 s" in report.problems[0].message


@needs_fork
def test_json_output_stays_json_when_the_checked_code_prints(tmp_path):
    loaded = tmp_path / "ops.py"
    loaded.write_text(
        textwrap.dedent(
            """
            import os, sys, torch
            print("hello from the checked code")
            os.write(1, b"{not json\\n")
            lib = torch.library.Library("opkit_chan_print", "FRAGMENT")
            lib.define("op(Tensor x) -> Tensor")
            lib.impl("op", lambda x: x.clone(), "CPU")
            def meta(x):
                print("and from its Meta function")
                return torch.empty_like(x)
            lib.impl("op", meta, "Meta")
            """
        )
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = subprocess.run(
        [sys.executable, "-m", "opkit", "verify", "--op", "opkit_chan_print::op", "--load", str(loaded), "--backend", "aot_eager", "--format", "json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    document = json.loads(done.stdout)  # the whole of stdout is the report
    assert isinstance(document, dict), done.stdout
    assert "hello from the checked code" in done.stderr and "and from its Meta function" in done.stderr
