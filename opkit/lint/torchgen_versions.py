"""How torchgen's schema parser changed across torch versions: the facts version-aware parse checks need.

op-plugin's codegen parses every ``func`` with the torchgen of the torch it builds against, and only
for the versions in which the entry is active (``op_api``/``acl_op``/``sparse``). opkit runs the
installed torchgen; where it rejects a construct that older torchgens accepted, this table says
which versions still accept it, so an entry gated to those versions is not an error.
Measured: torch 2.13's torchgen no longer knows ``Dimname``; every Dimname entry of the real
op_plugin_functions.yaml is gated to ``[v2.1, v2.12]``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from opkit.formats.version_specs import version_number


@dataclass(frozen=True)
class RemovedType:
    """A schema type torchgen parsed up to and including ``last``."""

    name: str
    last: str
    why: str


REMOVED_TYPES: dict[str, RemovedType] = {
    "Dimname": RemovedType("Dimname", "v2.12", "named-tensor overloads were dropped from torchgen's type grammar in torch 2.13"),
}


@functools.lru_cache(maxsize=1)
def installed_torch_version() -> str | None:
    """``v2.13`` for the installed torch, read from its metadata (never by importing torch)."""
    version = _wheel_version("torch")
    if version is None:  # not a wheel install beside its package: ask importlib.metadata, which scans every distribution
        from importlib import metadata

        try:
            version = metadata.version("torch")
        except metadata.PackageNotFoundError:
            return None
    parts = version.split(".")
    return f"v{parts[0]}.{parts[1]}" if len(parts) >= 2 else None


def _wheel_version(package: str) -> str | None:
    """The ``Version:`` of the ``<package>-*.dist-info`` beside the importable package, or None.

    importlib.metadata finds the same file but first imports the email package and lists every
    distribution on sys.path: a tenth of a cold lint's time, for one line.
    """
    import glob
    import os

    from opkit.installed import package_dir

    directory = package_dir(package)
    if directory is None:
        return None
    site = str(directory.parent)
    for info in glob.glob(os.path.join(glob.escape(site), f"{package}-*.dist-info", "METADATA")):
        try:
            with open(info, encoding="utf-8") as f:
                for line in f:
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
                    if not line.strip():  # the headers end at the first blank line
                        break
        except OSError:
            continue
    return None


def rejecting_versions(removed: RemovedType, versions: Iterable[str]) -> list[str]:
    """The versions among ``versions`` whose torchgen no longer parses ``removed`` (unknown spellings count)."""
    last = version_number(removed.last)
    rejecting = [v for v in versions if (n := version_number(v)) is None or n > last]
    return sorted(rejecting, key=lambda v: version_number(v) or (999, 999))
