"""Every `custom:` entry of the real op_plugin_functions.yaml adopted (`opkit new --from corpus.yaml --op NAME`)
→ lint → verify, in one process. Adopting an entry generates from its func and keeps its versions and
gen_opapi, so this one pass serves both generating from a signature and adopting a yaml entry.

benchmarks/corpus_ops.py --adopt runs the same function and prints the counts the README reports.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus_ops.py"


def _corpus_ops():
    spec = importlib.util.spec_from_file_location("corpus_ops", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_every_custom_entry_is_adopted_lints_and_verifies_or_is_a_documented_refusal(corpus_yaml, tmp_path):
    corpus_ops = _corpus_ops()
    schemas = corpus_ops.corpus_schemas(corpus_yaml)
    assert len(schemas) == 418
    run = corpus_ops.run_schemas(schemas, verify=True, workdir=tmp_path, adopt_from=corpus_yaml)
    assert run.counts["crash"] == 0, run.failures["crash"][:3]
    assert run.ok_share >= 0.95, run.summary()
    # every documented refusal shows a corrected schema, and opkit new takes it
    accepted, refused = corpus_ops.corrected_schemas_generate(run)
    # (npu_dropout_gen_mask, left with no tensor input once Layout and Device go, takes ATen's new_* Tensor self)
    assert refused >= 40 and accepted == refused, run.summary()
