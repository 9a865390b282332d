"""Python kernels read into the kernel-effects model: each pattern, and its twin that does not write."""

from __future__ import annotations

import textwrap

import pytest

from opkit.effects.model import Knowledge
from opkit.effects.python import python_effects, schema_index
from opkit.formats.files import InputError
from opkit.formats.python_kernels import read_python_kernels
from opkit.formats.schema_site import SchemaSite
from opkit.signature import Dialect


def effects(source: str, *schemas: str):
    text = textwrap.dedent(source)
    file = read_python_kernels("k.py", text)
    sites = [SchemaSite(s, "s.py", 1, 1, Dialect.TORCH_LIBRARY) for s in schemas]
    return {e.op: e for e in python_effects([file], schema_index(sites))}


def written(e, name: str) -> Knowledge:
    return e.argument(name).written


CUSTOM_OP = """
import torch

@torch.library.custom_op("t::f", mutates_args={mutates})
def f(x: torch.Tensor, y: torch.Tensor, n: int) -> None:
    {body}
"""


@pytest.mark.parametrize(
    "body, line",
    [
        ("y.add_(x)", "y.add_"),
        ("y.copy_(x)", "y.copy_"),
        ("y[0] = x[0]", "y[0] = "),
        ("y[:n] += 1", "y[:n] += "),
        ("torch.add(x, x, out=y)", "out=y"),
        ("torch.nn.functional.relu(y, inplace=True)", "inplace=True"),
        ("v = y.view(-1)\n    v.zero_()", "v.zero_"),
        ("a, b = y.chunk(2)\n    b.fill_(0)", "b.fill_"),
        ("torch.ops.t.g(x, y)", "marks out (a!)"),
        ("helper(y)", "in helper"),
    ],
)
def test_each_write_pattern_is_evidence_and_its_twin_writes_nothing(body: str, line: str) -> None:
    source = CUSTOM_OP + "\ndef helper(t):\n    t.mul_(2)\n"
    e = effects(source.format(mutates="('y',)", body=body), "t::g(Tensor x, Tensor(a!) out) -> ()")["t::f"]
    assert written(e, "y") is Knowledge.YES
    assert any(line in ev.why or line in str(ev) for ev in e.argument("y").evidence), e.argument("y").evidence
    assert written(e, "x") is Knowledge.NO
    twin = effects(source.format(mutates="()", body="z = x + y\n    z.add_(1)"))["t::f"]
    assert twin.written == ()
    assert twin.complete


def test_an_evidence_names_the_file_line_and_column() -> None:
    e = effects(CUSTOM_OP.format(mutates="('y',)", body="y.copy_(x)"))["t::f"]
    (ev,) = e.argument("y").evidence
    assert (ev.path, ev.line, ev.column) == ("k.py", 6, 5)


def test_a_call_opkit_does_not_follow_makes_what_it_is_given_unknown_never_no() -> None:
    e = effects(CUSTOM_OP.format(mutates="()", body="from elsewhere import g\n    g(y.view(-1))"))["t::f"]
    assert written(e, "y") is Knowledge.UNKNOWN
    assert "g(...)" in e.argument("y").unknown_because
    assert written(e, "x") is Knowledge.NO
    assert not e.complete


def test_an_op_whose_schema_is_unknown_leaves_its_arguments_unknown() -> None:
    e = effects(CUSTOM_OP.format(mutates="()", body="torch.ops.other.op(y)"))["t::f"]
    assert written(e, "y") is Knowledge.UNKNOWN
    assert "other::op" in e.argument("y").unknown_because


def test_a_triton_launch_is_unknown() -> None:
    e = effects(CUSTOM_OP.format(mutates="()", body="kernel[(1,)](x, y)"))["t::f"]
    assert written(e, "x") is Knowledge.UNKNOWN and written(e, "y") is Knowledge.UNKNOWN


def test_a_tensor_that_may_be_a_copy_is_unknown_when_written() -> None:
    e = effects(CUSTOM_OP.format(mutates="()", body="c = y.contiguous()\n    c.zero_()"))["t::f"]
    assert written(e, "y") is Knowledge.UNKNOWN


