"""Registration helpers of the ecosystem (vLLM's and sglang's ``direct_register_custom_op``), module-local
wrappers around them and decorator factories: small examples of our own, in the shapes serving stacks write."""

from __future__ import annotations

import textwrap

import pytest

from opkit.formats.python_registrations import load_registration_file
from opkit.lint import Selection, lint


def load(text: str, path: str = "ops.py", modules=None):
    return load_registration_file(path, textwrap.dedent(text), modules=modules)


def codes(tmp_path, files: dict[str, str], select=("M", "S")):
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    result = lint([str(tmp_path)], selection=Selection(tuple(select)), use_cache=False)
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line, f.op) for f in result.findings)


VLLM = """\
    import torch
    from vllm.utils.torch_utils import direct_register_custom_op


    def scale_rows(x: torch.Tensor, out: torch.Tensor, factor: float, bias: torch.Tensor | None = None) -> None:
        out.copy_(x * factor)


    def scale_rows_fake(x: torch.Tensor, out: torch.Tensor, factor: float, bias: torch.Tensor | None = None) -> None:
        return None


    direct_register_custom_op(
        op_name="scale_rows",
        op_func=scale_rows,
        mutates_args=["out"],
        fake_impl=scale_rows_fake,
        dispatch_key="PrivateUse1",
    )
"""


def test_vllm_helper_is_a_custom_op_with_its_inferred_schema_and_fake():
    f = load(VLLM)
    (op,) = f.custom_ops
    assert (op.qualname, op.kind, op.dispatch_key, op.mutates_args) == ("vllm::scale_rows", "direct_register_custom_op", "PrivateUse1", ("out",))
    assert op.schema == "vllm::scale_rows(Tensor x, Tensor(a1!) out, float factor, Tensor? bias=None) -> ()"
    assert op.function.name == "scale_rows" and op.function.node.name == "scale_rows"  # the body, for the effects model
    (fake,) = f.registrations
    assert (fake.qualname, fake.style, fake.function.name, fake.custom_op) == ("vllm::scale_rows", "fake", "scale_rows_fake", op)
    assert [s.text for s in f.schema_sites()] == [op.schema]


def test_older_vllm_import_target_lib_and_no_mutates_args():
    f = load(
        """\
        import torch
        from torch.library import Library
        from vllm.utils import direct_register_custom_op as register

        my_lib = Library("myext", "FRAGMENT")


        def gate(x: torch.Tensor, k: int) -> torch.Tensor:
            return x[:k].clone()


        register("gate", gate, target_lib=my_lib)
        """
    )
    (op,) = f.custom_ops
    assert (op.qualname, op.mutates_args, op.schema) == ("myext::gate", (), "myext::gate(Tensor x, SymInt k) -> Tensor")
    assert f.registrations == []  # no fake_impl


def test_sglang_helper_requires_mutates_args_and_defaults_to_its_own_namespace():
    f = load(
        """\
        import torch
        from sglang.srt.utils import direct_register_custom_op


        def norm(x: torch.Tensor) -> torch.Tensor:
            return x / x.norm()


        direct_register_custom_op("norm", norm, [])
        direct_register_custom_op("norm2", norm)
        """
    )
    first, second = f.custom_ops
    assert (first.qualname, first.schema, first.schema_problem) == ("sglang::norm", "sglang::norm(Tensor x) -> Tensor", None)
    assert second.schema is None and "requires mutates_args" in second.schema_problem


def test_op_func_imported_from_another_module_of_the_package(tmp_path):
    (tmp_path / "pkg" / "kernels").mkdir(parents=True)
    (tmp_path / "pkg" / "kernels" / "rope.py").write_text(
        "from typing import Optional\nimport torch\n\n\n"
        "def rope_impl(q: torch.Tensor, k: torch.Tensor, dim: int, offsets: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor]:\n"
        "    return q.clone(), k.clone()\n"
    )
    ops = tmp_path / "pkg" / "ops.py"
    ops.write_text(
        "import torch\nfrom vllm.utils.torch_utils import direct_register_custom_op\nfrom pkg.kernels.rope import rope_impl\n\n\n"
        "def rope_fake(q, k, dim, offsets=None):\n    return torch.empty_like(q), torch.empty_like(k)\n\n\n"
        'direct_register_custom_op(op_name="rope", op_func=rope_impl, mutates_args=[], fake_impl=rope_fake)\n'
    )

    def modules(path):
        try:
            return open(path).read()
        except OSError:
            return None

    (op,) = load_registration_file(str(ops), ops.read_text(), modules=modules).custom_ops
    assert op.schema == "vllm::rope(Tensor q, Tensor k, SymInt dim, Tensor? offsets=None) -> (Tensor, Tensor)"
    assert op.function_path.endswith("pkg/kernels/rope.py") and op.function.name == "rope_impl"
    # without the package's modules op_func is unknown: the op is listed as defined, with no schema
    unread = load_registration_file(str(ops), ops.read_text())
    assert unread.custom_ops == [] and unread.unread_ops == ["vllm::rope"] and [r.op for r in unread.registrations] == ["rope"]


