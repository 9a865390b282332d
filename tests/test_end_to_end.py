"""End to end, as a user runs it: `opkit new` writes a project, `opkit lint` finds no error in it,
`opkit verify` sees one graph and no breaks, and the project's own smoke test passes under pytest."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CASES = [
    # (name, extra `opkit new` options, how the op must appear in the captured graph)
    ("my_op", ["--schema", "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor", "--out-like", "x"], "direct"),
    ("my_inplace", ["--schema", "my_inplace(Tensor(a!) x, Tensor y) -> Tensor"], "auto_functionalized"),
    ("kv_update", ["--inplace"], "auto_functionalized"),
    ("scale_", ["--inplace", "--style", "custom-op"], "auto_functionalized"),
    # `opkit new relu_ --inplace`: a trailing '_' picks the custom-op style, whose default schema passes opkit's own check
    ("relu_", ["--inplace"], "auto_functionalized"),
    # the third path: pure torch.library, with what only its dialect spells (Tensor!, named returns, list defaults)
    ("rms_norm", ["--style", "library", "--schema", "mylib::rms_norm(Tensor! x, Tensor gamma, int[] axes=[-1], float eps=1e-06) -> (Tensor y, Tensor rstd)",
                  "--output", "rstd=like:gamma,dtype:float32"], "auto_functionalized"),
    # a real overloaded op of the corpus (it crashed verify before) with a per-output dtype
    ("npu_max", ["--schema", "npu_max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                 "--output", "indices=like:self,dtype:int64", "--dtypes", "float16,float;indices=int64,int64"], "direct"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.usefixtures("npugraph_ex_wheel")
@pytest.mark.parametrize("name, options, form", CASES, ids=[c[0] for c in CASES])
def test_new_lint_verify(tmp_path, run_opkit, name, options, form):
    project = tmp_path / name
    code, out = run_opkit("new", name, *options, "-o", str(project), "--no-verify", "--msopgen", "builtin")
    assert code == 0, out

    code, out = run_opkit("lint", "--format", "json", str(project))
    assert [f for f in json.loads(out) if f["severity"] in ("error", "fatal")] == []

    code, out = run_opkit("verify", str(project), "--format", "json")
    report = json.loads(out)
    assert code == 0, out
    assert (report["graph_count"], report["graph_break_count"]) == (1, 0)
    assert report["backend"] == "npugraph_ex" and report["emulated"]  # npugraph_ex's own compiler, off the NPU
    assert "auto_functionalized" not in report["npugraph_ex"]["graph_after"]  # its passes resolved any in place
    (entry,) = report["ops_in_graph"]
    assert entry["found"] and entry["form"].startswith(form), entry


@pytest.mark.slow
def test_generated_smoke_test_passes_under_pytest(tmp_path, run_opkit):
    project = tmp_path / "my_inplace"
    code, out = run_opkit("new", "my_inplace", "--inplace", "-o", str(project), "--no-verify", "--msopgen", "builtin")
    assert code == 0, out
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", str(project / "tests")], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout
    assert "needs an Ascend NPU" in done.stdout  # the npu marker's reason, from opkit's pytest plugin


def test_new_refuses_a_schema_whose_project_could_not_verify(tmp_path, run_opkit):
    """torch parses a default before a required list, but opcheck's test_schema fails on it (S107)."""
    code, out = run_opkit("new", "gap", "--schema", "gap(Tensor x, Tensor? y=None, int[] dims) -> Tensor", "-o", str(tmp_path / "gap"), "--no-verify")
    assert code == 2 and "S107" in out
    assert not (tmp_path / "gap").exists()


@pytest.mark.slow
@pytest.mark.usefixtures("npugraph_ex_wheel")
def test_new_exits_1_when_the_generated_op_does_not_verify(tmp_path, run_opkit):
    """Regenerating keeps the user's reference.py; a kernel whose shape disagrees with the Meta fails verify."""
    project = tmp_path / "my_op"
    assert run_opkit("new", "my_op", "-o", str(project), "--no-verify", "--msopgen", "builtin")[0] == 0
    (project / "reference.py").write_text("def my_op(x):\n    return x.sum(0)  # not the shape the Meta function promises\n")
    code, out = run_opkit("new", "my_op", "-o", str(project), "--force", "--msopgen", "builtin")
    assert code == 1
    assert "kept 1 of your files: reference.py" in out and "FAIL" in out
    assert "backend=npugraph_ex (emulated)" in out and "failed at stage: Meta function" in out


