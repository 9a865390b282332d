"""opkit/torch_npu_wheel.py on its own: real zip files and trees in tmp_path, the cache in tmp_path, and pip
kept off the network (PIP_NO_INDEX=1; a wheel it "downloads" comes from a local --find-links folder).
The slower tests with the real torch-npu wheel are in test_npugraph_ex_runtime.py."""

from __future__ import annotations

import fcntl
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import os

from opkit import cachedir
from opkit import torch_npu_wheel as wheel
from opkit.torch_npu_wheel import Wheel, WheelUnavailable

NPUGRAPH_EX_INIT = "torch_npu/dynamo/npugraph_ex/__init__.py"
VERSION_PY = "torch_npu/version.py"
DIST_INFO = {
    "torch_npu-{v}.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch-npu\nVersion: {v}\n",
    "torch_npu-{v}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "torch_npu-{v}.dist-info/RECORD": "",
}


def make_zip(path: Path, members: dict[str, str]) -> Path:
    """A zip of ``members``; an empty ``*.dist-info/RECORD`` among them is filled in as a wheel's is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            if name.endswith(".dist-info/RECORD") and text == "":
                text = "".join(f"{n},{wheel._record_hash(t.encode())},{len(t.encode())}\n" for n, t in members.items() if n != name) + f"{name},,\n"
            archive.writestr(name, text)
    return path


def npugraph_ex_members(version: str = "2.13.0") -> dict[str, str]:
    """What opkit keeps of a torch-npu 2.13 wheel, and what it leaves."""
    return {
        NPUGRAPH_EX_INIT: "PACKAGE = 'npugraph_ex'\n",
        "torch_npu/dynamo/npugraph_ex/inference.py": "MODE = 'capture'\n",
        VERSION_PY: f"__version__ = '{version}+cpu'\n",
        "torch_npu/__init__.py": "raise ImportError('never imported')\n",
        "torch_npu/_C.so": "binary",
        **{k.format(v=version): t.format(v=version) for k, t in DIST_INFO.items()},
    }


def pin(monkeypatch, whl: Path) -> str:
    """Make ``whl`` one of the wheels opkit pins (a pip download is used only then); its sha256."""
    digest = wheel.wheel_sha256(whl)
    monkeypatch.setitem(wheel.PINNED_SHA256, "test", {whl.name: digest})
    return digest


def keyed(whl: Path, version: str = "2.13.0") -> str:
    """The name of the tree a wheel file is unpacked to: its version and its content's hash."""
    return f"{version}-{wheel.wheel_sha256(whl)[:24]}"


def files_under(root: Path) -> list[str]:
    """The files under ``root``, without the bytecode opkit compiles beside an unpacked tree's modules."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


KEPT = ["torch_npu/dynamo/npugraph_ex/__init__.py", "torch_npu/dynamo/npugraph_ex/inference.py", "torch_npu/version.py"]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """OPKIT_CACHE_DIR in tmp_path, no OPKIT_TORCH_NPU, pip without an index, obtain()'s memo empty before and after."""
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPKIT_TORCH_NPU", raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    wheel.obtain.cache_clear()
    yield tmp_path / "cache"
    wheel.obtain.cache_clear()  # the other tests' obtain() reads the real wheel again


# --- versions -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("torch", "npu"), [("2.13.0+cpu", "2.13.0"), ("2.14.1", "2.14.1"), ("2.13.0+cu128+x", "2.13.0")])
def test_torch_npu_version_is_torchs_without_the_local_part(torch, npu):
    assert wheel.torch_npu_version(torch) == npu


def test_torch_npu_version_defaults_to_the_installed_torch():
    assert wheel.torch_npu_version() == metadata.version("torch").split("+")[0]


@pytest.mark.parametrize("version", ["2.13.0", "2.13.5", "2.14.0", "2.14.1rc1", "2.13"])
def test_supported_versions_pass(version):
    wheel.check_supported(version)


@pytest.mark.parametrize("version", ["2.9.0", "2.12.0", "2.15.0", "3.13.0", "12.13.0", "2.1.3", "2", ""])
def test_unsupported_versions_are_refused_with_the_supported_ones_named(version):
    with pytest.raises(WheelUnavailable) as err:
        wheel.check_supported(version)
    assert str(err.value) == (
        f"torch-npu {version} is not emulated: opkit runs the npugraph_ex package of torch-npu 2.13 and 2.14"
        " (older releases have only torchair with mode='reduce-overhead')"
    )


# --- trees ------------------------------------------------------------------------------------------------------