def test_a_module_local_wrapper_around_the_helper_registers_at_each_call():
    f = load(
        """\
        import torch
        from vllm.utils.torch_utils import direct_register_custom_op


        def _register(name, impl, fake, writes=()):
            direct_register_custom_op(op_name=name, op_func=impl, mutates_args=list(writes), fake_impl=fake, dispatch_key="PrivateUse1")


        def _register_plain(name, impl, fake):
            _register(name, impl, fake)


        def add_one(x: torch.Tensor) -> torch.Tensor:
            return x + 1


        def add_one_fake(x):
            return torch.empty_like(x)


        _register_plain("add_one", add_one, add_one_fake)
        _register("add_two", add_one, add_one_fake)
        """
    )
    assert [(op.qualname, op.line, op.schema) for op in f.custom_ops] == [
        ("vllm::add_one", 21, None),  # mutates_args=list(writes) is computed: no schema claimed
        ("vllm::add_two", 22, None),
    ]
    assert [(r.qualname, r.function.name, r.line) for r in f.registrations] == [("vllm::add_one", "add_one_fake", 21), ("vllm::add_two", "add_one_fake", 22)]


def test_a_decorator_factory_two_levels_deep_registers_the_function_it_decorates():
    f = load(
        """\
        import torch

        NS = "attn"


        def _fake_registrar(qualname: str):
            from torch.library import register_fake as native

            return native(qualname)


        def register_attn_fake(op_name: str):
            if not torch.cuda.is_available():
                return lambda fn: fn
            return _fake_registrar(f"{NS}::{op_name}")


        @register_attn_fake("rope")
        def rope_fake(x, cos, sin):
            return torch.empty_like(x)
        """
    )
    assert [(r.qualname, r.style, r.function.name, r.line) for r in f.registrations] == [("attn::rope", "fake", "rope_fake", 18)]


def test_the_helpers_fakes_are_linted(tmp_path):
    found = codes(
        tmp_path,
        {
            "ops.py": """\
            import torch
            from vllm.utils.torch_utils import direct_register_custom_op


            def pair(q: torch.Tensor, k: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
                return q * 2, k * 2


            def pair_fake(q, k):
                return q, k


            def write(x: torch.Tensor, out: torch.Tensor) -> None:
                out.copy_(x)


            def write_fake(x, out):
                return None


            direct_register_custom_op(op_name="pair", op_func=pair, mutates_args=[], fake_impl=pair_fake)
            direct_register_custom_op(op_name="write", op_func=write, fake_impl=write_fake)
            direct_register_custom_op(op_name="bad", op_func=write, mutates_args=["missing"], fake_impl=write_fake)
            """
        },
        select=("M", "S", "K"),
    )
    assert found == [
        ("K201", "ops.py", 22, "vllm::write"),  # op_func writes 'out', mutates_args (default []) does not list it
        ("M002", "ops.py", 21, "pair"),  # the fake takes 2 of the schema's 3 arguments
        ("M012", "ops.py", 23, "bad"),  # torch raises: mutates_args names no parameter
        ("M015", "ops.py", 21, "pair"),  # the fake returns its inputs for new outputs
    ]
    fixed = codes(
        tmp_path,
        {
            "ops.py": """\
            import torch
            from vllm.utils.torch_utils import direct_register_custom_op


            def pair(q: torch.Tensor, k: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
                return q * 2, k * 2


            def pair_fake(q, k, dim):
                return torch.empty_like(q), torch.empty_like(k)


            def write(x: torch.Tensor, out: torch.Tensor) -> None:
                out.copy_(x)


            def write_fake(x, out):
                return None


            direct_register_custom_op(op_name="pair", op_func=pair, mutates_args=[], fake_impl=pair_fake)
            direct_register_custom_op(op_name="write", op_func=write, mutates_args=["out"], fake_impl=write_fake)
            """
        },
    )
    assert fixed == []


