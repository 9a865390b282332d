"""`--msopgen auto|PATH` runs a real msOpGen with the right flags (a recording fake stands in for CANN's)."""

from __future__ import annotations

import json
import os
import stat
import sys

FAKE_MSOPGEN = """#!{python}
import json, os, sys
args = sys.argv[1:]
out = args[args.index("-out") + 1]
with open(os.environ["FAKE_MSOPGEN_LOG"], "w") as f:
    json.dump(args, f)
os.makedirs(os.path.join(out, "op_host"))
open(os.path.join(out, "op_host", "from_msopgen.cpp"), "w").close()
variables = {{"vendor_name": {{"type": "STRING", "value": "customize"}}, "ENABLE_TEST": {{"type": "BOOL", "value": "True"}}}}
with open(os.path.join(out, "CMakePresets.json"), "w") as f:
    json.dump({{"version": 1, "configurePresets": [{{"name": "default", "cacheVariables": variables}}]}}, f, indent=4)
print("Generation completed")
"""


def _install_fake(directory):
    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / "msopgen"
    exe.write_text(FAKE_MSOPGEN.format(python=sys.executable))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_auto_finds_msopgen_on_path(tmp_path, monkeypatch, run_opkit):
    _install_fake(tmp_path / "bin")
    log = tmp_path / "argv.json"
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MSOPGEN_LOG", str(log))
    code, output = run_opkit("new", "my_op", "--soc", "ascend910b2,ascend950pr", "-o", str(tmp_path / "p"), "--no-verify")
    assert code == 0, output
    project = tmp_path / "p"
    argv = json.loads(log.read_text())
    assert argv[0] == "gen"
    assert argv[argv.index("-c") + 1] == "ai_core-ascend910b2,ai_core-ascend950pr"  # every SoC, one -c
    assert argv[argv.index("-f") + 1] == "pytorch"
    assert argv[argv.index("-lan") + 1] == "cpp"
    assert argv[argv.index("-i") + 1].endswith(os.path.join("msopgen", "my_op.json"))
    assert argv[argv.index("-out") + 1].endswith("MyOp")
    assert "Generation completed" in output
    # msOpGen's tree replaced the built-in one, inside the project
    assert sorted(os.listdir(project / "MyOp" / "op_host")) == ["from_msopgen.cpp"]
    # ... with the project's vendor name instead of msOpGen's "customize", and nothing else changed
    variables = json.loads((project / "MyOp" / "CMakePresets.json").read_text())["configurePresets"][0]["cacheVariables"]
    assert variables == {"vendor_name": {"type": "STRING", "value": "my_op"}, "ENABLE_TEST": {"type": "BOOL", "value": "True"}}


def test_ascend_home_path_and_builtin(tmp_path, monkeypatch, run_opkit):
    home = tmp_path / "cann"
    _install_fake(home / "python" / "site-packages" / "bin")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    monkeypatch.setenv("FAKE_MSOPGEN_LOG", str(tmp_path / "argv.json"))
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    code, output = run_opkit("new", "my_op", "-o", str(tmp_path / "auto"), "--no-verify")
    assert code == 0 and (tmp_path / "argv.json").exists(), output

    code, output = run_opkit("new", "my_op", "-o", str(tmp_path / "builtin"), "--no-verify", "--msopgen", "builtin")
    assert code == 0 and (tmp_path / "builtin" / "MyOp" / "op_host" / "my_op.cpp").is_file()


def test_failing_msopgen_writes_nothing(tmp_path, run_opkit):
    exe = tmp_path / "bin" / "msopgen"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\necho 'error: bad json' >&2\nexit 3\n")
    exe.chmod(0o755)
    code, output = run_opkit("new", "my_op", "-o", str(tmp_path / "p"), "--no-verify", "--msopgen", str(exe))
    assert code == 2 and "bad json" in output
    assert sorted(os.listdir(tmp_path)) == ["bin"]