def test_layout_error_names_torchair_only_trees_and_else_the_missing_package(tmp_path):
    (tmp_path / "old" / "torch_npu" / "dynamo" / "torchair").mkdir(parents=True)
    err = wheel._layout_error(tmp_path / "old", "WHERE")
    assert isinstance(err, WheelUnavailable) and str(err) == (
        "WHERE has torchair but no npugraph_ex package (a torch-npu older than 2.13, which uses "
        "mode='reduce-overhead'): opkit emulates npugraph_ex of torch-npu 2.13 and 2.14"
    )
    (tmp_path / "file" / "torch_npu" / "dynamo").mkdir(parents=True)
    (tmp_path / "file" / "torch_npu" / "dynamo" / "torchair").write_text("a file, not the package")
    for root in (tmp_path / "file", tmp_path / "empty"):
        err = wheel._layout_error(root, "WHERE")
        assert isinstance(err, WheelUnavailable) and str(err) == "WHERE holds no torch_npu/dynamo/npugraph_ex/ package"


def test_cache_root_is_torch_npu_under_opkits_cache_dir(cache):
    assert wheel.cache_root() == cache / "torch-npu"


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("__version__ = '2.13.0+cpu'\n", "2.13.0"),
        ('__version__ = "2.14.1"\n', "2.14.1"),
        ("__version__='2.13.0'", "2.13.0"),
        ("git_version = 'abc'\n# __version__ = '9'\n    __version__ = '8'\n__version__ = '2.13.0'\n__version__ = '7'\n", "2.13.0"),
        ("__version__ = '2.13.0=post1'\n", "2.13.0=post1"),
        ("__version__ = 'X2.13.0X'\n", "X2.13.0X"),  # only quotes are stripped
        ("__version__ = '2.13.0+cpu+x'\n", "2.13.0"),  # everything from the first '+' 
        ("VERSION = '2.13.0'\n", "unknown"),
    ],
)
def test_version_of_tree_reads_the_first_version_assignment(tmp_path, text, version):
    (tmp_path / "torch_npu").mkdir()
    (tmp_path / "torch_npu" / "version.py").write_text(text)
    assert wheel._version_of_tree(tmp_path) == version


def test_version_of_tree_reads_a_file_that_is_not_utf8(tmp_path):
    (tmp_path / "torch_npu").mkdir()
    (tmp_path / "torch_npu" / "version.py").write_bytes(b"# \xff\xfe latin-1\n__version__ = '2.14.0'\n")
    assert wheel._version_of_tree(tmp_path) == "2.14.0"


def test_version_of_tree_is_unknown_without_a_version_file(tmp_path):
    assert wheel._version_of_tree(tmp_path) == "unknown"
    (tmp_path / "torch_npu" / "version.py").mkdir(parents=True)  # not a file
    assert wheel._version_of_tree(tmp_path) == "unknown"


# --- unpacking --------------------------------------------------------------------------------------------------


def test_unpack_keeps_only_npugraph_ex_and_the_version_file(tmp_path):
    whl = make_zip(tmp_path / "torch_npu-2.13.0-py3-none-any.whl", npugraph_ex_members())
    dest = tmp_path / "a" / "b" / "2.13.0"  # parents created
    wheel._unpack(whl, dest)
    assert files_under(dest) == KEPT
    assert (dest / VERSION_PY).read_text() == "__version__ = '2.13.0+cpu'\n"
    assert sorted(p.name for p in dest.parent.iterdir()) == ["2.13.0", "2.13.0.stamp.json"]  # no temporary sibling left


def test_unpack_skips_members_that_climb_out_with_dotdot(tmp_path):
    members = npugraph_ex_members()
    members["torch_npu/dynamo/npugraph_ex/../../../evil.py"] = "escaped"
    members["torch_npu/version.py/../../evil2.py"] = "escaped"
    whl = make_zip(tmp_path / "torch_npu-2.13.0-py3-none-any.whl", members)
    wheel._unpack(whl, tmp_path / "out" / "dest")
    assert files_under(tmp_path / "out") == ["dest.stamp.json", *(f"dest/{k}" for k in KEPT)]


def test_unpack_replaces_an_existing_tree_whole(tmp_path):
    dest = tmp_path / "cache" / "2.13.0"
    (dest / "torch_npu" / "dynamo" / "npugraph_ex").mkdir(parents=True)
    (dest / "torch_npu" / "dynamo" / "npugraph_ex" / "stale.py").write_text("from an earlier wheel")
    wheel._unpack(make_zip(tmp_path / "torch_npu-2.13.0-py3-none-any.whl", npugraph_ex_members()), dest)
    assert files_under(dest) == KEPT
    assert sorted(p.name for p in dest.parent.iterdir()) == ["2.13.0", "2.13.0.stamp.json"]