def test_host_syncs_with_their_lines_and_twins() -> None:
    for body, why in [("s = x.sum().item()", ".item()"), ("v = x.tolist()", ".tolist()"), ("h = x.cpu()", ".cpu()"), ("a = x.numpy()", ".numpy()"),
                      ("b = bool(x)", "bool(x)"), ("if x.any():\n        pass", "x.any()"), ("if x > 0:\n        pass", "x > 0"),
                      ("torch.npu.synchronize()", "synchronize")]:  # fmt: skip
        e = effects(CUSTOM_OP.format(mutates="()", body=body))["t::f"]
        assert len(e.host_syncs) == 1 and why in e.host_syncs[0].why, (body, e.host_syncs)
        assert e.host_syncs[0].line == 6
    for body in ["if n > 0:\n        pass", "k = x.shape[0]\n    if k:\n        pass", "if x.dim() == 2:\n        pass", "if y is None:\n        pass", "m = int(n)"]:
        assert effects(CUSTOM_OP.format(mutates="()", body=body))["t::f"].host_syncs == (), body


def test_returns_an_input_a_view_or_an_allocation() -> None:
    source = """
    import torch

    @torch.library.custom_op("t::{name}", mutates_args=())
    def {name}(x: torch.Tensor) -> torch.Tensor:
        {body}
    """
    alias = effects(source.format(name="a", body="return x"))["t::a"].returns[0]
    assert alias.known and alias.aliases == "x"
    view = effects(source.format(name="v", body="return x.view(-1)"))["t::v"].returns[0]
    assert view.aliases == "x" and "view" in view.evidence[0].why
    alloc = effects(source.format(name="e", body="out = torch.empty(x.shape, dtype=torch.int8, device=x.device)\n        return out"))["t::e"].returns[0]
    assert alloc.known and alloc.aliases is None
    assert (alloc.allocation.dtype, alloc.allocation.size, alloc.allocation.device) == ("int8", "like:x", "like:x")
    like = effects(source.format(name="l", body="return torch.empty_like(x)"))["t::l"].returns[0]
    assert (like.allocation.dtype, like.allocation.device) == ("like:x", "like:x")
    fresh = effects(source.format(name="f", body="return x * 2"))["t::f"].returns[0]
    assert fresh.known and fresh.aliases is None
    unknown = effects(source.format(name="u", body="from m import g\n        return g(x)"))["t::u"].returns[0]
    assert not unknown.known


def test_library_impl_kernels_map_parameters_to_the_schema_by_position() -> None:
    source = """
    import torch
    from torch.library import Library, impl

    lib = Library("t", "DEF")
    lib.define("store(Tensor cache, Tensor x) -> ()")

    def store_npu(c, v):
        c.copy_(v)

    def store_meta(c, v):
        c.copy_(v)

    lib.impl("store", store_npu, "PrivateUse1")
    lib.impl("store", store_meta, "Meta")

    @impl(lib, "store", "CPU")
    def store_cpu(c, v):
        return None
    """
    e = effects(source)["t::store"]
    assert [k.dispatch_key for k in e.kernels] == ["CPU", "PrivateUse1"] or sorted(k.dispatch_key for k in e.kernels) == ["CPU", "PrivateUse1"]
    assert written(e, "cache") is Knowledge.YES and written(e, "x") is Knowledge.NO
    assert "store_meta" not in {k.function for k in e.kernels}


def test_direct_register_custom_op_infers_the_schema_from_op_func() -> None:
    source = """
    import torch
    from vllm.utils.torch_utils import direct_register_custom_op

    def _store(cache: torch.Tensor, x: torch.Tensor) -> None:
        cache[:] = x

    def _store_fake(cache: torch.Tensor, x: torch.Tensor) -> None:
        return None

    direct_register_custom_op(op_name="store", op_func=_store, mutates_args=[], fake_impl=_store_fake, dispatch_key="PrivateUse1")
    """
    e = effects(source)["vllm::store"]
    assert e.kernels[0].dispatch_key == "PrivateUse1"
    assert written(e, "cache") is Knowledge.YES


