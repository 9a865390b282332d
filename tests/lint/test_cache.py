"""The caches: a warm run reports exactly what a cold run does; a broken cache is ignored.

Two layers: the result cache (findings per group of paired files, ``result_cache``) and, behind it
for a miss, the schema parse cache (``cache``). The parse-cache tests clear the result cache first.
Both hold data, never code (the last section): a planted file runs nothing, a directory others
control is refused, and another build of opkit (same version, other code) never reuses a result.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from opkit import cachedir
from opkit.lint import Selection, lint, result_cache
from opkit.lint import cache as parse_cache
from opkit.lint.engine import CACHE_MIN_SCHEMAS
from opkit.signature import Dialect, SchemaError, parse_schema
from opkit.signature.parse import _RESULTS

ROOT = Path(__file__).resolve().parents[2]


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
    files = list((tmp_path / "cache").glob("schemas-*.json"))
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
    (cache_file,) = (tmp_path / "cache").glob("schemas-*.json")
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
    assert not list((tmp_path / "cache").glob("schemas-*.json"))
    assert cachedir.location() == tmp_path / "cache"


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
    assert len(list((tmp_path / "cache" / "results").glob("*.json"))) == 1
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
    before = set(results.glob("*.json"))
    import opkit

    monkeypatch.setattr(opkit, "__version__", opkit.__version__ + ".post1")
    result_cache.code_fingerprint.cache_clear()
    try:
        assert lint([str(path)]) == everything
        assert len(set(results.glob("*.json")) - before) == 1  # a new key: computed afresh and stored
    finally:
        result_cache.code_fingerprint.cache_clear()


def test_a_corrupt_result_cache_file_is_ignored_and_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    cold = lint([str(path)])
    (cache_file,) = (tmp_path / "cache" / "results").glob("*.json")
    for garbage in (b"not a pickle", b"", __import__("pickle").dumps(("another key", [], 1))):
        cache_file.write_bytes(garbage)
        assert lint([str(path)]) == cold
        assert cache_file.read_bytes() != garbage


# ------------------------------------------------------------------------------------------------
# Data, never code
# ------------------------------------------------------------------------------------------------


class _Planted:
    """Unpickling this runs ``os.mkdir(marker)``: what a planted cache file would do if it were unpickled."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def test_a_planted_pickle_in_either_cache_runs_nothing(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(cache))
    path = _fragment(tmp_path)
    cold = lint([str(path)])
    marker = tmp_path / "ran"
    planted = pickle.dumps(_Planted(marker))
    entries = [*cache.glob("schemas-*"), *(cache / "results").glob("*.json")]
    assert len(entries) == 2
    for entry in entries:  # every cache file, and the names opkit used for pickles before
        entry.write_bytes(planted)
        entry.with_suffix(".pickle").write_bytes(planted)
    _RESULTS.clear()
    assert lint([str(path)]) == cold
    assert not marker.exists()
    assert pickle.loads(planted) is None and marker.is_dir()  # the planted file is live: it would have run


def test_the_cache_directory_is_created_0700_and_its_files_0600(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    lint([str(_fragment(tmp_path))])
    for directory in (tmp_path / "cache", tmp_path / "cache" / "results"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.name != "CACHEDIR.TAG"]
    assert len(files) == 2 and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)


