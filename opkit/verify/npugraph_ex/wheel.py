"""The torch-npu wheel whose ``npugraph_ex`` package opkit runs off the NPU: found, downloaded, unpacked.

Never installed, never imported as ``torch_npu``: only its pure-Python ``torch_npu/dynamo/npugraph_ex/``
is unpacked, into the opkit cache directory (``OPKIT_CACHE_DIR``, else ``~/.cache/opkit``), under
``torch-npu/<version>/``. Where it comes from, first found wins:

1. ``OPKIT_TORCH_NPU`` (or the ``source`` argument): a ``.whl`` file, or a directory holding an unpacked
   wheel (``torch_npu/dynamo/npugraph_ex/``), for machines without a package index;
2. the cache;
3. ``pip download --no-deps torch-npu==<torch version>`` from the package index pip is configured with
   (torch-npu versions match torch's one to one).

Layouts: torch-npu 2.13 and 2.14 ship the ``npugraph_ex`` package, which opkit emulates. Older wheels
(2.6-2.9 were read) have only ``torchair`` with ``mode="reduce-overhead"``; they are refused by name.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "OPKIT_TORCH_NPU"
SUPPORTED = ("2.13", "2.14")  # torch-npu major.minor whose npugraph_ex package opkit emulates
_PACKAGE = "torch_npu/dynamo/npugraph_ex/"
_INCLUDE = "torch_npu/include/"  # torch_npu's C++ headers: `opkit check` compiles extension launchers against them
_KEEP = (_PACKAGE, "torch_npu/version.py", _INCLUDE)
_DOWNLOAD_TIMEOUT_S = 300


class WheelUnavailable(Exception):
    """No usable torch-npu wheel: the message says why, in one sentence."""


@dataclass(frozen=True)
class Wheel:
    version: str  # torch-npu version, e.g. "2.13.0"
    root: Path  # the unpacked tree: root / "torch_npu" / "dynamo" / "npugraph_ex"
    source: str  # where it came from: a path, "cache" or "pip download"

    @property
    def dynamo_dir(self) -> Path:
        """What goes on sys.path: npugraph_ex imports itself as the top-level ``npugraph_ex``."""
        return self.root / "torch_npu" / "dynamo"


def torch_npu_version(torch_version: str | None = None) -> str:
    """The torch-npu release matching a torch version: ``2.13.0+cpu`` -> ``2.13.0``."""
    if torch_version is None:
        from importlib import metadata

        torch_version = metadata.version("torch")
    return torch_version.split("+", 1)[0]


def check_supported(version: str) -> None:
    if ".".join(version.split(".")[:2]) not in SUPPORTED:
        raise WheelUnavailable(
            f"torch-npu {version} is not emulated: opkit runs the npugraph_ex package of torch-npu "
            f"{' and '.join(SUPPORTED)} (older releases have only torchair with mode='reduce-overhead')"
        )


def _layout_error(root: Path, where: str) -> WheelUnavailable:
    if (root / "torch_npu" / "dynamo" / "torchair").is_dir():
        return WheelUnavailable(
            f"{where} has torchair but no npugraph_ex package (a torch-npu older than 2.13, which uses "
            "mode='reduce-overhead'): opkit emulates npugraph_ex of torch-npu 2.13 and 2.14"
        )
    return WheelUnavailable(f"{where} holds no torch_npu/dynamo/npugraph_ex/ package")


def cache_root() -> Path:
    from opkit.lint.cache import cache_dir

    return cache_dir() / "torch-npu"


def _version_of_tree(root: Path) -> str:
    version_file = root / "torch_npu" / "version.py"
    if version_file.is_file():
        for line in version_file.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("__version__"):
                return line.split("=", 1)[1].strip().strip("'\"").split("+", 1)[0]
    return "unknown"


def _unpack(wheel_file: Path, dest: Path) -> None:
    """Extract the kept members into ``dest`` atomically (a temporary sibling renamed into place)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        with zipfile.ZipFile(wheel_file) as archive:
            for member in archive.namelist():
                if member.startswith(_KEEP) and ".." not in member.split("/"):
                    archive.extract(member, tmp)
        if not (tmp / _PACKAGE).is_dir():
            raise _layout_error_from_zip(wheel_file)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _layout_error_from_zip(wheel_file: Path) -> WheelUnavailable:
    with zipfile.ZipFile(wheel_file) as archive:
        names = archive.namelist()
    if any(n.startswith("torch_npu/dynamo/torchair/") for n in names):
        return WheelUnavailable(
            f"{wheel_file.name} has torchair but no npugraph_ex package (mode='reduce-overhead'): "
            "opkit emulates npugraph_ex of torch-npu 2.13 and 2.14"
        )
    return WheelUnavailable(f"{wheel_file.name} holds no torch_npu/dynamo/npugraph_ex/ package")