def test_a_helper_op_without_fake_is_missing_one_and_a_directory_walk_reads_the_file(tmp_path):
    found = codes(
        tmp_path,
        {
            "pkg/ops.py": """\
            import torch
            from vllm.utils.torch_utils import direct_register_custom_op


            def double(x: torch.Tensor) -> torch.Tensor:
                return x * 2


            direct_register_custom_op(op_name="double", op_func=double, mutates_args=[])
            """
        },
    )
    assert found == [("M001", "ops.py", 9, "double")]
    (finding,) = lint([str(tmp_path)], selection=Selection(("M001",)), use_cache=False).findings
    assert "has no fake" in finding.message and "pass fake_impl=<fake function> to direct_register_custom_op" in finding.hint


CPP = """\
#include <torch/library.h>
TORCH_LIBRARY(myext, m) {
  m.def("scale(Tensor x, Tensor y) -> Tensor");
}
at::Tensor scale_meta(const at::Tensor &x, const at::Tensor &y) { return at::empty_like(x); }
TORCH_LIBRARY_IMPL(myext, Meta, m) { m.impl("scale", &scale_meta); }
"""


def test_every_python_meta_is_checked_beside_cpp_defs_without_a_yaml(tmp_path):
    meta = """\
    import torch
    from torch.library import Library, impl

    lib = Library("myext", "IMPL", "Meta")


    @impl(lib, "scale")
    def scale_meta(x):
        return torch.empty_like(x)


    @impl(lib, "scal")
    def scal_meta(x, y):
        return torch.empty_like(x)
    """
    found = codes(tmp_path, {"ops.cpp": CPP, "meta.py": meta})
    # a second Meta beside the C++ one, with the wrong arity; a stray one under a name no def has
    assert found == [("M002", "meta.py", 7, "scale"), ("M011", "meta.py", 12, "scal")]
    # a FRAGMENT namespace may have more fragments elsewhere: a name it does not define is not called stray
    found = codes(tmp_path, {"ops.cpp": CPP.replace("TORCH_LIBRARY(myext, m)", "TORCH_LIBRARY_FRAGMENT(myext, m)")})
    assert found == [("M002", "meta.py", 7, "scale")]


# -- inference against torch.library.infer_schema --------------------------------------------------------

CASES = [
    ("x: torch.Tensor", "torch.Tensor", ()),
    ("x: torch.Tensor, out: torch.Tensor", "None", ("out",)),
    ("x: Optional[torch.Tensor], k: int = 3", "torch.Tensor", ()),
    ("xs: list[torch.Tensor], dims: list[int]", "list[torch.Tensor]", ("xs",)),
    ("xs: List[Optional[torch.Tensor]], scale: float = 1.5", "torch.Tensor", ()),
    ("x: torch.Tensor, sizes: Optional[Sequence[int]] = None", "tuple[torch.Tensor, torch.Tensor]", ()),
    ("x: torch.Tensor, flag: bool = True, mode: str = 'half'", "tuple[torch.Tensor]", ()),
    ("x: torch.Tensor, *, eps: float = 1e-06, axis: int | None = None", "torch.Tensor", ()),
    ("x: torch.Tensor, dtype: torch.dtype, dev: Optional[torch.device] = None", "int", ()),
    ("x: torch.Tensor, alpha: torch.types.Number, beta: Optional[float] = None", "bool", ()),
    ("a: torch.Tensor, b: torch.Tensor, c: torch.Tensor", "tuple[torch.Tensor, torch.Tensor, torch.Tensor]", ("a", "c")),
    ("x: torch.Tensor, y: Union[torch.Tensor, None] = None", "float", ("y",)),
    ("x: torch.Tensor, name: Optional[str] = None, k: Optional[list[int]] = None", "torch.Tensor", ("x",)),
    ("x: torch.Tensor, dtype: torch.dtype = torch.float16", "torch.Tensor", ()),
]


@pytest.mark.parametrize("params, returns, mutates", CASES)
def test_inferred_schema_matches_torch_infer_schema(params, returns, mutates):
    torch = pytest.importorskip("torch")
    source = f"from typing import List, Optional, Sequence, Union\nimport torch\n\n\ndef impl({params}) -> {returns}:\n    pass\n"
    scope: dict = {}
    exec(compile(source, "<case>", "exec"), scope)  # our own small function, to ask torch
    expected = "vllm::case" + torch.library.infer_schema(scope["impl"], mutates_args=list(mutates))
    text = source + f"\n\nfrom vllm.utils.torch_utils import direct_register_custom_op\ndirect_register_custom_op(op_name='case', op_func=impl, mutates_args={list(mutates)!r})\n"
    (op,) = load_registration_file("case.py", text).custom_ops
    assert op.schema == expected, (op.schema, expected)