def test_unpack_builds_the_tree_beside_its_destination(tmp_path, monkeypatch):
    # The temporary tree is a sibling of the destination (one file system, so os.replace is atomic), not in TMPDIR.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-tmpdir"))
    dest = tmp_path / "cache" / "2.13.0"
    (tmp_path / "cache").mkdir()  # an existing parent is fine
    wheel._unpack(make_zip(tmp_path / "torch_npu-2.13.0-py3-none-any.whl", npugraph_ex_members()), dest)
    assert files_under(dest) == KEPT


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"torch_npu/dynamo/torchair/__init__.py": "", VERSION_PY: "__version__ = '2.6.0'\n"},
         "old.whl has torchair but no npugraph_ex package (mode='reduce-overhead'): opkit emulates npugraph_ex of torch-npu 2.13 and 2.14"),
        ({"torch_npu/__init__.py": "", "torch_npu/dynamo/torchairx.py": "", VERSION_PY: "__version__ = '2.13.0'\n"},
         "old.whl holds no torch_npu/dynamo/npugraph_ex/ package"),
        ({"torch_npu/dynamo/npugraph_ex": ""}, "old.whl holds no torch_npu/dynamo/npugraph_ex/ package"),  # a file, not the package
    ],
)
def test_unpack_refuses_a_wheel_without_npugraph_ex_and_leaves_the_old_tree(tmp_path, members, message):
    whl = make_zip(tmp_path / "wheels" / "old.whl", members)
    dest = tmp_path / "cache" / "2.13.0"
    (dest / "torch_npu").mkdir(parents=True)
    (dest / "torch_npu" / "old.py").write_text("kept")
    with pytest.raises(WheelUnavailable) as err:
        wheel._unpack(whl, dest)
    assert str(err.value) == message
    assert files_under(tmp_path / "cache") == ["2.13.0/torch_npu/old.py"]  # untouched, no temporary left


def test_unpack_of_a_file_that_is_not_a_zip_raises_and_leaves_nothing(tmp_path):
    bad = tmp_path / "bad.whl"
    bad.write_text("not a zip")
    with pytest.raises(zipfile.BadZipFile):
        wheel._unpack(bad, tmp_path / "cache" / "x")
    assert list((tmp_path / "cache").iterdir()) == []


def test_locked_holds_an_exclusive_lock_until_the_block_ends(tmp_path):
    dest = tmp_path / "a" / "b" / "2.13.0"
    lock = tmp_path / "a" / "b" / "2.13.0.lock"
    with wheel._locked(dest):
        assert lock.is_file()
        with open(lock) as other:  # another open file: flock locks conflict between them
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
    with open(lock) as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with wheel._locked(dest):  # an existing lock file is reused
        pass
    assert lock.read_text() == ""


# --- a wheel file or a tree given by path --------------------------------------------------------------------------


def test_a_wheel_file_is_unpacked_into_the_cache_under_its_version_and_hash(cache, tmp_path):
    whl = make_zip(tmp_path / "torch_npu-2.13.0+cpu-cp311-cp311-linux_x86_64.whl", npugraph_ex_members("2.13.0+cpu"))
    got = wheel._from_path(str(whl))
    assert got == Wheel("2.13.0", cache / "torch-npu" / keyed(whl), str(whl), pinned=False)
    assert got.dynamo_dir == cache / "torch-npu" / keyed(whl) / "torch_npu" / "dynamo"
    assert files_under(got.root) == KEPT
    assert (cache / "torch-npu" / f"{keyed(whl)}.lock").is_file()


def test_a_wheel_file_already_unpacked_is_read_from_the_cache(cache, tmp_path):
    whl = make_zip(tmp_path / "torch_npu-2.14.0-py3-none-any.whl", npugraph_ex_members("2.14.0"))
    first = wheel._from_path(str(whl))
    init = first.root / NPUGRAPH_EX_INIT
    inode = init.stat().st_ino
    assert wheel._from_path(str(whl)) == first
    assert init.stat().st_ino == inode  # not unpacked again


def test_a_wheel_file_version_ends_at_the_first_plus(cache, tmp_path):
    whl = make_zip(tmp_path / "torch_npu-2.14.0+cpu.x-py3-none-any.whl", npugraph_ex_members("2.14.0+cpu.x"))
    assert wheel._from_path(str(whl)).version == "2.14.0"


