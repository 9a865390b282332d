"""Shared test fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS_YAML = REPO.parent / "shared" / "corpus" / "op-plugin" / "op_plugin_functions.yaml"


def pytest_addoption(parser):
    parser.addoption(
        "--corpus-full", action="store_true",
        help="also verify every adopted corpus entry (about a second an op; the default suite verifies a covering sample)",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--corpus-full"):
        return
    skip = pytest.mark.skip(reason="the whole corpus through verify: run with --corpus-full")
    for item in items:
        if "corpus_full" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def corpus_yaml() -> Path:
    """The real 1514-entry op_plugin_functions.yaml, read in place (never copied into the project).

    A local run without it skips; under CI (``CI=true``, as .ci/run and CI services set it) a missing
    corpus fails, so a green CI run always includes the tests against real material."""
    if not CORPUS_YAML.is_file():
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"corpus not present at {CORPUS_YAML}: CI needs ../shared/corpus next to the repository")
        pytest.skip(f"corpus not present at {CORPUS_YAML}")
    return CORPUS_YAML


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs mounted in tmp_path (root only, else skipped); ``fill()`` takes all its free space."""
    import subprocess

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")

    class SmallDisk:
        path = disk

        @staticmethod
        def fill() -> None:
            with open(disk / ".filler", "wb", buffering=0) as f:  # a name of its own: never taken for the user's file
                try:
                    while True:
                        f.write(b"\0" * 4096)
                except OSError:
                    pass
            assert os.statvfs(disk).f_bavail == 0

    try:
        yield SmallDisk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.fixture
def run_opkit():
    """Run the `opkit` CLI in-process with click's runner; returns (exit_code, output)."""
    from click.testing import CliRunner

    from opkit.cli import main

    def run(*args: str, input: str | None = None):
        result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
        return result.exit_code, result.output

    return run


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Tests never read or write the user's ~/.cache/opkit."""
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "opkit-cache"))


_WHEEL_UNAVAILABLE: list[str] = []


@pytest.fixture(scope="session", autouse=True)
def _torch_npu_wheel(request):
    """npugraph_ex from the torch-npu wheel, unpacked once into pytest's cache (.pytest_cache, shared by
    xdist workers and later runs) and pointed at with OPKIT_TORCH_NPU, so ``auto`` runs it emulated."""
    if os.environ.get("OPKIT_TORCH_NPU"):
        yield
        return
    from opkit import torch_npu_wheel as wheel

    saved = os.environ.get("OPKIT_CACHE_DIR")
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    where = cache.mkdir("opkit") if cache is not None else request.getfixturevalue("tmp_path_factory").getbasetemp() / "opkit"
    os.environ["OPKIT_CACHE_DIR"] = str(where)
    try:
        tree = wheel.obtain()
    except wheel.WheelUnavailable as exc:
        _WHEEL_UNAVAILABLE.append(str(exc))
        tree = None
    finally:
        if saved is None:
            os.environ.pop("OPKIT_CACHE_DIR", None)
        else:
            os.environ["OPKIT_CACHE_DIR"] = saved
        wheel.obtain.cache_clear()
    if tree is not None:
        os.environ["OPKIT_TORCH_NPU"] = str(tree.root)
    yield
    os.environ.pop("OPKIT_TORCH_NPU", None)


@pytest.fixture
def npugraph_ex_wheel():
    """Skips the test, with the reason, only when no torch-npu wheel can be had (package index unreachable)."""
    if _WHEEL_UNAVAILABLE:
        pytest.skip(f"needs the torch-npu wheel for npugraph_ex: {_WHEEL_UNAVAILABLE[0]}")
