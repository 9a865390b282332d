"""Integer ScalarType defaults (``ScalarType dst_type=39``, as vllm-ascend writes them) read as the dtype
torch itself passes for the code, and reach a Meta call as a torch dtype."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from opkit.signature import Dialect, DType, parse_schema  # noqa: E402
from opkit.signature.model import _SCALAR_TYPE_CODES  # noqa: E402
from opkit.verify.project import sample_arguments  # noqa: E402


def test_every_code_is_the_dtype_torch_passes_a_python_kernel():
    lib = torch.library.Library("opkit_codes", "FRAGMENT")
    lib.define("seen(Tensor x, ScalarType d) -> Tensor")
    seen = []
    lib.impl("seen", lambda x, d: (seen.append(d), x.clone())[1], "CPU")
    x = torch.ones(1)
    for code, name in _SCALAR_TYPE_CODES.items():
        torch.ops.opkit_codes.seen(x, code)
        assert seen[-1] is getattr(torch, name), code


def test_an_integer_default_reaches_the_meta_call_as_a_torch_dtype():
    sig = parse_schema("my_op(Tensor x, Tensor? w, ScalarType dst_type=39, int mode=1) -> Tensor", Dialect.TORCH_LIBRARY)
    assert sig.argument("dst_type").default_value == DType("int3")
    args, kwargs = sample_arguments(sig, pass_defaults=True)
    assert args[2] is torch.int3 and args[3] == 2 and kwargs == {}