@pytest.mark.parametrize("name", ["torch_npu.whl", "w.whl", "torch-2.13.0-py3-none-any.whl", "torch_npu-2.13.0.whl"])
def test_a_wheel_file_not_named_as_a_torch_npu_wheel_is_refused(cache, tmp_path, name):
    whl = make_zip(tmp_path / name, npugraph_ex_members())
    with pytest.raises(WheelUnavailable) as err:
        wheel._from_path(str(whl))
    assert str(err.value) == f"{name} is not a torch-npu wheel file name (torch_npu-VERSION-PYTHON-ABI-PLATFORM.whl)"
    assert not any(p.suffix != ".lock" and p.name != "CACHEDIR.TAG" for p in (cache / "torch-npu").iterdir())


def test_a_wheel_path_with_a_tilde_is_expanded(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    whl = make_zip(tmp_path / "home" / "torch_npu-2.13.0-py3-none-any.whl", npugraph_ex_members())
    assert wheel._from_path("~/torch_npu-2.13.0-py3-none-any.whl").source == str(whl)


def test_a_wheel_file_that_is_not_a_zip_is_refused(cache, tmp_path):
    bad = tmp_path / "torch_npu-2.13.0-py3-none-any.whl"
    bad.write_text("<html>proxy error</html>")
    with pytest.raises(WheelUnavailable) as err:
        wheel._from_path(str(bad))
    assert str(err.value) == f"{bad} is not a wheel (not a zip file)"
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_a_torchair_only_wheel_file_is_refused_by_name(cache, tmp_path):
    whl = make_zip(tmp_path / "torch_npu-2.6.0-cp311-cp311-linux_x86_64.whl", {"torch_npu/dynamo/torchair/__init__.py": ""})
    with pytest.raises(WheelUnavailable) as err:
        wheel._from_path(str(whl))
    assert str(err.value) == (
        "torch_npu-2.6.0-cp311-cp311-linux_x86_64.whl has torchair but no npugraph_ex package (mode='reduce-overhead'): "
        "opkit emulates npugraph_ex of torch-npu 2.13 and 2.14"
    )


def unpacked_tree(root: Path, version_py: str | None = "__version__ = '2.14.0'\n") -> Path:
    (root / "torch_npu" / "dynamo" / "npugraph_ex").mkdir(parents=True)
    (root / "torch_npu" / "dynamo" / "npugraph_ex" / "__init__.py").write_text("")
    if version_py is not None:
        (root / "torch_npu" / "version.py").write_text(version_py)
    return root


def test_an_unpacked_tree_is_used_in_place(cache, tmp_path):
    tree = unpacked_tree(tmp_path / "tree.whl")  # a folder, whatever its name
    assert wheel._from_path(str(tree)) == Wheel("2.14.0", tree, str(tree), pinned=False)
    assert not cache.exists()


def test_a_tree_without_npugraph_ex_is_refused_by_its_path(cache, tmp_path):
    (tmp_path / "old" / "torch_npu" / "dynamo" / "torchair").mkdir(parents=True)
    with pytest.raises(WheelUnavailable) as err:
        wheel._from_path(str(tmp_path / "old"))
    assert str(err.value).startswith(f"{tmp_path / 'old'} has torchair but no npugraph_ex package")
    with pytest.raises(WheelUnavailable) as err:
        wheel._from_path(str(tmp_path))
    assert str(err.value) == f"{tmp_path} holds no torch_npu/dynamo/npugraph_ex/ package"


@pytest.mark.parametrize("name", ["nowhere.whl", "torch_npu-2.13.0-py3-none-any.zip"])
def test_a_path_that_is_no_wheel_file_or_folder_is_refused(cache, tmp_path, name):
    make_zip(tmp_path / "torch_npu-2.13.0-py3-none-any.zip", npugraph_ex_members())
    with pytest.raises(WheelUnavailable) as err:
        wheel._from_path(str(tmp_path / name))
    assert str(err.value) == f"OPKIT_TORCH_NPU={tmp_path / name}: no such wheel file or directory"


# --- pip download, offline ----------------------------------------------------------------------------------------


def test_download_failure_names_pips_last_error_and_the_way_out(cache, tmp_path):
    with pytest.raises(WheelUnavailable) as err:
        wheel._download("2.13.0", tmp_path / "dest")
    assert str(err.value) == (
        "pip download --no-deps torch-npu==2.13.0 failed (ERROR: No matching distribution found for torch-npu==2.13.0); "
        "set OPKIT_TORCH_NPU to a torch-npu wheel or an unpacked one"
    )
    assert err.value.__cause__ is None
    assert not (tmp_path / "dest").exists()


def test_download_unpacks_the_wheel_pip_fetched(cache, tmp_path, monkeypatch):
    whl = make_zip(tmp_path / "links" / "torch_npu-2.13.0-py3-none-any.whl", npugraph_ex_members())
    make_zip(tmp_path / "links" / "torch_npu-2.14.0-py3-none-any.whl", npugraph_ex_members("2.14.0"))
    pin(monkeypatch, whl)
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    dest = wheel._download("2.13.0", tmp_path / "dest")
    assert dest == tmp_path / "dest" / keyed(whl)
    assert files_under(dest) == KEPT
    assert (dest / VERSION_PY).read_text() == "__version__ = '2.13.0+cpu'\n"


def test_download_refuses_a_wheel_opkit_does_not_pin(cache, tmp_path, monkeypatch):
    whl = make_zip(tmp_path / "links" / "torch_npu-2.13.0-py3-none-any.whl", npugraph_ex_members())
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    with pytest.raises(WheelUnavailable) as err:
        wheel._download("2.13.0", tmp_path / "dest")
    assert str(err.value) == (
        f"pip downloaded {whl.name} (sha256 {wheel.wheel_sha256(whl)}), which opkit has no pinned hash for: it is not used; "
        "to use a wheel you trust, set OPKIT_TORCH_NPU to it"
    )
    assert not (tmp_path / "dest").exists()


def test_download_refuses_a_wheel_whose_hash_differs_from_its_pin(cache, tmp_path, monkeypatch):
    whl = make_zip(tmp_path / "links" / "torch_npu-2.13.0-py3-none-any.whl", npugraph_ex_members())
    monkeypatch.setitem(wheel.PINNED_SHA256, "test", {whl.name: "0" * 64})
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    with pytest.raises(WheelUnavailable, match=f"^{whl.name} has sha256 [0-9a-f]{{64}}, not the 0{{64}} opkit pins for it"):
        wheel._download("2.13.0", tmp_path / "dest")


def test_download_without_a_torch_npu_wheel_file_says_none_was_downloaded(cache, tmp_path, monkeypatch):
    # pip matches torch-npu by its normalised name and keeps the file's own: this one the glob does not find
    make_zip(tmp_path / "links" / "Torch_NPU-2.13.0-py3-none-any.whl", npugraph_ex_members())
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    with pytest.raises(WheelUnavailable) as err:
        wheel._download("2.13.0", tmp_path / "dest")
    assert str(err.value) == (
        "pip download --no-deps torch-npu==2.13.0 failed (no wheel downloaded); set OPKIT_TORCH_NPU to a torch-npu wheel or an unpacked one"
    )


def test_download_that_runs_over_its_time_is_refused(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(wheel, "_DOWNLOAD_TIMEOUT_S", 0.01)  # pip cannot even start in that time
    with pytest.raises(WheelUnavailable) as err:
        wheel._download("2.13.0", tmp_path / "dest")
    assert str(err.value) == "pip download torch-npu==2.13.0 took over 0.01 s"
    assert err.value.__cause__ is None and err.value.__suppress_context__


# --- obtain -------------------------------------------------------------------------------------------------------


def test_obtain_takes_the_source_argument_then_the_environment(cache, tmp_path, monkeypatch):
    tree = unpacked_tree(tmp_path / "tree")
    assert wheel.obtain(str(tree)) == Wheel("2.14.0", tree, str(tree), pinned=False)
    monkeypatch.setenv("OPKIT_TORCH_NPU", str(tree))
    assert wheel.obtain() == Wheel("2.14.0", tree, str(tree), pinned=False)
    assert wheel.obtain("") == Wheel("2.14.0", tree, str(tree), pinned=False)


def test_obtain_refuses_an_unsupported_wheel_but_not_an_unknown_version(cache, tmp_path):
    whl = make_zip(tmp_path / "torch_npu-2.9.0-py3-none-any.whl", npugraph_ex_members("2.9.0"))
    with pytest.raises(WheelUnavailable, match=r"^torch-npu 2\.9\.0 is not emulated: "):
        wheel.obtain(str(whl))
    tree = unpacked_tree(tmp_path / "tree", version_py=None)
    assert wheel.obtain(str(tree)) == Wheel("unknown", tree, str(tree), pinned=False)


def test_obtain_downloads_torchs_version_once_then_reads_the_cache(cache, tmp_path, monkeypatch):
    whl = make_zip(tmp_path / "links" / "torch_npu-2.13.0-py3-none-any.whl", npugraph_ex_members())
    monkeypatch.setitem(wheel.PINNED_SHA256, "2.13.0", {whl.name: wheel.wheel_sha256(whl)})
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    dest = cache / "torch-npu" / keyed(whl)
    assert wheel.obtain(torch_version="2.13.0+cpu") == Wheel("2.13.0", dest, "pip download")
    assert files_under(dest) == KEPT
    assert (cache / "torch-npu" / "2.13.0.lock").is_file()
    wheel.obtain.cache_clear()
    monkeypatch.delenv("PIP_FIND_LINKS")  # no index at all now: only the cache can answer
    assert wheel.obtain(torch_version="2.13.0+cpu") == Wheel("2.13.0", dest, "cache")


def test_obtain_refuses_an_unsupported_torch_before_downloading(cache, tmp_path, monkeypatch):
    make_zip(tmp_path / "links" / "torch_npu-2.9.0-py3-none-any.whl", npugraph_ex_members("2.9.0"))
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    with pytest.raises(WheelUnavailable, match=r"^torch-npu 2\.9\.0 is not emulated: "):
        wheel.obtain(torch_version="2.9.0")
    assert not cache.exists()


def test_obtain_without_a_wheel_anywhere_says_so(cache):
    with pytest.raises(WheelUnavailable, match=r"^pip download --no-deps torch-npu==2\.14\.0 failed \(ERROR: No matching"):
        wheel.obtain(torch_version="2.14.0")


# --- checks: the wheel before unpacking, the tree before each use ------------------------------------------------

WHL = "torch_npu-2.13.0-py3-none-any.whl"


def test_a_member_that_differs_from_its_record_hash_is_refused_and_nothing_unpacked(cache, tmp_path):
    members = npugraph_ex_members()
    record = "".join(f"{n},{wheel._record_hash(t.encode())},{len(t.encode())}\n" for n, t in members.items() if not n.endswith("RECORD"))
    members["torch_npu-2.13.0.dist-info/RECORD"] = record
    members["torch_npu/dynamo/npugraph_ex/inference.py"] = "import os; os.mkdir('ran')\n"  # altered after RECORD was written
    whl = make_zip(tmp_path / WHL, members)
    with pytest.raises(WheelUnavailable) as err:
        wheel._from_path(str(whl))
    assert str(err.value) == f"{WHL}: torch_npu/dynamo/npugraph_ex/inference.py does not match its RECORD hash (the wheel is damaged or was altered)"
    assert sorted(p.name for p in (cache / "torch-npu").iterdir()) == sorted(["CACHEDIR.TAG", f"{keyed(whl)}.lock"])


def test_a_kept_member_missing_from_record_is_refused(cache, tmp_path):
    members = npugraph_ex_members()
    members["torch_npu-2.13.0.dist-info/RECORD"] = f"{VERSION_PY},{wheel._record_hash(members[VERSION_PY].encode())},\n"
    with pytest.raises(WheelUnavailable, match=r"npugraph_ex/__init__.py is not listed in its RECORD \(the wheel was altered\)$"):
        wheel._from_path(str(make_zip(tmp_path / WHL, members)))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"torch_npu-2.13.0.dist-info/METADATA": "Name: torch\nVersion: 2.13.0\n"}, "is not the wheel its name says: its METADATA gives Name 'torch', Version '2.13.0'"),
        ({"torch_npu-2.13.0.dist-info/METADATA": "Name: torch-npu\nVersion: 2.14.0\n"}, "is not the wheel its name says: its METADATA gives Name 'torch-npu', Version '2.14.0'"),
        ({VERSION_PY: "__version__ = '2.14.0'\n"}, "is not the wheel its name says: its torch_npu/version.py gives 2.14.0"),
        ({"torch_npu-2.13.0.dist-info/METADATA": None}, "is damaged or not the wheel its name says: it has no torch_npu-2.13.0.dist-info/METADATA"),
        ({"torch_npu-2.13.0.dist-info/RECORD": None}, "is damaged or not the wheel its name says: it has no torch_npu-2.13.0.dist-info/RECORD"),
    ],
)
def test_a_wheel_whose_name_metadata_and_version_disagree_is_refused(cache, tmp_path, change, message):
    members = npugraph_ex_members()
    for name, text in change.items():
        if text is None:
            del members[name]
        else:
            members[name] = text
    with pytest.raises(WheelUnavailable) as err:
        wheel._from_path(str(make_zip(tmp_path / WHL, members)))
    assert str(err.value) == f"{WHL} {message}"