def _lint_subprocess(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opkit", "lint", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


@pytest.mark.parametrize("kind", ["writable-by-others", "owned-by-another-user"])
def test_a_directory_others_control_is_refused_with_one_message_and_the_cache_off(tmp_path, kind):
    cache = tmp_path / "cache"
    cache.mkdir()
    if kind == "writable-by-others":
        cache.chmod(0o777)
        why = "is writable by others (mode 777)"
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a directory to another user needs root")
        os.chown(cache, 4321, 4321)
        why = f"is owned by uid 4321, not by the current user (uid {os.geteuid()})"
    planted = pickle.dumps(_Planted(tmp_path / "ran"))
    (cache / "results").mkdir()
    path = _fragment(tmp_path)
    env = {**os.environ, "OPKIT_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = _lint_subprocess([str(path)], env, tmp_path)
    assert done.returncode == 1 and "S101" in done.stdout
    assert done.stderr.count(f"opkit: warning: the cache directory {cache} {why}; the cache is off for this run") == 1, done.stderr
    assert sorted(p.name for p in cache.rglob("*")) == ["results"]  # nothing written into it
    for name in ("results/x.json", "results/x.pickle"):
        (cache / name).write_bytes(planted)
    assert _lint_subprocess([str(path)], env, tmp_path).stdout == done.stdout
    assert not (tmp_path / "ran").exists()


def test_a_subdirectory_others_may_write_is_refused_too(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "results").mkdir(parents=True, mode=0o700)
    (tmp_path / "cache" / "results").chmod(0o733)
    assert cachedir.usable() == tmp_path / "cache"
    assert cachedir.usable("results") is None
    assert cachedir.usable("results") is None
    assert capsys.readouterr().err.count("is writable by others (mode 733)") == 1  # warned once a process


def test_another_build_of_the_same_version_does_not_reuse_results(tmp_path):
    """The stale-results finding: a build whose code differs but whose version, file sizes and mtimes match."""
    build = tmp_path / "build"
    shutil.copytree(ROOT / "opkit", build / "opkit", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "OPKIT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(build)}
    path = tmp_path / "ops.yaml"
    path.write_text("custom:\n  - func: my_op(Tensor x, int k) -> Tensor\n    op_api: all_version\n")
    first = _lint_subprocess([str(path)], env, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    rule = build / "opkit" / "lint" / "finding.py"
    info = rule.stat()
    text = rule.read_text()
    rule.write_text(text.replace('"""', "'''", 1).replace('"""', "'''", 1))  # same size, other bytes
    os.utime(rule, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert rule.stat().st_size == info.st_size and rule.read_text() != text
    results = tmp_path / "cache" / "results"
    before = set(results.iterdir())
    second = _lint_subprocess([str(path)], env, tmp_path)
    assert second.stdout == first.stdout
    assert len(set(results.iterdir()) - before) == 1  # computed afresh, under another key


@pytest.mark.parametrize(
    ("text", "dialect"),
    [
        ("my_op.out(Tensor self, Tensor? w=None, *, int[2] k=1, Tensor(a!) out) -> Tensor(a!)", Dialect.OP_PLUGIN),
        ("my_op(Tensor[] xs, Tensor?[] ys, SymInt[] size, ScalarType? dtype=None, str mode=\"x\") -> (Tensor a, Tensor b)", Dialect.OP_PLUGIN),
        ("npu::my_op(Tensor(a -> *) x, Tensor! y, Tensor[](b!) zs) -> Tensor(a)", Dialect.TORCH_LIBRARY),
        ("my_op(Tensor x, Dimname k) -> Tensor", Dialect.OP_PLUGIN),
        ("my_op(Tensor x, int k=) -> Tensor", Dialect.OP_PLUGIN),
    ],
)
def test_a_parse_result_comes_back_from_json_equal(text, dialect):
    try:
        result = parse_schema(text, dialect)
    except SchemaError as exc:
        result = exc
    types: list[list] = []
    encoded = json.loads(json.dumps(parse_cache.encode(result, types, {})))
    decoded = parse_cache.decode(encoded, (text, dialect), json.loads(json.dumps(types)), {})
    if isinstance(result, SchemaError):
        assert isinstance(decoded, SchemaError)
        assert (decoded.message, decoded.text, decoded.column, decoded.dialect, decoded.hint, decoded.canonical) == (
            result.message, result.text, result.column, result.dialect, result.hint, result.canonical
        )  # fmt: skip
        assert str(decoded) == str(result)
    else:
        assert decoded == result and str(decoded) == str(result)


def test_a_cache_entry_of_the_wrong_shape_is_parsed_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = _fragment(tmp_path)
    cold = lint([str(path)])
    (cache_file,) = (tmp_path / "cache").glob("schemas-*.json")
    document = cachedir.load_json(cache_file)
    for key in list(document["entries"])[:3]:
        document["entries"][key] = ["ok", 1, None]
    assert cachedir.store_json(cache_file, document)
    shutil.rmtree(tmp_path / "cache" / "results")
    _RESULTS.clear()
    assert lint([str(path)]).findings == cold.findings
    (results_file,) = (tmp_path / "cache" / "results").glob("*.json")
    stored = cachedir.load_json(results_file)
    stored["findings"][0][4] = "not a line"
    assert cachedir.store_json(results_file, stored)
    assert result_cache.load(stored["key"]) is None
