"""Ops whose tensors are all ``Tensor?`` (vllm-ascend's *_metadata ops): generated with a warning, not
refused, since torch dispatches them on the tensors a call passes."""

from __future__ import annotations

from opkit.generate.refusals import optional_only_warning, refusal
from opkit.generate.spec import make_spec
from opkit.samples import optional_dispatch_tensor, sample_call
from opkit.signature import Dialect, parse_schema

METADATA = 'meta_op(int heads, Tensor? cu_seqlens=None, Tensor? seqused=None, str layout="BSND") -> Tensor metadata'


def test_an_op_whose_tensors_are_all_optional_is_generated_with_a_warning():
    sig = parse_schema(METADATA, Dialect.TORCH_LIBRARY)
    assert refusal(sig, METADATA, "library") is None
    spec = make_spec("meta_op", schema=METADATA, style="library")
    assert spec.out_like == "cu_seqlens"
    assert optional_only_warning(sig) == (
        "every tensor of meta_op is optional: torch dispatches it on the tensors a call passes, so a call that passes none "
        "fails ('There were no tensor arguments to this function'); its outputs are sized like 'cu_seqlens', which a call "
        "must pass (or write the sizes in the Meta function)"
    )


def test_the_sample_call_passes_the_first_optional_tensor():
    sig = parse_schema(METADATA, Dialect.TORCH_LIBRARY)
    assert optional_dispatch_tensor(sig) == "cu_seqlens"
    assert [(s.name, s.kind) for s in sample_call(sig)] == [("heads", "value"), ("cu_seqlens", "tensor")]


def test_an_op_with_a_tensor_it_always_receives_is_unchanged():
    schema = "my_op(Tensor x, Tensor? w=None, int k=1) -> Tensor"
    sig = parse_schema(schema, Dialect.TORCH_LIBRARY)
    assert optional_dispatch_tensor(sig) == "" and optional_only_warning(sig) is None
    assert [s.name for s in sample_call(sig)] == ["x"]
    no_tensor = parse_schema("my_op(int n) -> Tensor", Dialect.TORCH_LIBRARY)
    assert "no Tensor input" in str(refusal(no_tensor, "my_op(int n) -> Tensor", "library"))  # still refused: nothing to dispatch on