def test_the_unpacked_tree_holds_compiled_bytecode_and_a_stamp_of_every_file(cache, tmp_path):
    got = wheel._from_path(str(make_zip(tmp_path / WHL, npugraph_ex_members())))
    pycs = sorted(str(p.relative_to(got.root)) for p in got.root.rglob("*.pyc"))
    assert len(pycs) == 3 and all("__pycache__" in p for p in pycs)
    stamp = cachedir.load_json(got.root.parent / f"{got.root.name}.stamp.json")
    assert sorted(stamp["files"]) == sorted([*KEPT, *pycs])
    assert wheel.tree_is_intact(got.root)


def _tamper(root: Path, how: str) -> None:
    package = root / "torch_npu" / "dynamo" / "npugraph_ex"
    if how == "edited":
        with open(package / "inference.py", "a") as f:
            f.write("import os; os.mkdir('ran')\n")
    elif how == "same-size-and-mtime":
        info = (package / "inference.py").stat()
        (package / "inference.py").write_text("MODE = 'planted'\n"[: info.st_size].ljust(info.st_size))
        os.utime(package / "inference.py", ns=(info.st_atime_ns, info.st_mtime_ns))
    elif how == "file-added":
        (package / "planted.py").write_text("import os; os.mkdir('ran')\n")
    elif how == "bytecode-planted":
        (package / "__pycache__" / "planted.cpython-311.pyc").write_bytes(b"\0" * 16)
    elif how == "file-removed":
        (package / "inference.py").unlink()
    elif how == "file-replaced-by-symlink":
        (package / "inference.py").unlink()
        (package / "inference.py").symlink_to(root.parent / "elsewhere.py")
    elif how == "stamp-lost":
        (root.parent / f"{root.name}.stamp.json").unlink()
    elif how == "stamp-corrupt":
        (root.parent / f"{root.name}.stamp.json").write_text("{")
    elif how == "unpacked-keeping-less":  # by an earlier opkit that kept fewer parts of the wheel (no torch_npu/include/)
        path = root.parent / f"{root.name}.stamp.json"
        stamp = cachedir.load_json(path)
        stamp["keep"] = stamp["keep"][:-1]
        cachedir.store_json(path, stamp)