@pytest.mark.parametrize(
    "schema, expected, options",
    [
        ("npu_silu_(Tensor(a!) self) -> Tensor(a!)", "npu_silu(Tensor(a!) self) -> ()", ["--style", "op-plugin"]),
        ("npu_silu_(Tensor(a!) self) -> Tensor(a!)", "npu_silu_(Tensor(a!) self) -> ()", []),  # custom-op keeps the '_'

        ("npu_broadcast.out(Tensor self, int[] size, *, Tensor(a!) out) -> Tensor(a!)", "npu_broadcast(Tensor self, int[] size) -> Tensor", []),
        ("npu_drop(Tensor self, float p, Generator? generator=None) -> Tensor", "npu_drop(Tensor self, float p) -> Tensor", []),
        ("npu_max.names_dim(Tensor self, Dimname dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
         "npu_max.names_dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", []),
        ("npu_mask(int[] size, *, Layout? layout=None, Device? device=None, Tensor x) -> Tensor", "npu_mask(int[] size, *, Tensor x) -> Tensor", []),
        # a non-tensor return becomes a 0-dim Tensor, sized by the --output rule the command carries
        ("npu_fa(Tensor q, int n) -> (Tensor, int, bool)", "npu_fa(Tensor q, int n) -> (Tensor, Tensor, Tensor)", []),
        # no Tensor input: nothing to dispatch on; ATen's new_* convention, sized by the int[] argument
        ("npu_dropout_gen_mask(int[] size, float p, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
         "npu_dropout_gen_mask(Tensor self, int[] size, float p, *, ScalarType? dtype=None, bool? pin_memory=None) -> Tensor", []),
        # every tensor optional: torch dispatches on the one passed, so only the int return is corrected
        ("npu_count(Tensor? x, int k) -> int", "npu_count(Tensor? x, int k) -> Tensor", []),
    ],
)  # fmt: skip
def test_documented_refusals_print_a_corrected_schema_that_opkit_new_takes(tmp_path, run_opkit, schema, expected, options):
    name = schema.split("(")[0].split(".")[0]
    code, out = run_opkit("new", name, "--schema", schema, *options, "-o", str(tmp_path / name), "--no-verify")
    assert code == 2 and len(out.strip().splitlines()) == 1 and "Traceback" not in out
    assert f"Corrected schema: {expected} " in out
    command = out.split("(opkit new ", 1)[1].rstrip().removesuffix(")")
    import shlex

    fixed_name, *options = shlex.split(command)
    code, out = run_opkit("new", fixed_name, *options, "-o", str(tmp_path / "fixed"), "--no-verify", "--msopgen", "builtin")
    assert code == 0, out
    import json

    written = json.loads((tmp_path / "fixed" / "opkit.json").read_text()).get("outputs", {})
    rules = [options[i + 1] for i, o in enumerate(options) if o == "--output"]
    assert [f"{n}=" + ",".join(f"{k}:{v}" for k, v in r.items() if k != "like") for n, r in written.items()] == rules


def test_custom_op_answers_with_the_library_command(tmp_path, run_opkit):
    schema = "mylib::f(Tensor x) -> (Tensor y, Tensor z)"
    code, out = run_opkit("new", "f", "--style", "custom-op", "--schema", schema, "-o", str(tmp_path / "f"), "--no-verify")
    assert code == 2 and f"use --style library: opkit new f --style library --schema '{schema}'" in out


def test_new_warns_when_a_neighbour_project_takes_the_same_optype(tmp_path, run_opkit):
    """scale and scale_ both become OpType Scale: a second kernel of one OpType shadows the first once installed."""
    args = ("--no-verify", "--msopgen", "builtin")
    code, out = run_opkit("new", "my_scale", "-o", str(tmp_path / "pkg" / "my_scale"), *args)
    assert code == 0 and "also the OpType" not in out
    code, out = run_opkit("new", "my_scale_", "--inplace", "-o", str(tmp_path / "pkg" / "my_scale_"), *args)
    assert code == 0
    assert "warning: OpType MyScale is also the OpType of my_scale (" in out and "my_scale/opkit.json)" in out
    code, out = run_opkit("new", "my_scale_", "--inplace", "--op-type", "MyScaleInplace", "-o", str(tmp_path / "pkg" / "other"), *args)
    assert code == 0 and "also the OpType" not in out


@pytest.mark.slow
@pytest.mark.usefixtures("npugraph_ex_wheel")
def test_the_wheels_special_case_of_npu_weight_quant_batchmatmul_is_reported_as_the_wheels(tmp_path):
    """The corpus's one verify failure: torch-npu 2.13.0's npugraph_ex crashes on any graph with an op of this
    name (its workaround sets config.experimental_config, which its CompilerConfig lacks), on an NPU too."""
    from opkit.generate import make_spec
    from opkit.generate.project import generate_project
    from opkit.verify import verify_project

    def verified(name):
        spec = make_spec(name, schema=f"{name}(Tensor x, Tensor weight) -> Tensor")
        return verify_project(generate_project(spec, tmp_path / name, msopgen_mode="builtin").path)

    report = verified("npu_weight_quant_batchmatmul")
    assert not report.ok
    (problem,) = report.problems
    assert problem.check == "backend_defect" and "special-cases any op named npu.npu_weight_quant_batchmatmul" in problem.message
    assert verified("npu_weight_quant_bmm").ok  # the same op under another name enters the graph
