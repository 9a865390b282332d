"""The schema parse cache: a warm run reports exactly what a cold run does; a broken cache is ignored."""

from __future__ import annotations

from pathlib import Path

from opkit.lint import lint
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
    assert lint([str(path)]).findings == cold.findings
    assert cache_file.read_bytes() != b"not a pickle"


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


def test_small_inputs_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    lint(schemas=["my_op(Tensor x) -> Tensor"])
    assert not (tmp_path / "cache").exists()
    assert parse_cache.cache_dir() == tmp_path / "cache"