TAMPERINGS = ["edited", "same-size-and-mtime", "file-added", "bytecode-planted", "file-removed", "file-replaced-by-symlink", "stamp-lost", "stamp-corrupt", "unpacked-keeping-less"]


@pytest.mark.parametrize("how", TAMPERINGS)
def test_a_damaged_or_tampered_tree_is_unpacked_again_before_use(cache, tmp_path, how):
    whl = make_zip(tmp_path / WHL, npugraph_ex_members())
    first = wheel._from_path(str(whl))
    pristine = {rel: (first.root / rel).read_bytes() for rel in files_under(first.root)}
    _tamper(first.root, how)
    assert not wheel.tree_is_intact(first.root)
    again = wheel._from_path(str(whl))
    assert again == first and wheel.tree_is_intact(again.root)
    assert {rel: (again.root / rel).read_bytes() for rel in files_under(again.root)} == pristine


@pytest.mark.parametrize("how", TAMPERINGS)
def test_a_tampered_tree_from_pip_download_is_downloaded_again(cache, tmp_path, monkeypatch, how):
    whl = make_zip(tmp_path / "links" / WHL, npugraph_ex_members())
    monkeypatch.setitem(wheel.PINNED_SHA256, "2.13.0", {whl.name: wheel.wheel_sha256(whl)})
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    first = wheel.obtain(torch_version="2.13.0")
    _tamper(first.root, how)
    wheel.obtain.cache_clear()
    assert wheel.obtain(torch_version="2.13.0") == Wheel("2.13.0", first.root, "pip download")
    assert wheel.tree_is_intact(first.root) and files_under(first.root) == KEPT


