"""The torch-npu wheel whose ``npugraph_ex`` package ``opkit verify`` runs off the NPU, and whose C++ headers
``opkit check`` compiles extension launchers against: found, downloaded, unpacked. It sits below both layers.

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

Checks, since ``verify`` imports this code: before unpacking, the wheel's file name must be
``torch_npu-VERSION-...whl``, its METADATA must say the same name and version, and every kept member
must match its sha256 and size in the wheel's RECORD (a damaged or altered wheel is refused). The
unpacked tree (with the bytecode compiled at unpack, so nothing is written at import) is recorded in
a stamp beside it, ``<tree>.stamp.json``: each file's hash, size, mtime, inode and ctime. Before every
use the tree is compared with it (by stat; a file whose stat changed is hashed again); a missing, extra,
changed or linked file means the tree is damaged, and it is unpacked (or downloaded) again. When the
cache directory is refused (``opkit.cachedir``), the tree goes to a private temporary directory for
the one run. A directory named by ``OPKIT_TORCH_NPU`` is the user's own and used as it is.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import csv
import functools
import hashlib
import io
import os
import py_compile
import re
import shutil
import stat
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from opkit import cachedir
from opkit.subprocess_safety import clean_cwd, python_argv, python_env
from opkit.torch_npu_ops import CACHE_DIR, ENV_VAR, OPS_YAML

SUPPORTED = ("2.13", "2.14")  # torch-npu major.minor whose npugraph_ex package opkit emulates
_PACKAGE = "torch_npu/dynamo/npugraph_ex/"
_INCLUDE = "torch_npu/include/"  # torch_npu's C++ headers: `opkit check` compiles extension launchers against them
_KEEP = (_PACKAGE, "torch_npu/version.py", _INCLUDE, OPS_YAML)  # OPS_YAML: lint's list of torch_npu's own ops
_DOWNLOAD_TIMEOUT_S = 300
# torch_npu-VERSION(-BUILD)-PYTHON-ABI-PLATFORM.whl, the distribution name normalised as wheels spell it
_WHEEL_NAME = re.compile(r"torch_npu-(?P<version>[^-]+)(-[^-]+){3,4}\.whl")
STAMP_FORMAT = 2
# The sha256 of each torch-npu wheel opkit has checked, by version and file name: a wheel pip downloads
# must be listed here; one given by OPKIT_TORCH_NPU under a listed name must have the listed hash, and
# any other is used as the user's own choice (Wheel.pinned False, said in verify's report).
PINNED_SHA256: dict[str, dict[str, str]] = {
    "2.13.0": {
        "torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl": "0deb809cf447d3fce636ccfdc9c9f874950f1fe76f18f4aaab31e2d345f7dac0",
    },
}
# Bounds on unpacking: the real 2.13.0 wheel has 2,799 members and keeps 970 of them, 4.5 MB.
MAX_WHEEL_MEMBERS = 100_000
MAX_KEPT_BYTES = 256 * 1024 * 1024
MAX_METADATA_BYTES = 16 * 1024 * 1024


class WheelUnavailable(Exception):
    """No usable torch-npu wheel: the message says why, in one sentence."""


@dataclass(frozen=True)
class Wheel:
    version: str  # torch-npu version, e.g. "2.13.0"
    root: Path  # the unpacked tree: root / "torch_npu" / "dynamo" / "npugraph_ex"
    source: str  # where it came from: a path, "cache" or "pip download"
    pinned: bool = True  # False: a wheel or tree the user chose that opkit has no pinned hash for

    @property
    def described(self) -> str:
        """Where it came from, and whether opkit vouches for it, for reports."""
        return self.source if self.pinned else f"{self.source}; not a wheel opkit pins: your own choice, unchecked"

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
    """Where unpacked trees are kept: ``torch-npu/`` in opkit's cache directory."""
    return cachedir.location() / CACHE_DIR