def test_collectives_write_their_output() -> None:
    source = """
    import torch
    import torch.distributed.distributed_c10d as c10d
    from torch.library import Library

    lib = Library("t", "DEF")
    lib.define("gather(Tensor out, Tensor input) -> Tensor")

    def gather_npu(out, inp):
        c10d.all_gather_into_tensor(out, inp)
        return out

    lib.impl("gather", gather_npu, "PrivateUse1")
    """
    e = effects(source)["t::gather"]
    assert written(e, "out") is Knowledge.YES and written(e, "input") is Knowledge.NO
    assert e.returns[0].aliases == "out"
    assert e.side_effects


def test_helpers_are_followed_to_a_bounded_depth() -> None:
    chain = "\n".join(f"def h{i}(t):\n    h{i + 1}(t)\n" for i in range(5)) + "def h5(t):\n    t.zero_()\n"
    e = effects(CUSTOM_OP.format(mutates="()", body="h0(y)") + chain)["t::f"]
    assert written(e, "y") is Knowledge.UNKNOWN
    assert "not followed" in e.argument("y").unknown_because


def test_a_syntax_error_is_an_input_error_with_its_line() -> None:
    with pytest.raises(InputError) as exc:
        read_python_kernels("k.py", "import torch\n@torch.library.custom_op('t::f', mutates_args=())\ndef f(:\n")
    assert exc.value.line == 3


def test_a_stub_body_is_unknown_not_unwritten() -> None:
    e = effects(CUSTOM_OP.format(mutates="('y',)", body="..."))["t::f"]
    assert written(e, "y") is Knowledge.UNKNOWN and "stub" in e.argument("y").unknown_because


def test_a_module_without_registrations_is_not_parsed() -> None:
    assert read_python_kernels("k.py", "def f(:\n").kernels == []


@pytest.mark.parametrize("spelling", ["absolute", "relative"])
@pytest.mark.parametrize("annotation", ["Tensor", "Tensor(a!)"])
def test_lint_reads_a_kernel_registered_on_a_library_of_a_sibling_module(tmp_path, monkeypatch, annotation: str, spelling: str) -> None:
    """TorchAir's layout: ``from ._lib import lib`` then ``lib.define``/``lib.impl`` (no ``torch.library`` in
    the module). An unannotated write is K201 at the schema; the annotated twin is silent. The sibling is
    found however the linted path is spelled (``opkit lint .`` gives paths like ``./ops/_gather.py``)."""
    from opkit.lint import lint

    package = tmp_path / "ops"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_lib.py").write_text('import torch\n\nlib = torch.library.Library("t_sib", "DEF")\n')
    (package / "_gather.py").write_text(textwrap.dedent(f"""\
        import torch.distributed.distributed_c10d as c10d
        from ._lib import lib

        lib.define("gather({annotation} out, Tensor input) -> ()")

        def gather_npu(output_tensor, input_tensor):
            c10d.all_gather_into_tensor(output_tensor, input_tensor)

        def gather_meta(output_tensor, input_tensor):
            return None

        lib.impl("gather", gather_npu, "PrivateUse1")
        lib.impl("gather", gather_meta, "Meta")
        """))
    if spelling == "relative":
        monkeypatch.chdir(tmp_path)
    result = lint([str(package) if spelling == "absolute" else "./ops"], use_cache=False)
    k201 = [f for f in result.findings if f.code == "K201"]
    if annotation == "Tensor":
        assert [(f.path.rsplit("/", 1)[-1], f.line) for f in k201] == [("_gather.py", 4)]
        assert "line 7: c10d.all_gather_into_tensor(...) writes its output" in k201[0].message
        assert "torch.compile removes the call" in k201[0].message
    else:
        assert k201 == []