def test_a_touched_but_unchanged_file_is_hashed_and_accepted(cache, tmp_path):
    got = wheel._from_path(str(make_zip(tmp_path / WHL, npugraph_ex_members())))
    os.utime(got.root / VERSION_PY, ns=(1, 1))
    assert wheel.tree_is_intact(got.root)


def test_a_refused_cache_directory_unpacks_into_a_private_directory(cache, tmp_path, capsys):
    cache.mkdir(mode=0o700)
    cache.chmod(0o777)
    got = wheel._from_path(str(make_zip(tmp_path / WHL, npugraph_ex_members())))
    assert not str(got.root).startswith(str(cache)) and got.root.parent == wheel._private_root()
    assert files_under(got.root) == KEPT and wheel.tree_is_intact(got.root)
    assert list(cache.iterdir()) == []
    assert "the cache is off for this run" in capsys.readouterr().err


# --- Hardening III: pinned hashes, a tree keyed by content, bounded unpacking --------------------------------------


def test_a_replacement_wheel_of_the_same_name_and_size_gets_its_own_tree(cache, tmp_path):
    members = npugraph_ex_members()
    whl = make_zip(tmp_path / WHL, members)
    first = wheel._from_path(str(whl))
    size = whl.stat().st_size
    members["torch_npu/dynamo/npugraph_ex/inference.py"] = "MODE = 'planted'\n"  # the same length as 'capture'
    members["torch_npu-2.13.0.dist-info/RECORD"] = ""
    replacement = make_zip(tmp_path / "other" / WHL, members)
    os.replace(replacement, whl)
    assert whl.stat().st_size == size
    second = wheel._from_path(str(whl))
    assert second.root != first.root
    assert (second.root / "torch_npu/dynamo/npugraph_ex/inference.py").read_text() == "MODE = 'planted'\n"