@functools.lru_cache(maxsize=1)
def _private_root() -> Path:
    """A directory of this process's own, removed at exit: where trees go when the cache is refused or off."""
    root = Path(tempfile.mkdtemp(prefix="opkit-torch-npu-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _root() -> Path:
    return cachedir.usable(CACHE_DIR) or _private_root()


def _version_of_tree(root: Path) -> str:
    version_file = root / "torch_npu" / "version.py"
    return _version_in(version_file.read_text(encoding="utf-8", errors="replace")) if version_file.is_file() else "unknown"


def _version_in(version_py: str) -> str:
    """The first ``__version__ = '...'`` of a torch_npu/version.py, without its local part."""
    for line in version_py.splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("'\"").split("+", 1)[0]
    return "unknown"


def wheel_sha256(wheel_file: Path) -> str:
    """The sha256 of a wheel file's bytes (what the pinned table lists and what a tree is keyed by)."""
    digest = hashlib.sha256()
    with open(wheel_file, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def pin_of(wheel_name: str, digest: str) -> bool:
    """Whether the wheel is one opkit ships a pin for (True); False when opkit has no pin for its file name.
    A file name opkit pins with another hash is refused: that wheel is not the one released."""
    for pins in PINNED_SHA256.values():
        if wheel_name in pins:
            if pins[wheel_name] != digest:
                raise WheelUnavailable(
                    f"{wheel_name} has sha256 {digest}, not the {pins[wheel_name]} opkit pins for it: "
                    "the wheel was altered or replaced; remove it and download the released one"
                )
            return True
    return False


def _unpack(wheel_file: Path, dest: Path, digest: str | None = None) -> None:
    """Check the wheel, extract the kept members into ``dest`` atomically (a temporary sibling renamed into
    place), compile their bytecode and write the stamp the tree is checked against before each use.

    Bounded: at most ``MAX_WHEEL_MEMBERS`` members in the archive and ``MAX_KEPT_BYTES`` in the kept
    members together (by their declared sizes, which zipfile never reads past), each member read once,
    in chunks, hashed as it is written."""
    digest = digest or wheel_sha256(wheel_file)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        with zipfile.ZipFile(wheel_file) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_WHEEL_MEMBERS:
                raise WheelUnavailable(f"{wheel_file.name} has {len(infos)} members, more than the {MAX_WHEEL_MEMBERS} a torch-npu wheel may have")
            kept = [i for i in infos if i.filename.startswith(_KEEP) and ".." not in i.filename.split("/") and not i.filename.startswith("/")]
            files = [i for i in kept if not i.is_dir()]
            if not any(i.filename.startswith(_PACKAGE) for i in files):
                raise _layout_error_from_zip(wheel_file)
            total = sum(i.file_size for i in files)
            if total > MAX_KEPT_BYTES:
                raise WheelUnavailable(f"{wheel_file.name}: the members opkit keeps inflate to {total} bytes, more than {MAX_KEPT_BYTES}")
            record_digest, listed = _check_wheel(wheel_file, archive)
            for info in files:
                _extract_checked(wheel_file, archive, info, tmp, listed)
        for source in sorted(tmp.rglob("*.py")):
            with contextlib.suppress(py_compile.PyCompileError):  # a module this Python cannot compile is left to import
                py_compile.compile(str(source), doraise=True)
        stamp = _stamp_of(tmp, record_digest, digest)
        _stamp_path(dest).unlink(missing_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
        if not cachedir.store_json(_stamp_path(dest), stamp):
            raise WheelUnavailable(f"cannot write {_stamp_path(dest)} beside the unpacked torch-npu wheel")
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _extract_checked(wheel_file: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, root: Path, listed: dict) -> None:
    """One member written under ``root``, hashed as it is read, compared with its RECORD row."""
    expected = listed.get(info.filename)
    if expected is None:
        raise WheelUnavailable(f"{wheel_file.name}: {info.filename} is not listed in its RECORD (the wheel was altered)")
    target = root / info.filename
    target.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    with archive.open(info) as member, open(target, "xb") as out:
        for chunk in iter(lambda: member.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    got = "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
    if got != expected[0] or (expected[1] is not None and expected[1] != size):
        raise WheelUnavailable(f"{wheel_file.name}: {info.filename} does not match its RECORD hash (the wheel is damaged or was altered)")


def _read_bounded(archive: zipfile.ZipFile, name: str, wheel_file: Path) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > MAX_METADATA_BYTES:
        raise WheelUnavailable(f"{wheel_file.name}: {name} inflates to {info.file_size} bytes, more than {MAX_METADATA_BYTES}")
    return archive.read(info)


def _check_wheel(wheel_file: Path, archive: zipfile.ZipFile) -> tuple[str, dict[str, tuple[str, int | None]]]:
    """Refuse a wheel that is not torch-npu's; the RECORD's hash and its rows (members are checked as extracted)."""
    named = _WHEEL_NAME.fullmatch(wheel_file.name)
    if named is None:
        raise WheelUnavailable(f"{wheel_file.name} is not a torch-npu wheel file name (torch_npu-VERSION-PYTHON-ABI-PLATFORM.whl)")
    version = named["version"]
    dist_info = f"torch_npu-{version}.dist-info/"
    names = set(archive.namelist())
    for needed in ("METADATA", "RECORD"):
        if dist_info + needed not in names:
            raise WheelUnavailable(f"{wheel_file.name} is damaged or not the wheel its name says: it has no {dist_info}{needed}")
    metadata = HeaderParser().parsestr(_read_bounded(archive, dist_info + "METADATA", wheel_file).decode("utf-8", "replace"))
    record = _read_bounded(archive, dist_info + "RECORD", wheel_file)
    name = re.sub(r"[-_.]+", "-", metadata.get("Name", "")).lower()
    if name != "torch-npu" or metadata.get("Version") != version:
        raise WheelUnavailable(f"{wheel_file.name} is not the wheel its name says: its METADATA gives Name {metadata.get('Name')!r}, Version {metadata.get('Version')!r}")
    if "torch_npu/version.py" in names:
        inside = _version_in(_read_bounded(archive, "torch_npu/version.py", wheel_file).decode("utf-8", "replace"))
        if inside != version.split("+", 1)[0]:
            raise WheelUnavailable(f"{wheel_file.name} is not the wheel its name says: its torch_npu/version.py gives {inside}")
    return hashlib.sha256(record).hexdigest(), _record_rows(record)


def _record_rows(record: bytes) -> dict[str, tuple[str, int | None]]:
    """RECORD's path -> (``sha256=...`` hash, size) for the rows with a sha256 hash."""
    rows = {}
    for row in csv.reader(io.StringIO(record.decode("utf-8", "replace"))):
        if len(row) >= 2 and row[1].startswith("sha256="):
            size = row[2] if len(row) > 2 else ""
            rows[row[0]] = (row[1], int(size) if size.isdigit() else None)
    return rows


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _stamp_path(dest: Path) -> Path:
    return dest.parent / f"{dest.name}.stamp.json"


def _tree_files(root: Path) -> dict[str, os.stat_result] | None:
    """Every file under ``root`` (relative path -> lstat); None when anything is a link or not a plain file."""
    found = {}
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode) or not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                return None
            if stat.S_ISREG(info.st_mode):
                found[Path(path).relative_to(root).as_posix()] = info
    return found


def _stamp_of(root: Path, record_digest: str, wheel_digest: str) -> dict:
    files = _tree_files(root) or {}
    return {
        "format": STAMP_FORMAT,
        "wheel_sha256": wheel_digest,
        "keep": list(_KEEP),  # a tree unpacked by an opkit that kept other parts of the wheel is unpacked again
        "record": record_digest,
        "files": {rel: [hashlib.sha256((root / rel).read_bytes()).hexdigest(), *_stat_key(info)] for rel, info in sorted(files.items())},
    }


def _stat_key(info: os.stat_result) -> list[int]:
    """What a file's content cannot change without: its size, mtime, inode and ctime (which no one can set back)."""
    return [info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns]


def tree_is_intact(dest: Path, wheel_digest: str | None = None) -> bool:
    """``dest`` holds exactly the files its stamp lists, each with its recorded content (hashed again only
    where its stat changed: size, mtime, inode or ctime), unpacked from the wheel of ``wheel_digest`` when given."""
    stamp = cachedir.load_json(_stamp_path(dest))
    if not (isinstance(stamp, dict) and stamp.get("format") == STAMP_FORMAT and stamp.get("keep") == list(_KEEP) and isinstance(stamp.get("files"), dict)):
        return False
    if wheel_digest is not None and stamp.get("wheel_sha256") != wheel_digest:
        return False
    try:
        files = _tree_files(dest)
    except OSError:
        return False
    if files is None or set(files) != set(stamp["files"]):
        return False
    for rel, info in files.items():
        recorded = stamp["files"][rel]
        if not (isinstance(recorded, list) and len(recorded) == 5):
            return False
        digest, *key = recorded
        if _stat_key(info) == key:
            continue
        try:
            if hashlib.sha256((dest / rel).read_bytes()).hexdigest() != digest:
                return False
        except OSError:
            return False
    return True


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
        named = _WHEEL_NAME.fullmatch(path.name)
        version = named["version"].split("+", 1)[0] if named else "unknown"
        digest = wheel_sha256(path)
        pinned = pin_of(path.name, digest) if named else False
        dest = _root() / f"{version}-{digest[:24]}"  # keyed by content: a replacement of the same name and size is another tree
        with _locked(dest):
            if not tree_is_intact(dest, digest):
                try:
                    _unpack(path, dest, digest)
                except zipfile.BadZipFile:
                    raise WheelUnavailable(f"{path} is not a wheel (not a zip file)") from None
        return Wheel(version, dest, str(path), pinned)
    if path.is_dir():
        if not (path / _PACKAGE).is_dir():
            raise _layout_error(path, str(path))
        return Wheel(_version_of_tree(path), path, str(path), pinned=False)
    raise WheelUnavailable(f"{ENV_VAR}={source}: no such wheel file or directory")


def _download(version: str, dest_root: Path) -> Path:
    """pip downloads torch-npu ``version``; a wheel opkit pins is unpacked under ``dest_root``, keyed by its hash."""
    with tempfile.TemporaryDirectory(prefix="opkit-torch-npu-") as tmp:
        # pip from opkit's Python, never ./pip/ of the working directory; wheels only: an sdist would run its setup.py
        cmd = python_argv("-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "-q", f"torch-npu=={version}", "-d", tmp)
        try:
            with clean_cwd() as cwd:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=_DOWNLOAD_TIMEOUT_S, cwd=cwd, env=python_env(), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise WheelUnavailable(f"pip download torch-npu=={version} took over {_DOWNLOAD_TIMEOUT_S} s") from None
        wheels = sorted(Path(tmp).glob("torch_npu-*.whl"))
        if done.returncode != 0 or not wheels:
            last = next((line for line in reversed(done.stderr.splitlines()) if line.strip()), "no wheel downloaded")
            raise WheelUnavailable(
                f"pip download --no-deps torch-npu=={version} failed ({last.strip()}); "
                f"set {ENV_VAR} to a torch-npu wheel or an unpacked one"
            )
        digest = wheel_sha256(wheels[0])
        if not pin_of(wheels[0].name, digest):
            raise WheelUnavailable(
                f"pip downloaded {wheels[0].name} (sha256 {digest}), which opkit has no pinned hash for: it is not used; "
                f"to use a wheel you trust, set {ENV_VAR} to it"
            )
        dest = dest_root / f"{version}-{digest[:24]}"
        _unpack(wheels[0], dest, digest)
        return dest


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
    root = _root()
    with _locked(root / version):
        for digest in PINNED_SHA256.get(version, {}).values():
            dest = root / f"{version}-{digest[:24]}"
            if tree_is_intact(dest, digest):
                return Wheel(version, dest, "cache")
        dest = _download(version, root)
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