_GENERIC = {
    # rule: (kernel that fires it, its correct twin)
    "K201": ('@torch.library.custom_op("pg::k", mutates_args=())\ndef k(x: torch.Tensor, cache: torch.Tensor) -> None:\n    cache[0] = x[0]\n',
             '@torch.library.custom_op("pg::k", mutates_args=("cache",))\ndef k(x: torch.Tensor, cache: torch.Tensor) -> None:\n    cache[0] = x[0]\n'),
    "K202": ('@torch.library.custom_op("pg::k", mutates_args=("x", "y"))\ndef k(x: torch.Tensor, y: torch.Tensor) -> None:\n    y.copy_(x)\n',
             '@torch.library.custom_op("pg::k", mutates_args=("y",))\ndef k(x: torch.Tensor, y: torch.Tensor) -> None:\n    y.copy_(x)\n'),
    "K203": ('@torch.library.custom_op("pg::k", mutates_args=())\ndef k(x: torch.Tensor) -> torch.Tensor:\n    return x.view(-1)\n',
             '@torch.library.custom_op("pg::k", mutates_args=())\ndef k(x: torch.Tensor) -> torch.Tensor:\n    return x.view(-1).clone()\n'),
    "K207": ('@torch.library.custom_op("pg::k", mutates_args=())\ndef k(x: torch.Tensor) -> None:\n    y = x * 2\n',
             '@torch.library.custom_op("pg::k", mutates_args=("x",))\ndef k(x: torch.Tensor) -> None:\n    x.mul_(2)\n'),
    "K209": ('@torch.library.custom_op("pg::k", mutates_args=())\ndef k(x: torch.Tensor) -> torch.Tensor:\n    return x / x.max().item()\n',
             '@torch.library.custom_op("pg::k", mutates_args=())\ndef k(x: torch.Tensor) -> torch.Tensor:\n    return x / x.max()\n'),
}  # fmt: skip


@pytest.mark.parametrize("code", sorted(_GENERIC))
def test_the_generic_kernel_rules_fire_on_python_kernels_and_not_on_their_twins(tmp_path, code: str) -> None:
    from opkit.lint import lint

    fires, twin = _GENERIC[code]
    for name, body, expected in (("fires.py", fires, [code]), ("twin.py", twin, [])):
        path = tmp_path / name
        path.write_text("import torch\n\n" + body + "\n\n@k.register_fake\ndef _(*args):\n    return None\n")
        codes = [f.code for f in lint([str(path)], use_cache=False).findings if f.code.startswith("K2")]
        assert codes == expected, (name, codes)
        if expected:
            (finding,) = [f for f in lint([str(path)], use_cache=False).findings if f.code == code]
            assert (finding.line, finding.column) == (3, 2)  # at the custom_op decorator: its schema is inferred there


def test_an_op_func_imported_from_another_module_of_the_package_is_read_there(tmp_path) -> None:
    """vllm-ascend registers ``direct_register_custom_op(op_func=rope_forward_oot)`` with the function imported
    from ``vllm_ascend.ops.rotary_embedding``: its body is read in that module, its evidence names that file."""
    from types import SimpleNamespace

    from opkit.effects.python import produce

    package = tmp_path / "pkg"
    (package / "ops").mkdir(parents=True)
    kern = package / "ops" / "kern.py"
    kern.write_text("import torch\n\n\ndef store(cache: torch.Tensor, x: torch.Tensor) -> None:\n    cache.copy_(x)\n")
    reg = package / "ops" / "reg.py"
    reg.write_text(
        "from vllm.utils.torch_utils import direct_register_custom_op\nfrom pkg.ops.kern import store\n\n"
        'direct_register_custom_op(op_name="store", op_func=store, mutates_args=[])\n'
    )
    files = [SimpleNamespace(path=str(p), text=p.read_text(), schema_sites=lambda: []) for p in (kern, reg)]
    (e,) = produce(SimpleNamespace(python_files=files))
    assert e.op == "vllm::store" and e.kernels[0].path == str(kern)
    (evidence,) = e.argument("cache").evidence
    assert (evidence.path, evidence.line) == (str(kern), 5)
    assert e.argument("x").written is Knowledge.NO