def test_a_wheel_under_a_pinned_name_with_another_hash_is_refused(cache, tmp_path, monkeypatch):
    whl = make_zip(tmp_path / WHL, npugraph_ex_members())
    monkeypatch.setitem(wheel.PINNED_SHA256, "2.13.0", {WHL: "f" * 64})
    with pytest.raises(WheelUnavailable, match=f"^{WHL} has sha256 [0-9a-f]{{64}}, not the f{{64}} opkit pins for it"):
        wheel._from_path(str(whl))
    assert not any((cache / "torch-npu").glob("2.13.0-*[!k]"))  # nothing unpacked: only the lock file


def test_a_pinned_wheel_is_marked_pinned_and_an_unpinned_one_as_the_users_choice(cache, tmp_path, monkeypatch):
    whl = make_zip(tmp_path / WHL, npugraph_ex_members())
    unpinned = wheel._from_path(str(whl))
    assert not unpinned.pinned and unpinned.described == f"{whl}; not a wheel opkit pins: your own choice, unchecked"
    pin(monkeypatch, whl)
    assert wheel._from_path(str(whl)).pinned


def test_the_real_wheel_name_is_pinned_with_a_sha256():
    pins = wheel.PINNED_SHA256["2.13.0"]
    assert all(len(digest) == 64 and int(digest, 16) >= 0 for digest in pins.values())
    assert "torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl" in pins


def test_a_wheel_that_inflates_past_the_bound_is_refused_before_writing(cache, tmp_path):
    members = npugraph_ex_members()
    whl = tmp_path / WHL
    bomb = "torch_npu/include/zeros.h"
    with zipfile.ZipFile(whl, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
        with archive.open(bomb, "w", force_zip64=True) as member:
            chunk = b"\0" * (1 << 20)
            for _ in range(wheel.MAX_KEPT_BYTES // len(chunk) + 1):
                member.write(chunk)
    assert whl.stat().st_size < 2 * 1024 * 1024
    with pytest.raises(WheelUnavailable, match=rf"^{WHL}: the members opkit keeps inflate to \d+ bytes, more than {wheel.MAX_KEPT_BYTES}$"):
        wheel._from_path(str(whl))
    assert not any(p.is_dir() for p in (cache / "torch-npu").iterdir())


def test_a_wheel_with_too_many_members_is_refused(cache, tmp_path, monkeypatch):
    members = npugraph_ex_members()
    members.update({f"torch_npu/x{i}.py": "" for i in range(50)})
    whl = make_zip(tmp_path / WHL, members)
    monkeypatch.setattr(wheel, "MAX_WHEEL_MEMBERS", 40)
    with pytest.raises(WheelUnavailable, match=rf"^{WHL} has 58 members, more than the 40 a torch-npu wheel may have$"):
        wheel._from_path(str(whl))


def test_doctor_says_whether_the_opkit_torch_npu_wheel_is_pinned(cache, tmp_path, monkeypatch):
    from opkit.verify import doctor

    whl = make_zip(tmp_path / WHL, npugraph_ex_members())
    monkeypatch.setenv("OPKIT_TORCH_NPU", str(whl))
    (finding,) = doctor._torch_npu_source()
    assert finding.status == "warn" and "is not a wheel opkit pins: your own choice" in finding.detail
    pin(monkeypatch, whl)
    (finding,) = doctor._torch_npu_source()
    assert finding.status == "ok" and "matches opkit's pin" in finding.detail
    monkeypatch.setitem(wheel.PINNED_SHA256, "test", {whl.name: "0" * 64})
    (finding,) = doctor._torch_npu_source()
    assert finding.status == "fail" and "not the 0000" in finding.detail
