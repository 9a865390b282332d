"""Hardening III, part 3: the cache never loses a user's file, never follows a planted or foreign symlink."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from opkit import cachedir

YAML = "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n"


def _lint(run_opkit, tmp_path: Path, text: str = YAML) -> tuple[int, str]:
    target = tmp_path / "project" / "x.yaml"
    target.parent.mkdir(exist_ok=True)
    target.write_text(text)
    return run_opkit("lint", str(target))


def test_a_folder_opkit_did_not_create_is_never_pruned(tmp_path, run_opkit, monkeypatch):
    folder = tmp_path / "mine"
    (folder / "results").mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    own = [folder / "results" / f"{i:032x}.json" for i in range(250)] + [folder / "results" / f"{i:032x}.pickle" for i in range(3)]
    for i, path in enumerate(own):
        path.write_text("{}")
        os.utime(path, ns=(i, i))  # older than anything lint writes
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(folder))
    for n in range(3):
        _lint(run_opkit, tmp_path, YAML + f"# {n}\n")
    assert all(path.exists() for path in own)
    assert len(list((folder / "results").glob("*.json"))) == 253  # lint's three entries beside the user's


def test_a_cache_opkit_created_is_still_pruned(tmp_path, run_opkit, monkeypatch):
    from opkit.lint import result_cache

    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(result_cache, "MAX_FILES", 2)
    for n in range(4):
        _lint(run_opkit, tmp_path, YAML + f"# {n}\n")
    results = tmp_path / "cache" / "results"
    assert (results / cachedir.MARKER).is_file()
    assert len(list(results.glob("*.json"))) == 2


def test_a_symlink_planted_as_a_cache_entry_never_gets_written_through(tmp_path, run_opkit, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    _lint(run_opkit, tmp_path)
    (entry,) = (tmp_path / "cache" / "results").glob("*.json")
    entry.unlink()
    entry.symlink_to(victim)
    code, output = _lint(run_opkit, tmp_path)
    assert victim.read_text() == "precious\n"
    assert not entry.is_symlink() and json.loads(entry.read_text())["files"] == 1


def test_store_and_load_never_follow_a_link(tmp_path):
    directory = cachedir.usable()
    assert directory is not None
    victim = tmp_path / "victim.json"
    victim.write_text('{"planted": true}')
    (directory / "entry.json").symlink_to(victim)
    assert cachedir.load_json(directory / "entry.json") is None
    assert cachedir.store_json(directory / "entry.json", {"ok": 1})
    assert victim.read_text() == '{"planted": true}'
    assert cachedir.load_json(directory / "entry.json") == {"ok": 1}


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a symlink to another user needs root")
def test_a_cache_component_that_is_another_users_symlink_is_refused(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    cache.chmod(0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    elsewhere.chmod(0o700)
    (cache / "results").symlink_to(elsewhere)
    os.lchown(cache / "results", 4242, 4242)
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(cache))
    assert cachedir.usable("results") is None
    assert "is a symlink owned by uid 4242" in capsys.readouterr().err
    assert cachedir.store_json(cache / "results" / "x.json", {}) is False
    assert list(elsewhere.iterdir()) == []