def _lock(dest: Path):
    """One process at a time downloads or unpacks into ``dest`` (parallel test workers share the cache). The lock of
    ``<version>`` is ``<version>.lock`` beside it (``with_suffix`` made both 2.13.0 and 2.13.1 lock ``2.13.lock``)."""
    import fcntl

    path = dest.parent / f"{dest.name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# Wrapped by a call, not a decorator, here and for obtain: mutmut 3 never mutates a decorated function.
_locked = contextlib.contextmanager(_lock)


def _from_path(source: str) -> Wheel:
    path = Path(source).expanduser()
    if path.is_file() and path.suffix == ".whl":
        try:
            version = path.name.split("-")[1].split("+", 1)[0]
        except IndexError:
            version = "unknown"
        dest = cache_root() / f"{version}-{path.stat().st_size}"
        with _locked(dest):
            if not (dest / _PACKAGE).is_dir():
                try:
                    _unpack(path, dest)
                except zipfile.BadZipFile:
                    raise WheelUnavailable(f"{path} is not a wheel (not a zip file)") from None
        return Wheel(version, dest, str(path))
    if path.is_dir():
        if not (path / _PACKAGE).is_dir():
            raise _layout_error(path, str(path))
        return Wheel(_version_of_tree(path), path, str(path))
    raise WheelUnavailable(f"{ENV_VAR}={source}: no such wheel file or directory")


def _download(version: str, dest: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="opkit-torch-npu-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", f"torch-npu=={version}", "-d", tmp]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=_DOWNLOAD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise WheelUnavailable(f"pip download torch-npu=={version} took over {_DOWNLOAD_TIMEOUT_S} s") from None
        wheels = sorted(Path(tmp).glob("torch_npu-*.whl"))
        if done.returncode != 0 or not wheels:
            last = next((line for line in reversed(done.stderr.splitlines()) if line.strip()), "no wheel downloaded")
            raise WheelUnavailable(
                f"pip download --no-deps torch-npu=={version} failed ({last.strip()}); "
                f"set {ENV_VAR} to a torch-npu wheel or an unpacked one"
            )
        _unpack(wheels[0], dest)


def _obtain(source: str | None = None, torch_version: str | None = None) -> Wheel:
    """The unpacked torch-npu tree to emulate; raises WheelUnavailable with the reason."""
    source = source or os.environ.get(ENV_VAR) or None
    if source:
        wheel = _from_path(source)
        if wheel.version != "unknown":
            check_supported(wheel.version)
        return wheel
    version = torch_npu_version(torch_version)
    check_supported(version)
    dest = cache_root() / version
    with _locked(dest):
        if (dest / _PACKAGE).is_dir():
            return Wheel(version, dest, "cache")
        _download(version, dest)
    return Wheel(version, dest, "pip download")


obtain = functools.lru_cache(maxsize=4)(_obtain)  # once per process and source (tests call obtain.cache_clear())


def include_dir(source: str | None = None) -> Path:
    """The wheel's ``torch_npu/include/`` (NPUStream.h, OpCommand.h, acl/), unpacked with its npugraph_ex package.

    A tree an older opkit unpacked without the headers is unpacked again from its wheel file."""
    wheel = obtain(source)
    include = wheel.root / _INCLUDE
    if not include.is_dir() and Path(wheel.source).is_file():
        with _locked(wheel.root):
            if not include.is_dir():
                _unpack(Path(wheel.source), wheel.root)
    if not include.is_dir():
        raise WheelUnavailable(f"the torch-npu tree {wheel.root} ({wheel.source}) has no {_INCLUDE}; remove it and run again")
    return include
