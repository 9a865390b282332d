"""The caches: a warm run reports exactly what a cold run does; a broken cache is ignored.

Two layers: the result cache (findings per group of paired files, ``result_cache``) and, behind it
for a miss, the schema parse cache (``cache``). The parse-cache tests clear the result cache first.
"""

from __future__ import annotations

from pathlib import Path

import shutil

from opkit.lint import Selection, lint, result_cache
from opkit.lint import cache as parse_cache
from opkit.lint.engine import CACHE_MIN_SCHEMAS
from opkit.signature import _RESULTS, Dialect


def _fragment(tmp_path: Path) -> Path:
    # Enough distinct schemas to be cached, some valid, some broken.
    lines = ["custom:"]
    for i in range(CACHE_MIN_SCHEMAS + 5):
        func = f"op_{i}_(Tensor(a!) self) -> Tensor(a!)" if i % 10 == 0 else f"op_{i}(Tensor x, int k) -> Tensor"
        lines += [f"  - func: {func}", "    op_api: all_version"]
    path = tmp_path / "ops.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _forget_results(cache_dir: Path) -> None:
    shutil.rmtree(cache_dir / "results", ignore_errors=True)


def test_warm_run_equals_cold_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    cold = lint([str(path)])
    files = list((tmp_path / "cache").glob("schemas-*.pickle"))
    assert len(files) == 1
    _RESULTS.clear()  # as in a fresh process
    warm = lint([str(path)])
    assert warm.findings == cold.findings
    assert sum(f.code == "S101" for f in warm.findings) == 11


def test_editing_one_entry_reparses_only_that_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    lint([str(path)])
    path.write_text(path.read_text().replace("op_1(Tensor x, int k) -> Tensor", "op_1(Tensor x, Dimname k) -> Tensor"))
    _RESULTS.clear()
    _forget_results(tmp_path / "cache")
    keys = [(f"op_{i}(Tensor x, int k) -> Tensor", Dialect.OP_PLUGIN) for i in (2, 3)]
    keys.append(("op_1(Tensor x, Dimname k) -> Tensor", Dialect.OP_PLUGIN))
    opened = parse_cache.ParseCache.open(keys)
    assert opened.missing == [keys[-1]]
    result = lint([str(path)])
    assert [f.code for f in result.findings if f.code == "S002"] == ["S002"]


def test_corrupt_cache_is_ignored_and_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    cold = lint([str(path)])
    (cache_file,) = (tmp_path / "cache").glob("schemas-*.pickle")
    cache_file.write_bytes(b"not a pickle")
    _RESULTS.clear()
    _forget_results(tmp_path / "cache")
    assert lint([str(path)]).findings == cold.findings
    # rewritten as a working cache: every schema of the file is stored again, none left to parse
    funcs = [line.split("func: ", 1)[1] for line in path.read_text().splitlines() if "func: " in line]
    opened = parse_cache.ParseCache.open([(func, Dialect.OP_PLUGIN) for func in funcs])
    assert opened.missing == [] and len(funcs) == CACHE_MIN_SCHEMAS + 5


def test_no_cache_writes_nothing(tmp_path, monkeypatch, run_opkit):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    run_opkit("lint", "--no-cache", str(path))
    assert not (tmp_path / "cache").exists()
    monkeypatch.setenv("OPKIT_NO_CACHE", "1")
    run_opkit("lint", str(path))
    assert not (tmp_path / "cache").exists()


def test_unwritable_cache_dir_does_not_fail_the_lint(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(blocker / "cache"))
    result = lint([str(_fragment(tmp_path))])
    assert result.exit_code() == 1  # the S101 findings, no crash


def test_small_inputs_get_no_parse_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    lint(schemas=["my_op(Tensor x) -> Tensor"])
    assert not list((tmp_path / "cache").glob("schemas-*.pickle"))
    assert parse_cache.cache_dir() == tmp_path / "cache"


# ------------------------------------------------------------------------------------------------
# The result cache
# ------------------------------------------------------------------------------------------------

META = 'from torch.library import Library, impl\nm = Library("npu", "IMPL", "Meta")\n\n@impl(m, "my_op")\ndef my_op_meta(x, k=1):\n    return x.new_empty([k])\n'
YAML = "custom:\n  - func: my_op(Tensor x, int k=1) -> Tensor\n    op_api: all_version\n"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "proj").mkdir(exist_ok=True)
    yaml_path, meta_path = tmp_path / "proj" / "ops.yaml", tmp_path / "proj" / "meta.py"
    yaml_path.write_text(YAML)
    meta_path.write_text(META)
    return yaml_path, meta_path


def test_a_warm_run_parses_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    cold = lint([str(path)])
    assert len(list((tmp_path / "cache" / "results").glob("*.pickle"))) == 1
    _RESULTS.clear()
    warm = lint([str(path)])
    assert warm == cold
    assert _RESULTS == {}  # served from the result cache: no schema was parsed


def test_a_changed_paired_file_invalidates_the_group(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    yaml_path, meta_path = _project(tmp_path)
    assert lint([str(tmp_path / "proj")]).findings == ()
    # Only the Meta file changes: the yaml's group must be re-linted, since M005 pairs the two.
    meta_path.write_text(META.replace("k=1", "k=2"))
    assert [f.code for f in lint([str(tmp_path / "proj")]).findings] == ["M005"]
    meta_path.write_text(META)
    assert lint([str(tmp_path / "proj")]).findings == ()


def test_a_changed_setting_or_version_invalidates(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    everything = lint([str(path)])
    only_s2 = lint([str(path)], selection=Selection(select=("S2",)))
    assert {f.code for f in everything.findings} == {"S101", "S202"} and {f.code for f in only_s2.findings} == {"S202"}
    assert lint([str(path)]) == everything
    results = tmp_path / "cache" / "results"
    before = set(results.glob("*.pickle"))
    import opkit

    monkeypatch.setattr(opkit, "__version__", opkit.__version__ + ".post1")
    result_cache.code_fingerprint.cache_clear()
    try:
        assert lint([str(path)]) == everything
        assert len(set(results.glob("*.pickle")) - before) == 1  # a new key: computed afresh and stored
    finally:
        result_cache.code_fingerprint.cache_clear()


def test_a_corrupt_result_cache_file_is_ignored_and_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    cold = lint([str(path)])
    (cache_file,) = (tmp_path / "cache" / "results").glob("*.pickle")
    for garbage in (b"not a pickle", b"", __import__("pickle").dumps(("another key", [], 1))):
        cache_file.write_bytes(garbage)
        assert lint([str(path)]) == cold
        assert cache_file.read_bytes() != garbage
